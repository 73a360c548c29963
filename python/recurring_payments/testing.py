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
(415) and GET/POST/PATCH only (405), with ``{"code", "message"}`` error bodies. Every resource
it serves carries a strong ``ETag``, and a PATCH of a demo resource honours ``If-Match`` (412).

Error codes: 900 handler failed (500), 901 duplicate (409), 902 not found (404), 903 bad or
expired token (401), 904 access denied (403), 905 method not allowed (405), 906 no acceptable
representation (406), 907 unsupported media type (415), 908 malformed JSON body (400), 909 body
too large (413), 910 invalid parameter (400), 911 precondition failed (412: ``If-Match``), 999
failure injected by :meth:`FakeServer.fail_next`.
"""

from __future__ import annotations

import asyncio
import atexit
import inspect
import json
import secrets
import weakref
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from . import _core
from ._core import SandboxRequest
from ._credentials import AppCredentials
from ._sandbox_args import (
    U32,
    U64,
    check_bool,
    check_headers,
    check_int,
    check_path,
    check_seconds,
    check_served,
    check_str,
)
from ._sandbox_notify import post_notification

if TYPE_CHECKING:
    from ._async_client import AsyncClient
    from ._client import Client

__all__ = ["FakeServer", "SandboxRequest"]

# SandboxRequest: a received request: ``method``, ``path``, ``query`` (dict), ``query_list``,
# ``query_string``, ``headers`` (dict, lower-case names), ``body`` (bytes), ``json`` (the parsed
# JSON body or ``None``), ``path_params`` (dict), and for journal entries ``status``, ``error``
# (a failing handler's traceback) and ``time`` (virtual seconds).

# FakeServer's defaults, written here once (the command line's `serve` takes them from here).
DEFAULT_TOKEN_TTL = 960.0
DEFAULT_HOST = "127.0.0.1"
DEFAULT_JOURNAL_LIMIT = 100_000

HandlerResult = (
    Mapping[str, Any] | list[Any] | None | tuple[int, Any] | tuple[int, Any, Mapping[str, str]]
)
Handler = Callable[[SandboxRequest], HandlerResult | Awaitable[HandlerResult]]


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
    the token lifetime in seconds of the virtual clock (see :meth:`advance_clock`), announced
    as ``expires_in`` rounded up. ``token_ttl=0`` announces ``expires_in: 0``; such tokens are
    accepted until :meth:`expire_tokens` (the clock does not end them), so a test can check
    that a client uses one for the requests that waited for it. With
    ``demo=True`` it serves the recorded entry point's relations with working creditors, orders,
    mandates (paged), documents (a link array) and merge patches, plus admin-only ``get-apps``
    and ``generate-app-secret`` for ``api_admin`` tokens (see :meth:`add_admin`).
    ``journal_limit`` bounds the request journal (the oldest entries go first).

    With ``tls=True`` it serves HTTPS (``https://127.0.0.1:<port>``) with a server certificate
    for ``localhost``, ``127.0.0.1`` and ``::1`` signed by a CA made up at each start, whose
    PEM file is :attr:`ca_path` (removed on stop). :meth:`client` trusts that CA
    (``verify=ca_path``) unless told otherwise.

    Use it as a context manager, or call :meth:`start` and :meth:`stop`. An app is registered
    at creation: :attr:`credentials`. Many servers can run at once.

    >>> with FakeServer(demo=True) as server:
    ...     with server.client() as client:
    ...         print(client.get_creditors(reference="democreditor")["name"])
    ...     print(len(server.requests), "requests")
    Demo Creditor SAS
    3 requests

    **ETags and conditional updates.** Every resource served (a 200 or 201 with a body: the
    entry point, :meth:`add_resource` documents, demo resources, :meth:`route` answers) carries
    a strong ``ETag`` derived from the bytes served: equal for equal representations (a GET
    and the 201 of the POST that created it), changed by any change. A PATCH of a demo order
    with ``If-Match`` (RFC 9110 §13.1.1, strong comparison) is applied only when a listed tag
    is the order's current one (or ``*`` and the order exists); otherwise the answer is 412
    ``{"code": 911}`` and nothing changes. ``W/"..."`` tags never match; a malformed value
    matches nothing. GET and POST ignore ``If-Match``; :meth:`route` handlers judge it
    themselves.

    >>> with FakeServer(demo=True) as sandbox, sandbox.client() as api:
    ...     order = api.create_orders.post({"reference": "o-1"})
    ...     print(order.etag, order.etag == api.get(order.url).etag)
    ...     patched = api.patch(order.url, {"started": True})
    ...     print(patched.etag != order.etag, patched.etag == api.get(order.url).etag)
    "...-..." True
    True True
    """

    def __init__(
        self,
        token_ttl: float = DEFAULT_TOKEN_TTL,
        demo: bool = False,
        *,
        host: str = DEFAULT_HOST,
        port: int = 0,
        journal_limit: int = DEFAULT_JOURNAL_LIMIT,
        tls: bool = False,
    ) -> None:
        self._native = _core.SandboxServer(
            check_seconds("token_ttl", token_ttl),
            check_bool("demo", demo),
            check_str("host", host),
            check_int("port", port, 0, 65535),
            check_int("journal_limit", journal_limit, 0, U32),
            check_bool("tls", tls),
        )
        self.demo = demo
        self.tls = tls
        self.token_ttl = token_ttl
        self._credentials = AppCredentials("sandbox-app", secrets.token_urlsafe(18))
        self._native.add_app(self._credentials.app_name, self._credentials.app_secret)

    # -- life cycle ---------------------------------------------------------------------------

    def start(self) -> FakeServer:
        """Start listening (a no-op when running). Returns the server itself.

        >>> other = FakeServer().start()
        >>> other.running, other.base_url.startswith("http://127.0.0.1:")
        (True, True)
        >>> other.stop()
        """
        self._native.start()
        _live.add(self)
        return self

    def stop(self) -> None:
        """Stop: frees the port at once, lets requests in flight finish (at most ~2 s), and
        returns when the server task has ended. A no-op when stopped.

        >>> server.stop()
        >>> server.running, server
        (False, <FakeServer stopped demo>)
        """
        self._native.stop()
        _live.discard(self)

    def __enter__(self) -> FakeServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        """Whether the server is listening.

        >>> server.running, FakeServer().running
        (True, False)
        """
        return self._native.urls is not None

    def _urls(self) -> tuple[str, str, str]:
        urls: tuple[str, str, str] | None = self._native.urls
        if urls is None:
            raise RuntimeError("the FakeServer is not running: call start() or use `with`")
        return urls

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>`` (``https://`` with ``tls=True``; no trailing slash).
        Requires a running server.

        >>> server.base_url
        'http://127.0.0.1:...'
        """
        return self._urls()[0]

    @property
    def profile(self) -> str:
        """The profile URL (``{base_url}/alps/v1``) to send in ``Accept``.

        >>> server.profile == server.base_url + "/alps/v1"
        True
        """
        return self._urls()[1]

    @property
    def rel_namespace(self) -> str:
        """The namespace of service relations (``{base_url}/alps#``).

        >>> server.rel_namespace == server.base_url + "/alps#"
        True
        """
        return self._urls()[2]

    @property
    def ca_path(self) -> str:
        """With ``tls=True``: the path of the CA certificate (PEM) that signed the server's
        certificate, to pass as ``verify=`` or ``SSL_CERT_FILE``. Requires a running server.

        >>> with FakeServer(tls=True) as secure:
        ...     secure.base_url.startswith("https://"), secure.client().root().status
        (True, 200)
        """
        self._urls()
        path: str | None = self._native.ca_path
        if path is None:
            raise RuntimeError("the FakeServer serves plain HTTP: create it with tls=True")
        return path

    @property
    def credentials(self) -> AppCredentials:
        """The app registered at creation (scope ``api``): ``.app_name``, ``.app_secret``.

        >>> server.credentials
        AppCredentials(app_name='sandbox-app', app_secret='***')
        """
        return self._credentials

    def __repr__(self) -> str:
        where = self.base_url if self.running else "stopped"
        return f"<FakeServer {where}{' demo' if self.demo else ''}>"

    # -- what the server knows ----------------------------------------------------------------

    def add_app(self, app_name: str, app_secret: str) -> None:
        """Register app credentials (Basic ``app_name:app_secret``, scope ``api``).

        >>> server.add_app("shop-app", "s3cr3t")
        >>> server.client(credentials=rp.AppCredentials("shop-app", "s3cr3t")).authenticate()
        Token(scope="api", jti="...", expires_in=960)
        """
        self._native.add_app(check_str("app_name", app_name), check_str("app_secret", app_secret))

    def add_admin(self, creditor: str, login: str, password: str) -> None:
        """Register a dashboard user (Basic ``creditor#login:password``, scope ``api_admin``).

        >>> server.add_admin("democreditor", "admin", "pw")
        >>> admin = server.client(credentials=rp.AdminCredentials("democreditor", "admin", "pw"))
        >>> admin.authenticate().scope
        'api_admin'
        """
        self._native.add_admin(
            check_str("creditor", creditor),
            check_str("login", login),
            check_str("password", password),
        )

    def add_link(
        self, rel: str, href: str, templated: bool = False, admin_only: bool = False
    ) -> None:
        """Add (or replace) a link of the entry point ``GET /``.

        ``rel`` is put under :attr:`rel_namespace` unless it contains ``:`` (a full URI or a
        CURIE). An ``href`` starting with ``/`` is served absolute (``{base_url}{href}``).
        ``admin_only`` links are shown to ``api_admin`` tokens only.

        >>> server.add_link("get-thing", "/things/{id}", templated=True)
        >>> client.get_thing
        <Link get-thing http://127.0.0.1:.../things/{id} (templated)>
        """
        self._native.add_link(
            check_str("rel", rel),
            check_str("href", href),
            check_bool("templated", templated),
            check_bool("admin_only", admin_only),
        )

    def add_resource(self, path: str, document: Mapping[str, Any]) -> None:
        """Serve ``document`` (a JSON object) for GET at ``path``, hrefs as given.

        A later resource or route for the same path and method replaces it.

        >>> server.add_resource("/things/1", {"id": 1, "_links": {"self": {"href": "/things/1"}}})
        >>> client.get("/things/1")
        <Resource http://127.0.0.1:.../things/1 status=200 state=[id] links=1>
        """
        if not isinstance(document, Mapping):
            raise TypeError(
                f"document must be a JSON object (a dict), not {type(document).__name__}"
            )
        try:
            text = json.dumps(document, allow_nan=False)
        except TypeError as exc:
            raise TypeError(f"document must hold JSON values only: {exc}") from None
        except ValueError as exc:  # NaN or an infinity; a circular reference
            raise ValueError(f"document must hold JSON values only: {exc}") from None
        self._native.add_resource(check_served("path", path), text)

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

        A 200 or 201 answer with a body gets a strong ``ETag`` of the bytes served unless the
        handler returns its own ``ETag`` header. ``If-Match`` is not judged for a handler: it
        sees the header in ``request.headers["if-match"]`` and answers what it likes (e.g.
        ``412, {"code": 911, "message": "precondition failed"}``).

        Handlers run in a worker thread, one per request in flight, so they may block; an
        ``async def`` handler is run to completion in its own event loop.

        >>> def create_thing(request):
        ...     thing = {"id": 7, **request.json, "_links": {"self": {"href": "/things/7"}}}
        ...     return 201, thing, {"Location": "/things/7"}
        >>> server.route("POST", "/things", create_thing)
        >>> thing = client.post("/things", {"name": "lamp"})
        >>> thing.status, thing["name"], thing.url
        (201, 'lamp', 'http://127.0.0.1:.../things/7')
        """
        check_str("method", method)
        check_served("path_template", path_template)
        if not callable(handler):
            raise TypeError(
                f"handler must be callable (request) -> body, not {type(handler).__name__}"
            )

        def call(request: SandboxRequest) -> HandlerResult:
            result = handler(request)
            if inspect.isawaitable(result):
                return asyncio.run(_completed(result))
            return result

        self._native.route(method, path_template, call)

    # -- notifications ------------------------------------------------------------------------

    def notification_body(self, path: str) -> bytes:
        """The body the API would POST to an app's notification URL for the resource at
        ``path`` (a path, optionally with a query): the document a GET of ``path`` serves, its
        ``self`` link included (one is added to a document without it). Nothing is journaled
        and no token is needed. A path the sandbox serves no document at (nothing there, no
        GET, an error or an empty answer) is a ``ValueError``.

        Hand it to your view through your framework's test client, then check what the view
        did with ``client.verify_notification(body)`` (see the guide "Notifications"):

        >>> body = server.notification_body("/creditors/democreditor")
        >>> client.parse_notification(body).url == server.base_url + "/creditors/democreditor"
        True
        >>> server.notification_body("/nowhere")
        Traceback (most recent call last):
        ...
        ValueError: the sandbox serves no document at "/nowhere" to notify about (no resource there)
        """
        self._urls()
        target = check_str("path", path)
        if not target.startswith("/"):
            raise ValueError(f"path must start with '/', not {target!r}")
        body: bytes = self._native.notification_body(target)
        return body

    def notify(self, url: str, path: str) -> int:
        """POST :meth:`notification_body` of ``path`` to ``url`` (your app's notification URL,
        ``http://`` or ``https://``) as the API would: ``Content-Type: application/hal+json;
        profile="<profile>"``. Returns the status your app answered, whatever it is (a 500 is
        returned, not raised); a redirect is not followed. A connection that fails raises
        ``OSError``; a path the sandbox serves nothing at is a ``ValueError``.

        >>> import threading
        >>> from http.server import BaseHTTPRequestHandler, HTTPServer
        >>> class App(BaseHTTPRequestHandler):  # stands for your app's notification view
        ...     def do_POST(self):
        ...         self.rfile.read(int(self.headers["Content-Length"]))
        ...         self.send_response(204)
        ...         self.end_headers()
        ...     def log_message(self, *args):
        ...         pass
        >>> app = HTTPServer(("127.0.0.1", 0), App)
        >>> threading.Thread(target=app.handle_request).start()  # one request, then it ends
        >>> server.notify(f"http://127.0.0.1:{app.server_port}/hooks", "/creditors/democreditor")
        204
        >>> app.server_close()
        """
        return post_notification(url, self.notification_body(path), self.profile)

    # -- journal ------------------------------------------------------------------------------

    @property
    def requests(self) -> list[SandboxRequest]:
        """Every request received, oldest first (token requests included).

        Entries have ``.method .path .query .headers .body .json`` plus ``.status`` and
        ``.error``. The journal keeps the last ``journal_limit`` requests.

        >>> _ = client.get_creditors(reference="democreditor")
        >>> server.requests
        [<SandboxRequest POST /oauth/token -> 200>, <SandboxRequest GET / -> 200>,
         <SandboxRequest GET /creditors?reference=democreditor -> 200>]
        >>> server.requests[-1].query
        {'reference': 'democreditor'}
        """
        entries: list[SandboxRequest] = self._native.requests()
        return entries

    @property
    def token_requests(self) -> list[SandboxRequest]:
        """The journal's requests to the token endpoint.

        >>> _ = client.root()
        >>> [(r.method, r.path, r.status) for r in server.token_requests]
        [('POST', '/oauth/token', 200)]
        """
        entries: list[SandboxRequest] = self._native.token_requests()
        return entries

    def clear_requests(self) -> None:
        """Empty the journal.

        >>> _ = client.root()
        >>> server.clear_requests()
        >>> server.requests
        []
        """
        self._native.clear_requests()

    # -- time ---------------------------------------------------------------------------------

    def expire_tokens(self) -> None:
        """Make every token issued so far expired (those of ``token_ttl=0`` included): the
        next API request gets a 401.

        The client then fetches a new token and replays the request, once:

        >>> _ = client.root()
        >>> server.expire_tokens()
        >>> _ = client.root(refresh=True)
        >>> [(r.path, r.status) for r in server.requests]
        [('/oauth/token', 200), ('/', 200), ('/', 401), ('/oauth/token', 200), ('/', 200)]
        """
        self._native.expire_tokens()

    def advance_clock(self, seconds: float) -> None:
        """Move the virtual clock forward; tokens expire ``token_ttl`` virtual seconds after
        their last (re)issue.

        >>> before = client.authenticate()
        >>> server.advance_clock(120)
        >>> server.clock >= 120
        True
        """
        self._native.advance_clock(check_seconds("seconds", seconds))

    @property
    def clock(self) -> float:
        """Virtual seconds since the server was created.

        >>> server.advance_clock(60)
        >>> 60 <= server.clock < 70
        True
        """
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
        ``{"code": 999, "message"}`` body, plus ``headers`` (e.g. ``{"Retry-After": "0"}``):
        ``fail_next(429, headers={"Retry-After": "1"})`` is a rate limit, ``fail_next(412)``
        a failed precondition. The request is not processed.

        A GET is retried (``retries``) and succeeds; a POST never is:

        >>> server.fail_next(503, count=1, headers={"Retry-After": "0"})
        >>> client.root().status
        200
        >>> [(r.path, r.status) for r in server.requests[1:]]
        [('/', 503), ('/', 200)]
        """
        self._native.fail_next(
            check_int("status", status, 400, 599),
            check_int("count", count, 1, U32),
            check_path(path),
            check_headers(headers),
        )

    def drop_next(self, count: int = 1, path: str | None = None) -> None:
        """Close the connection of the next ``count`` matching requests without answering.

        >>> server.drop_next(count=1, path="/")
        >>> client.root().status  # a GET is retried after a connection error
        200
        >>> [r.status for r in server.requests if r.path == "/"]
        [None, 200]
        """
        self._native.drop_next(check_int("count", count, 1, U32), check_path(path))

    def delay_next(self, seconds: float, count: int = 1, path: str | None = None) -> None:
        """Hold the answer (headers included) to the next ``count`` matching requests for
        ``seconds`` of real time.

        >>> server.delay_next(0.2)
        >>> server.client(timeout=0.05, retries=0).root()
        Traceback (most recent call last):
        ...
        recurring_payments.errors.TimeoutError: GET http://127.0.0.1:.../: timed out: ...
        """
        self._native.delay_next(
            check_seconds("seconds", seconds), check_int("count", count, 1, U32), check_path(path)
        )

    def malformed_next(self, count: int = 1, path: str | None = None) -> None:
        """Answer the next ``count`` matching requests 200 with a body that is not valid JSON.

        >>> server.malformed_next()
        >>> client.root()
        Traceback (most recent call last):
        ...
        recurring_payments.errors.ProtocolError: GET http://...: response body is not valid ...
        """
        self._native.malformed_next(check_int("count", count, 1, U32), check_path(path))

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
        The request is not processed: ``respond_next(b"{}", status=302, headers={"Location":
        "/x"}, path="/orders")`` answers a POST with a redirect without creating an order.
        No ``ETag`` is added.

        >>> server.respond_next(b"\\xff not UTF-8", path="/creditors")
        >>> client.get("/creditors")
        Traceback (most recent call last):
        ...
        recurring_payments.errors.ProtocolError: ...
        """
        if isinstance(body, str):
            data = body.encode()
        elif isinstance(body, (bytes, bytearray, memoryview)):
            data = bytes(body)
        else:
            raise TypeError(f"body must be bytes or str, not {type(body).__name__}")
        reply = {
            "status": check_int("status", status, 200, 599),
            "headers": check_headers(headers),
            "body": data,
            "repeat": check_int("repeat", repeat, 1, U64),
            "cut_after": None if cut_after is None else check_int("cut_after", cut_after, 0, U64),
            "chunk_delay": check_seconds("chunk_delay", chunk_delay),
            "chunked": check_bool("chunked", chunked),
        }
        self._native.respond_next(reply, check_int("count", count, 1, U32), check_path(path))

    def clear_faults(self) -> None:
        """Disarm every pending fault.

        >>> server.fail_next(500, count=10)
        >>> server.clear_faults()
        >>> client.root().status
        200
        """
        self._native.clear_faults()

    def client(self, **overrides: Any) -> Client:
        """A :class:`recurring_payments.Client` wired to this server (its app credentials,
        profile and namespace); keyword arguments override the constructor's.

        >>> with server.client(timeout=5.0, retries=0) as client:
        ...     client.get_creditors(reference="democreditor")["name"]
        'Demo Creditor SAS'
        """
        from ._client import Client

        return Client(self.base_url, **self._client_settings(overrides))

    def async_client(self, **overrides: Any) -> AsyncClient:
        """A :class:`recurring_payments.AsyncClient` wired to this server, like :meth:`client`.

        >>> async def main():
        ...     async with server.async_client(timeout=5.0) as client:
        ...         return (await client.get_creditors(reference="democreditor"))["name"]
        >>> asyncio.run(main())
        'Demo Creditor SAS'
        """
        from ._async_client import AsyncClient

        return AsyncClient(self.base_url, **self._client_settings(overrides))

    def _client_settings(self, overrides: Mapping[str, Any]) -> dict[str, Any]:
        settings: dict[str, Any] = {
            "credentials": self.credentials,
            "profile": self.profile,
            "rel_namespace": self.rel_namespace,
        }
        if self.tls:
            settings["verify"] = self.ca_path
        settings.update(overrides)
        return settings
