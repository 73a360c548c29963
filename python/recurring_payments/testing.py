"""A strict, in-process fake of the whole API, for test suites, Jupyter and the demo.

>>> from recurring_payments.testing import FakeServer
>>> with FakeServer() as server:
...     server.add_link("get-thing", "/things/{id}", templated=True)
...     server.add_resource("/things/1", {"id": 1, "_links": {"self": {"href": "/things/1"}}})
...     server.base_url.startswith("http://127.0.0.1:")
True

It enforces every rule of the protocol: the token endpoint's headers, Basic credentials and
scopes; the same token while it is valid (``expires_in`` reset); ``Accept:
application/hal+json; profile="<profile>"`` (406), a valid bearer token (401), JSON body types
(415) and GET/POST/PATCH only (405), with ``{"code", "message"}`` error bodies.

Error codes: 900 handler failed (500), 901 duplicate (409), 902 not found (404), 903 bad or
expired token (401), 904 access denied (403), 905 method not allowed (405), 906 no acceptable
representation (406), 907 unsupported media type (415), 908 malformed JSON body (400), 909 body
too large (413), 910 invalid parameter (400), 999 failure injected by :meth:`FakeServer.fail_next`.
"""

from __future__ import annotations

import asyncio
import atexit
import dataclasses
import inspect
import json
import secrets
import weakref
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from . import _core
from ._core import SandboxRequest

if TYPE_CHECKING:
    from ._async_client import AsyncClient
    from ._client import Client

__all__ = ["FakeServer", "SandboxRequest"]

# SandboxRequest: a received request: ``method``, ``path``, ``query`` (dict), ``query_list``,
# ``query_string``, ``headers`` (dict, lower-case names), ``body`` (bytes), ``json`` (the parsed
# JSON body or ``None``), ``path_params`` (dict), and for journal entries ``status``, ``error``
# (a failing handler's traceback) and ``time`` (virtual seconds).

HandlerResult = (
    Mapping[str, Any] | list[Any] | None | tuple[int, Any] | tuple[int, Any, Mapping[str, str]]
)
Handler = Callable[[SandboxRequest], HandlerResult | Awaitable[HandlerResult]]


@dataclasses.dataclass(frozen=True)
class _SandboxAppCredentials:
    """App credentials (scope ``api``); stands in until ``recurring_payments.AppCredentials``
    exists. The secret is masked in ``repr()`` and ``str()``."""

    app_name: str
    app_secret: str = dataclasses.field(repr=False)

    def __repr__(self) -> str:
        return f"AppCredentials(app_name={self.app_name!r}, app_secret='***')"

    __str__ = __repr__


def _app_credentials(app_name: str, app_secret: str) -> Any:
    """The library's ``AppCredentials`` when it exists, else the stand-in above."""
    import recurring_payments

    cls = getattr(recurring_payments, "AppCredentials", _SandboxAppCredentials)
    return cls(app_name, app_secret)


async def _completed(awaitable: Awaitable[HandlerResult]) -> HandlerResult:
    return await awaitable


_live: weakref.WeakSet[FakeServer] = weakref.WeakSet()


@atexit.register
def _stop_all() -> None:
    # A server still running at exit could call a Python handler during interpreter shutdown.
    for server in list(_live):
        server.stop()


