"""The native core of recurring_payments (Rust, PyO3). Import the public API from the package."""

from collections.abc import Awaitable, Mapping, Sequence
from typing import Any, final

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
    def authenticate_async(self) -> Awaitable[Token]:
        """``authenticate`` as an awaitable; call it from a coroutine of the running loop."""
    def request_async(
        self, method: str, url: str, body: Any = None
    ) -> Awaitable[tuple[int, str, list[tuple[str, str]], dict[str, Any] | None]]:
        """``request`` as an awaitable; call it from a coroutine of the running loop.
        Cancelling the awaiting task cancels the request."""

@final
class RelIndex:
    """The names of a resource's relations (rels), built once and looked up many times.

    A rel such as ``https://api.example.com/alps#get-creditors`` is reachable by the full rel,
    by its short name ``get-creditors`` (the rest after ``namespace``; with ``namespace=None``,
    the part after ``#`` of any ``<uri>#<name>`` rel), and by the attribute form
    ``get_creditors`` (hyphens become underscores). IANA rels (``self``, ``next``,
    ``edit-form``, ...) are used as they are. A CURIE ``(name, href)`` such as
    ``("ex", "https://x/rels/{rel}")`` makes ``ex:thing`` and ``https://x/rels/thing`` name the
    same rel, and ``thing`` too.

    Full rels and CURIE forms win over short names, which win over attribute forms. Two rels
    with one short name make that name ambiguous; each stays reachable by its full rel.
    """

    def __new__(
        cls,
        rels: Sequence[str],
        curies: Sequence[tuple[str, str]] = ...,
        namespace: str | None = None,
    ) -> RelIndex:
        """Index ``rels`` (duplicates are ignored).

        ``curies`` are ``(name, href)`` pairs whose ``href`` contains ``{rel}``; ``namespace``
        is the rel namespace, e.g. ``"https://api.example.com/alps#"`` (``None`` or ``""``
        infers it per rel).
        """

    def find(self, name: str) -> str | None:
        """The full rel ``name`` designates, or ``None`` if none.

        Raises ``LinkNotFoundError`` if ``name`` is ambiguous, naming the candidate rels.
        """

    def resolve(self, name: str) -> str:
        """The full rel ``name`` designates.

        Raises ``LinkNotFoundError`` (also an ``AttributeError`` and a ``KeyError``) if there is
        none, with a did-you-mean and the available names, or if ``name`` is ambiguous.
        """

    def attribute_names(self) -> list[str]:
        """Names usable as attributes (for ``dir()`` and tab completion), sorted: the attribute
        form of every name that designates exactly one rel."""

    def short_name(self, rel: str) -> str | None:
        """The shortest unambiguous name of the full rel ``rel``, for display: its short name,
        else its CURIE form, else ``rel`` itself. ``None`` if ``rel`` is not in the index."""
