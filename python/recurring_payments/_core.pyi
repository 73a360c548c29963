# Stubs of the native module (src/py/). The sandbox classes are wrapped by
# recurring_payments.testing.FakeServer, whose docstrings are the user documentation.
from collections.abc import Callable, Mapping
from typing import Any, final

__version__: str

def expand_uri_template(template: str, variables: Mapping[str, Any]) -> str:
    """Expand an RFC 6570 template (levels 1-4) with a mapping of variables."""

def template_variables(template: str) -> list[str]:
    """The variable names a template declares, in order; `TemplateError` if it is malformed."""

@final
class SandboxRequest:
    """A request the sandbox received: a journal entry, or what a route handler is given."""

    @property
    def method(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def query(self) -> dict[str, str]:
        """Decoded query parameters; the first value of a repeated name."""
    @property
    def query_list(self) -> list[tuple[str, str]]:
        """Every decoded query pair, in order."""
    @property
    def query_string(self) -> str: ...
    @property
    def headers(self) -> dict[str, str]:
        """Lower-case names; repeated headers joined with ", "."""
    @property
    def body(self) -> bytes: ...
    @property
    def json(self) -> Any:
        """The body parsed as JSON when it was sent as JSON, else `None`."""
    @property
    def path_params(self) -> dict[str, str]: ...
    @property
    def status(self) -> int | None:
        """The status answered (`None` before the answer, or when the connection was dropped)."""
    @property
    def error(self) -> str | None:
        """A failing handler's traceback."""
    @property
    def time(self) -> float:
        """Virtual time of arrival (seconds since the server was created)."""

@final
class SandboxServer:
    """The native sandbox server; use `recurring_payments.testing.FakeServer`."""

    def __new__(
        cls,
        token_ttl: float = 960.0,
        demo: bool = False,
        host: str = "127.0.0.1",
        port: int = 0,
        journal_limit: int = 100_000,
    ) -> SandboxServer: ...
    def start(self) -> tuple[str, str, str]:
        """Start serving; returns `(base_url, profile, rel_namespace)`."""
    def stop(self) -> None: ...
    @property
    def urls(self) -> tuple[str, str, str] | None:
        """`(base_url, profile, rel_namespace)` while running, else `None`."""
    def add_app(self, app_name: str, app_secret: str) -> None: ...
    def add_admin(self, creditor: str, login: str, password: str) -> None: ...
    def add_link(self, rel: str, href: str, templated: bool, admin_only: bool) -> None: ...
    def add_resource(self, path: str, document: str) -> None:
        """`document` is the JSON text of the resource (the wrapper serializes it)."""
    def route(
        self, method: str, path_template: str, handler: Callable[[SandboxRequest], Any]
    ) -> None: ...
    def requests(self) -> list[SandboxRequest]: ...
    def token_requests(self) -> list[SandboxRequest]: ...
    def clear_requests(self) -> None: ...
    def expire_tokens(self) -> None: ...
    def advance_clock(self, seconds_: float) -> None: ...
    def clock(self) -> float:
        """Virtual seconds since the server was created."""
    def fail_next(
        self, status: int, count_: int, path: str | None, headers: list[tuple[str, str]]
    ) -> None: ...
    def drop_next(self, count_: int, path: str | None) -> None: ...
    def delay_next(self, seconds_: float, count_: int, path: str | None) -> None: ...
    def malformed_next(self, count_: int, path: str | None) -> None: ...
    def clear_faults(self) -> None: ...