class FakeServer:
    """The sandbox server: the whole documented protocol on ``127.0.0.1`` (ephemeral port).

    ``FakeServer(token_ttl=960.0, demo=False, *, host="127.0.0.1", port=0)``. ``token_ttl`` is
    the token lifetime in seconds of the virtual clock (see :meth:`advance_clock`). With
    ``demo=True`` it serves the recorded entry point's relations with working creditors, orders,
    mandates (paged), documents (a link array) and merge patches, plus admin-only ``get-apps``
    and ``generate-app-secret`` for ``api_admin`` tokens (see :meth:`add_admin`).
    ``journal_limit`` bounds the request journal (the oldest entries go first).

    Use it as a context manager, or call :meth:`start` and :meth:`stop`. An app is registered
    at creation: :attr:`credentials`. Many servers can run at once.
    """

    def __init__(
        self,
        token_ttl: float = 960.0,
        demo: bool = False,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        journal_limit: int = 100_000,
    ) -> None:
        self._native = _core.SandboxServer(token_ttl, demo, host, port, journal_limit)
        self.demo = demo
        self.token_ttl = token_ttl
        self._credentials = _app_credentials("sandbox-app", secrets.token_urlsafe(18))
        self._native.add_app(self._credentials.app_name, self._credentials.app_secret)

    # -- life cycle ---------------------------------------------------------------------------

    def start(self) -> FakeServer:
        """Start listening (a no-op when running). Returns the server itself."""
        self._native.start()
        _live.add(self)
        return self

    def stop(self) -> None:
        """Stop: frees the port at once, lets requests in flight finish (at most ~2 s), and
        returns when the server task has ended. A no-op when stopped."""
        self._native.stop()
        _live.discard(self)

    def __enter__(self) -> FakeServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        """Whether the server is listening."""
        return self._native.urls is not None

    def _urls(self) -> tuple[str, str, str]:
        urls: tuple[str, str, str] | None = self._native.urls
        if urls is None:
            raise RuntimeError("the FakeServer is not running: call start() or use `with`")
        return urls

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>`` (no trailing slash). Requires a running server."""
        return self._urls()[0]

    @property
    def profile(self) -> str:
        """The profile URL (``{base_url}/alps/v1``) to send in ``Accept``."""
        return self._urls()[1]

    @property
    def rel_namespace(self) -> str:
        """The namespace of service relations (``{base_url}/alps#``)."""
        return self._urls()[2]

    @property
    def credentials(self) -> Any:
        """The app registered at creation (scope ``api``): ``.app_name``, ``.app_secret``."""
        return self._credentials

    def __repr__(self) -> str:
        where = self.base_url if self.running else "stopped"
        return f"<FakeServer {where}{' demo' if self.demo else ''}>"

    # -- what the server knows ----------------------------------------------------------------

    def add_app(self, app_name: str, app_secret: str) -> None:
        """Register app credentials (Basic ``app_name:app_secret``, scope ``api``)."""
        self._native.add_app(app_name, app_secret)

    def add_admin(self, creditor: str, login: str, password: str) -> None:
        """Register a dashboard user (Basic ``creditor#login:password``, scope ``api_admin``)."""
        self._native.add_admin(creditor, login, password)

    def add_link(
        self, rel: str, href: str, templated: bool = False, admin_only: bool = False
    ) -> None:
        """Add (or replace) a link of the entry point ``GET /``.

        ``rel`` is put under :attr:`rel_namespace` unless it contains ``:`` (a full URI or a
        CURIE). An ``href`` starting with ``/`` is served absolute (``{base_url}{href}``).
        ``admin_only`` links are shown to ``api_admin`` tokens only.
        """
        self._native.add_link(rel, href, templated, admin_only)

    def add_resource(self, path: str, document: Mapping[str, Any]) -> None:
        """Serve ``document`` (a JSON object) for GET at ``path``, hrefs as given.

        A later resource or route for the same path and method replaces it.
        """
        if not isinstance(document, Mapping):
            raise TypeError(f"a resource is a JSON object (a dict), not {type(document).__name__}")
        self._native.add_resource(path, json.dumps(document, allow_nan=False))

    def route(self, method: str, path_template: str, handler: Handler) -> None:
        """Answer ``method`` (GET, POST or PATCH) on ``path_template`` with ``handler``.

        The template has whole-segment parameters: ``/things/{id}``. ``handler(request)``
        gets a :data:`SandboxRequest` (``method``, ``path``, ``path_params``, ``query``,
        ``headers``, ``body``, ``json``) and returns a JSON body (200; ``None`` gives 204),
        ``(status, body)`` or ``(status, body, headers)``. Bodies are served as
        ``application/hal+json`` with the server's profile. A handler that raises gives a 500
        with a ``{"code": 900, "message"}`` body; the traceback is in the journal entry's
        ``error``. The request rules (Accept, token, body type) are checked before the
        handler runs. The latest registration for a path and method wins.

        Handlers run in a worker thread, one per request in flight, so they may block; an
        ``async def`` handler is run to completion in its own event loop.
        """
        if not callable(handler):
            raise TypeError("handler must be callable")

        def call(request: SandboxRequest) -> HandlerResult:
            result = handler(request)
            if inspect.isawaitable(result):
                return asyncio.run(_completed(result))
            return result

        self._native.route(method, path_template, call)

    # -- journal ------------------------------------------------------------------------------

    @property
    def requests(self) -> list[SandboxRequest]:
        """Every request received, oldest first (token requests included).

        Entries have ``.method .path .query .headers .body .json`` plus ``.status`` and
        ``.error``. The journal keeps the last ``journal_limit`` requests.
        """
        entries: list[SandboxRequest] = self._native.requests()
        return entries

    @property
    def token_requests(self) -> list[SandboxRequest]:
        """The journal's requests to the token endpoint."""
        entries: list[SandboxRequest] = self._native.token_requests()
        return entries

    def clear_requests(self) -> None:
        """Empty the journal."""
        self._native.clear_requests()

    # -- time ---------------------------------------------------------------------------------

    def expire_tokens(self) -> None:
        """Make every token issued so far expired: the next API request gets a 401."""
        self._native.expire_tokens()

    def advance_clock(self, seconds: float) -> None:
        """Move the virtual clock forward; tokens expire ``token_ttl`` virtual seconds after
        their last (re)issue."""
        self._native.advance_clock(float(seconds))

    @property
    def clock(self) -> float:
        """Virtual seconds since the server was created."""
        seconds: float = self._native.clock()
        return seconds

    # -- faults -------------------------------------------------------------------------------
    # Without `path` a fault hits the next API requests but never the token endpoint; pass
    # path="/oauth/token" to hit that. Each has `count` uses.

    def fail_next(
        self,
        status: int = 503,
        count: int = 1,
        path: str | None = None,
        *,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """Answer the next ``count`` matching requests with ``status`` (400-599) and a
        ``{"code": 999, "message"}`` body, plus ``headers`` (e.g. ``{"Retry-After": "0"}``)."""
        self._native.fail_next(status, count, path, list((headers or {}).items()))

    def drop_next(self, count: int = 1, path: str | None = None) -> None:
        """Close the connection of the next ``count`` matching requests without answering."""
        self._native.drop_next(count, path)

    def delay_next(self, seconds: float, count: int = 1, path: str | None = None) -> None:
        """Hold the answer (headers included) to the next ``count`` matching requests for
        ``seconds`` of real time."""
        self._native.delay_next(float(seconds), count, path)

    def malformed_next(self, count: int = 1, path: str | None = None) -> None:
        """Answer the next ``count`` matching requests 200 with a body that is not valid JSON."""
        self._native.malformed_next(count, path)

    def respond_next(
        self,
        body: bytes | str = b"",
        status: int = 200,
        headers: Mapping[str, str] | None = None,
        *,
        count: int = 1,
        path: str | None = None,
        repeat: int = 1,
        cut_after: int | None = None,
        chunk_delay: float = 0.0,
        chunked: bool = False,
    ) -> None:
        """Answer the next ``count`` matching requests byte for byte: ``status`` (200-599),
        the HAL ``Content-Type`` unless ``headers`` has one, ``headers``, and ``body`` (bytes,
        or str sent as UTF-8) repeated ``repeat`` times.

        The body is streamed one ``body`` chunk at a time, so ``body=b"x" * 65536,
        repeat=1280`` sends 80 MiB without holding it. ``cut_after=n`` sends only the first
        ``n`` bytes, then aborts the connection (``Content-Length`` still announces the
        whole). ``chunk_delay`` pauses that many seconds before each chunk but the first (a
        slow body). ``chunked=True`` uses chunked transfer encoding instead of
        ``Content-Length``. ``Content-Length`` and ``Transfer-Encoding`` cannot be given.
        """
        data = body.encode() if isinstance(body, str) else bytes(body)
        self._native.respond_next(
            status,
            list((headers or {}).items()),
            data,
            count,
            path,
            repeat,
            cut_after,
            float(chunk_delay),
            chunked,
        )

    def clear_faults(self) -> None:
        """Disarm every pending fault."""
        self._native.clear_faults()

    def client(self, **overrides: Any) -> Client:
        """A :class:`recurring_payments.Client` wired to this server (its app credentials,
        profile and namespace); keyword arguments override the constructor's."""
        from ._client import Client

        return Client(self.base_url, **self._client_settings(overrides))

    def async_client(self, **overrides: Any) -> AsyncClient:
        """A :class:`recurring_payments.AsyncClient` wired to this server, like :meth:`client`."""
        from ._async_client import AsyncClient

        return AsyncClient(self.base_url, **self._client_settings(overrides))

    def _client_settings(self, overrides: Mapping[str, Any]) -> dict[str, Any]:
        settings: dict[str, Any] = {
            "credentials": self.credentials,
            "profile": self.profile,
            "rel_namespace": self.rel_namespace,
        }
        settings.update(overrides)
        return settings
