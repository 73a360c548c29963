"""The native core of recurring_payments (Rust, PyO3). Import the public API from the package."""

from collections.abc import Mapping
from typing import Any

__version__: str

def expand_uri_template(template: str, variables: Mapping[str, Any]) -> str:
    """Expand an RFC 6570 template; raises TemplateError when it is malformed."""

def template_variables(template: str) -> list[str]:
    """The variable names a template declares, in order of first appearance."""

class Token:
    """An access token. Its ``repr()`` never shows the token itself."""

    @property
    def scope(self) -> str:
        """``api`` or ``api_admin``."""
    @property
    def jti(self) -> str:
        """The token identifier (a UUID)."""
    @property
    def token_type(self) -> str:
        """``bearer``."""
    @property
    def expires_at(self) -> float:
        """When the token runs out, in seconds since the epoch."""
    @property
    def expires_in(self) -> float:
        """Seconds of validity left."""

class NativeClient:
    """The Rust client behind ``recurring_payments.Client`` (internal)."""

    def __init__(
        self,
        base_url: str,
        *,
        credentials: Any,
        profile: str,
        timeout: float,
        connect_timeout: float,
        retries: int,
        token_leeway: float,
        max_response_size: int,
        allow_http: bool,
        verify: Any,
        user_agent: str,
        logger: Any,
    ) -> None: ...
    @property
    def token(self) -> Token | None: ...
    def authenticate(self) -> Token: ...
    def resolve(self, reference: str) -> str: ...
    def is_api_origin(self, url: str) -> bool: ...
    def request(
        self, method: str, url: str, body: Any = None
    ) -> tuple[int, str, list[tuple[str, str]], dict[str, Any] | None]: ...

class RelIndex:
    """Relation names of one resource: full, short, attribute and CURIE forms."""

    def __init__(
        self, rels: list[str], curies: list[tuple[str, str]], namespace: str | None
    ) -> None: ...
    def find(self, name: str) -> str | None: ...
    def resolve(self, name: str) -> str: ...
    def attribute_names(self) -> list[str]: ...
    def short_name(self, rel: str) -> str | None: ...
