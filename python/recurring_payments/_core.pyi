"""The native core of recurring_payments (Rust, PyO3). Import the public API from the package."""

from collections.abc import (
    Awaitable,
    Callable,
    ItemsView,
    Iterable,
    Iterator,
    KeysView,
    Mapping,
    Sequence,
    ValuesView,
)
from typing import Any, final

from typing_extensions import Self, disjoint_base

__all__ = [
    "AttemptRecord",
    "CallOptions",
    "Document",
    "Links",
    "NativeClient",
    "RelCache",
    "RelIndex",
    "SandboxRequest",
    "SandboxServer",
    "StoreRecord",
    "Token",
    "_LinkCore",
    "_ResourceCore",
    "__version__",
    "expand_target",
    "expand_uri_template",
    "resource_items",
    "template_variables",
    "track",
]

__version__: str

def expand_uri_template(template: str, variables: Mapping[str, Any]) -> str:
    """Expand an RFC 6570 template (levels 1-4) with a mapping of variables."""

def expand_target(
    base_url: str,
    href: str,
    variables: Mapping[str, Any] | None = None,
    templated: bool | None = None,
    name: str | None = None,
) -> str:
    """The href a link or call addresses: `href` checked, expanded with `variables` and resolved
    against `base_url` (what `send` would request), without a client. `Link.expand` uses it."""

def template_variables(template: str) -> list[str]:
    """The variable names a template declares, in order; `TemplateError` if it is malformed."""

def resource_items(
    cls: type[Any], session: Any, documents: list[Any], curies: Any, untracked: bool
) -> list[Any]:
    """The resources of an embedded array: for each of `documents`, what
    `cls(session, document, partial=True, curies=curies)` makes, without running Python.

    With `untracked`, each item is untracked by the cycle collector as soon as it is made, so
    that none is ever in a generation: the collections a 5,000-item page triggers then find
    nothing to traverse and promote, and trigger no full collection of the whole heap (~20 ms
    in a process with a large heap, BENCHMARKS.md). The caller vouches that an item of `cls`
    keeps nothing more than this base does until it is tracked again (`track`)."""

@disjoint_base
class _LinkCore:
    """A link's fields, under the names `_LinkBase` had as slots."""

    _session: Any
    rel: str
    href: str
    templated: bool
    title: str | None
    name: str | None
    type: str | None
    profile: str | None
    deprecation: str | None
    hreflang: str | None
    def __new__(cls, *_args: Any, **_kwargs: Any) -> Self: ...
    @classmethod
    def _plain(cls, session: Any, rel: str, href: str, templated: bool) -> Self:
        """A link of `cls` with `href` and `templated` alone (what `_LinkBase._plain` makes)."""
    def _declared(self) -> list[str]:
        """The names of the template's variables, in order (none for a plain link), read from
        the template kept with the link; `TemplateError` if it is malformed."""
    def _call(self, *positional: Any, **variables: Any) -> Any:
        """GET this link; same as :meth:`get`. Template variables are keyword arguments.

        >>> client.get_creditors(reference="democreditor").status
        200
        >>> client.get_creditors("democreditor")
        Traceback (most recent call last):
        ...
        TypeError: ... as keyword arguments: get_creditors(reference=...)
        """

@disjoint_base
class _ResourceCore:
    """What every resource holds, under the names `_ResourceBase` reads; `url` is the resolved
    `self` href, kept once read."""

    _session: Any
    _doc: Any
    _status: int | None
    _headers: Any
    _partial: bool
    _inherited: Any
    _link_map: Any
    _embedded_map: Any
    _index: Any
    _attributes: Any
    def __new__(
        cls,
        session: Any,
        document: Any,
        status: int | None = None,
        headers: Any = None,
        partial: bool = False,
        curies: Any = None,
    ) -> Self: ...
    def __getitem__(self, key: Any, /) -> Any: ...
    def get(self, key: Any, default: Any = None, /) -> Any:
        """The value of the state's field ``key``, or ``default`` when there is none.

        >>> creditor = client.get_creditors(reference="democreditor")
        >>> creditor.get("name"), creditor.get("missing"), creditor.get("_links", 0)
        ('Demo Creditor SAS', None, 0)
        """
    def __contains__(self, key: object, /) -> bool: ...
    def __iter__(self) -> Iterator[str]: ...
    def __len__(self) -> int: ...
    def keys(self) -> KeysView[str]:
        """The state's names (a view, as a mapping's ``keys()``), in document order, made in one
        call rather than one lookup a name.

        >>> list(client.get_creditors(reference="democreditor").keys())
        ['reference', 'name']
        """
    def values(self) -> ValuesView[Any]:
        """The state's values (a view of a new ``dict`` of the state, as :attr:`data` makes it).

        >>> list(client.get_creditors(reference="democreditor").values())
        ['democreditor', 'Demo Creditor SAS']
        """
    def items(self) -> ItemsView[str, Any]:
        """The state's ``(name, value)`` pairs (a view of a new ``dict`` of the state, as
        :attr:`data` makes it): one call for the whole state.

        >>> dict(client.get_creditors(reference="democreditor").items())
        {'reference': 'democreditor', 'name': 'Demo Creditor SAS'}
        """
    @property
    def data(self) -> dict[str, Any]:
        """The state as a new ``dict`` (a deep copy: change it freely).

        >>> client.get_creditors(reference="democreditor").data
        {'reference': 'democreditor', 'name': 'Demo Creditor SAS'}
        """
    @property
    def url(self) -> str | None:
        """The absolute ``self`` href (also from an array of one ``self`` link), or ``None``.

        >>> client.get_creditors(reference="democreditor").url
        'http://127.0.0.1:.../creditors/democreditor'
        """

def track(object: Any) -> None:
    """Track `object` again if it is a GC object the collector does not track (else nothing):
    before an untracked item keeps an object through which a cycle could close."""

@final
class Token:
    """An access token (``client.token``, ``client.authenticate()``), renewed by the client as
    needed. Its ``repr()`` never shows the token itself.

    >>> token = client.authenticate()
    >>> token
    Token(scope="api", jti="...", expires_in=960)
    >>> token == client.token
    True
    """

    @property
    def scope(self) -> str:
        """``api`` (app credentials) or ``api_admin`` (admin credentials).

        >>> client.authenticate().scope
        'api'
        """
    @property
    def jti(self) -> str:
        """The token identifier (a UUID), the same in the server's logs.

        >>> len(client.authenticate().jti)
        36
        """
    @property
    def token_type(self) -> str:
        """Always ``bearer``.

        >>> client.authenticate().token_type
        'bearer'
        """
    @property
    def expires_at(self) -> float:
        """When the token runs out, in seconds since the epoch.

        >>> import time
        >>> 900 < client.authenticate().expires_at - time.time() <= 960
        True
        """
    @property
    def expires_in(self) -> float:
        """Seconds of validity left (the client renews the token ``token_leeway`` seconds early).

        >>> round(client.authenticate().expires_in)
        960
        """

@final
class AttemptRecord:
    # One HTTP attempt, as the telemetry recorder reads it: `url` has no userinfo; `start_ns`
    # and `end_ns` are Unix ns; `error_kind` is the exception class name of a failure.
    @property
    def method(self) -> str: ...
    @property
    def url(self) -> str: ...
    @property
    def status(self) -> int | None: ...
    @property
    def start_ns(self) -> int: ...
    @property
    def end_ns(self) -> int: ...
    @property
    def token_request(self) -> bool: ...
    @property
    def resend_count(self) -> int: ...
    @property
    def error_kind(self) -> str | None: ...
    @property
    def request_id(self) -> str | None: ...

@final
class StoreRecord:
    # One command to the token store (docs/guides/fleets.md), as the recorder reads it.
    @property
    def op(self) -> str: ...
    @property
    def start_ns(self) -> int: ...
    @property
    def end_ns(self) -> int: ...
    @property
    def error_type(self) -> str | None: ...

# Called with the attempts, the template the request was expanded from (or None), and the
# token store's commands.
_Recorder = Callable[[list[AttemptRecord], str | None, list[StoreRecord]], object]

@final
class CallOptions:
    """The settings of a client derived by `with_options` (checked by `_settings` first, and by
    the core again): each given one replaces the client's for every call made through it."""

    def __new__(
        cls,
        *,
        timeout: float | None = None,
        connect_timeout: float | None = None,
        total_timeout: float | None = None,
        retries: int | None = None,
        headers: list[tuple[str, str]] | None = None,
    ) -> CallOptions: ...

# One request as it crosses into the core, built once per call: (method, href, variables, body,
# templated, name, if_match, headers, options). ``href`` is a URL, or a template when
# ``templated`` says so (or, when it is None, when it holds a ``{``), or a link, whose template
# is parsed once and kept with it; ``name`` is what messages
# call the target; ``headers`` are this call's extra headers for the API's origin (token
# endpoint included: the trace context); ``options`` are a derived client's settings.
_Call = tuple[
    str,
    str | _LinkCore,
    Mapping[str, Any] | None,
    Any,
    bool | None,
    str | None,
    str | None,
    list[tuple[str, str]] | None,
    CallOptions | None,
]

class _Abort:
    """The task of an asyncio request (``send_async``): ``abort()`` drops it, with any lock
    it held; after its result was set, nothing."""
    def abort(self) -> None: ...

@final
class NativeClient:
    """The native client; one per `recurring_payments.Client`, and one per identity derived from
    it (`with_credentials`)."""

    def __new__(
        cls,
        settings: Any,
        *,
        credentials: Any,
        user_agent: str,
        logger: Any,
        provider_name: str | None = None,
    ) -> NativeClient:
        """``settings``: the checked ``_settings.Settings``, read attribute by attribute;
        ``credentials``: the credentials, or a provider when ``provider_name`` names it."""
    def with_credentials(
        self, credentials: Any, *, provider_name: str | None = None
    ) -> NativeClient:
        """A client acting with `credentials` (or the provider `provider_name` names): this one's
        settings, connections and token store, its own token and token flight. No I/O."""
    @property
    def token(self) -> Token | None: ...
    def close(self) -> None:
        """Let the core go (calls in flight finish with their own reference): idle connections
        close once no other client uses the same pool. Later calls raise RuntimeError. The
        original client's close closes every identity derived from it."""
    def authenticate(
        self,
        *,
        headers: list[tuple[str, str]] | None = None,
        recorder: _Recorder | None = None,
        options: CallOptions | None = None,
    ) -> Token:
        """`headers`: this call's extra headers for the token request (the trace context);
        `recorder`: called once with the attempts (`telemetry.rs`); `options`: a derived
        client's `CallOptions`."""
    def resolve(self, reference: str) -> str: ...
    def send(
        self, call: _Call, recorder: _Recorder | None = None
    ) -> tuple[int, Iterable[tuple[str, str]], Document | None]:
        """Send one request, `call` (see `call::Call`: method, target, variables, body, if_match,
        per-call headers and options); `recorder`, if given, is called once with the attempts
        and the template (`telemetry.rs`). Returns (status, headers: an iterable of (name,
        value) pairs, made when iterated, document or None for an empty body)."""
    def authenticate_async(
        self,
        *,
        headers: list[tuple[str, str]] | None = None,
        recorder: _Recorder | None = None,
        options: CallOptions | None = None,
    ) -> tuple[Awaitable[Token], _Abort]:
        """Like `authenticate`, as an awaitable (call it from a coroutine of the running loop), and
        the `Abort` of its request, which that coroutine calls when its await is interrupted."""
    def send_async(
        self, call: _Call, recorder: _Recorder | None = None
    ) -> tuple[Awaitable[tuple[int, Iterable[tuple[str, str]], Document | None]], _Abort]:
        """Like `send`, as an awaitable (call it from a coroutine of the running loop), and the
        `Abort` of its request, which that coroutine calls when its await is interrupted."""

@final
class Document(Mapping[str, Any]):
    """A HAL document (or an embedded one) as a read-only mapping whose values are converted to
    Python objects when read: a scalar once (then kept), an object or array on each read, so no
    read can change what a later one gives. `_links` and `_embedded`, which only the `Resource`
    layer reads (never handed to users as they are), are kept too."""

    def __new__(cls, body: bytes) -> Document:
        """The document of a JSON body (a HAL object), validated and indexed as a response's
        is; ``ProtocolError`` when it is not JSON, not an object, or nested too deep."""
    def __reduce__(self) -> tuple[type[Document], tuple[bytes]]:
        """Pickled as the JSON text of this document (an embedded one's own part of the body):
        loading indexes it again, so reads after a round trip are as fast as before it."""
    def __copy__(self) -> Document: ...
    def __deepcopy__(self, memo: Any, /) -> Document: ...
    def __getitem__(self, key: str, /) -> Any: ...
    def get(self, key: str, default: Any = None, /) -> Any: ...
    def __contains__(self, key: object, /) -> bool: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[str]: ...
    def state(self) -> dict[str, Any]:
        """The state as a new dict: every field but `_links` and `_embedded`, with the value a
        read gives (a kept scalar shared, the rest converted afresh and not kept: a dict of
        every field is rarely followed by reads of them). `Resource.data` in one call, without
        making the `_links` view or `_embedded`'s documents only to drop them."""
    def to_dict(self) -> dict[str, Any]:
        """The whole object as new Python objects (embedded documents as dicts too)."""

@final
class Links(Mapping[str, Any]):
    """`_links` as a read-only mapping of relation -> link object (or array of them), each
    converted when read and afresh on each read. Only the `Resource` layer reads it, usually one
    relation of several (`mandate.creditor`): converting the whole object was most of the cost
    of that attribute (BENCHMARKS.md)."""

    def __getitem__(self, rel: str, /) -> Any: ...
    def get(self, rel: str, default: Any = None, /) -> Any: ...
    def __contains__(self, rel: object, /) -> bool: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[str]: ...

@final
class RelCache:
    """The relation indexes of one client's resources, one per [`Shape`] (relations and CURIEs in
    scope) under the client's namespace: the responses of one endpoint and the items of a
    collection share theirs, so each is built once. The key is read from the body in Rust,
    without converting `_links` to Python."""

    def __new__(cls, namespace: str | None = None) -> RelCache: ...
    def of_document(
        self, document: Document, inherited: Sequence[tuple[str, str]] = ()
    ) -> RelIndex:
        """The index of `document`'s relations (`_links`, then `_embedded`), with its CURIEs and
        then the `inherited` ones (from the resources embedding it) under other names."""

    def of(self, rels: Sequence[str], curies: Sequence[tuple[str, str]] = ()) -> RelIndex:
        """The index of `rels` with `curies` (as `RelIndex(rels, curies, namespace)`, cached)."""

    def attribute(
        self, document: Document, inherited: Sequence[tuple[str, str]], name: str
    ) -> tuple[str, bool, str | None, bool]:
        """What the attribute `resource.<name>` stands for, in one call (`mandate.creditor`): the
        full rel (`LinkNotFoundError` if none or ambiguous, as `resolve_attribute`), whether it
        is a relation of `_links` (a link, not an embedded resource), and, when its value is one
        link object of `href` and `templated` alone, that href and templated; else None and
        False (the resource reads the link object whole). Converting `_links` and the link
        object to Python was ~15,000 of the ~32,000 instructions of that attribute."""

    def __len__(self) -> int: ...

@final
class RelIndex:
    """The names of a resource's relations: full rel, CURIE form, short name, attribute form."""

    def __new__(
        cls,
        rels: Sequence[str],
        curies: Sequence[tuple[str, str]] = (),
        namespace: str | None = None,
    ) -> RelIndex:
        """Index ``rels`` (duplicates are ignored).

        ``curies`` are ``(name, href)`` pairs whose ``href`` contains ``{rel}``; ``namespace``
        is the rel namespace, e.g. ``"https://api.example.com/alps#"`` (``None`` or ``""``
        infers it per rel).
        """

    def find(self, name: str) -> str | None:
        """The full rel `name` designates, or None; LinkNotFoundError if it is ambiguous."""

    def find_unless_misspelt(self, name: str) -> str | None:
        """`find`, but a name that looks like a misspelling of a rel (the did-you-mean of `resolve`)
        raises that LinkNotFoundError; None when nothing is close."""

    def resolve(self, name: str) -> str:
        """The full rel `name` designates; LinkNotFoundError if none or ambiguous."""

    def find_attribute(self, name: str) -> str | None:
        """The full rel the attribute `name` stands for, or None; LinkNotFoundError if ambiguous
        (`ns#get-foo` and `ns#get_foo` both make the attribute `get_foo`)."""

    def resolve_attribute(self, name: str) -> str:
        """The full rel the attribute `name` stands for; LinkNotFoundError if none or ambiguous."""

    def attribute_names(self) -> list[str]:
        """Names usable as attributes (for dir() and tab completion), sorted."""

    def short_name(self, rel: str) -> str | None:
        """The shortest unambiguous name of the full rel `rel`, or None if it is not indexed."""

# The sandbox server, wrapped by recurring_payments.testing.FakeServer (whose docstrings are
# the user documentation).

@final
class SandboxRequest:
    """A request the sandbox received: a journal entry (``server.requests``), or what a route
    handler is given.

    >>> _ = client.post("/orders", {"reference": "o-1"})
    >>> request = server.requests[-1]
    >>> request
    <SandboxRequest POST /orders -> 201>
    >>> request.json, request.headers["content-type"]
    ({'reference': 'o-1'}, 'application/json')
    """

    @property
    def method(self) -> str:
        """The HTTP method.

        >>> _ = client.root()
        >>> [request.method for request in server.requests]
        ['POST', 'GET']
        """
    @property
    def path(self) -> str:
        """The path, without the query.

        >>> _ = client.get_creditors(reference="democreditor")
        >>> server.requests[-1].path
        '/creditors'
        """
    @property
    def query(self) -> dict[str, str]:
        """Decoded query parameters; the first value of a repeated name.

        >>> _ = client.get("/mandates?creditorReference=democreditor&size=5")
        >>> server.requests[-1].query
        {'creditorReference': 'democreditor', 'size': '5'}
        """
    @property
    def query_list(self) -> list[tuple[str, str]]:
        """Every decoded query pair, in order.

        >>> _ = client.get("/mandates?creditorReference=democreditor&size=5")
        >>> server.requests[-1].query_list
        [('creditorReference', 'democreditor'), ('size', '5')]
        """
    @property
    def query_string(self) -> str:
        """The raw query, as sent (without ``?``).

        >>> _ = client.get("/mandates?creditorReference=democreditor&size=5")
        >>> server.requests[-1].query_string
        'creditorReference=democreditor&size=5'
        """
    @property
    def headers(self) -> dict[str, str]:
        """The request headers: lower-case names; repeated headers joined with ", ".

        >>> _ = client.root()
        >>> server.requests[-1].headers["accept"]
        'application/hal+json; profile="http://127.0.0.1:.../alps/v1"'
        """
    @property
    def body(self) -> bytes:
        """The body, as bytes.

        >>> _ = client.post("/orders", {"reference": "o-1"})
        >>> server.requests[-1].body
        b'{"reference":"o-1"}'
        """
    @property
    def json(self) -> Any:
        """The body parsed as JSON when it was sent as JSON, else ``None``.

        >>> _ = client.create_orders.post({"reference": "o-1", "started": True})
        >>> server.requests[-1].json
        {'reference': 'o-1', 'started': True}
        """
    @property
    def path_params(self) -> dict[str, str]:
        """The parameters of the route's path template (``/things/{id}``), for a handler.

        >>> server.route("GET", "/things/{id}", lambda request: dict(request.path_params))
        >>> client.get("/things/42")["id"]
        '42'
        """
    @property
    def status(self) -> int | None:
        """The status answered (``None`` before the answer, or when the connection was dropped).

        >>> _ = client.get_creditors(reference="democreditor")
        >>> [request.status for request in server.requests]
        [200, 200, 200]
        """
    @property
    def error(self) -> str | None:
        """A failing handler's traceback (the client got a 500), else ``None``.

        >>> server.route("GET", "/boom", lambda request: 1 / 0)
        >>> client.get("/boom").status
        Traceback (most recent call last):
        ...
        recurring_payments.errors.ServerError: GET http://...: HTTP 500 (900: ...)
        >>> server.requests[-1].error.splitlines()[-1]
        'ZeroDivisionError: division by zero'
        """
    @property
    def time(self) -> float:
        """Virtual time of arrival (seconds since the server was created; see ``advance_clock``).

        >>> server.advance_clock(30)
        >>> _ = client.root()
        >>> server.requests[-1].time >= 30
        True
        """

@final
class SandboxServer:
    """The native sandbox server; use `recurring_payments.testing.FakeServer`."""

    def __new__(
        cls, token_ttl: float, demo: bool, host: str, port: int, journal_limit: int, tls: bool
    ) -> SandboxServer: ...
    def start(self) -> tuple[str, str, str]:
        """Start serving; returns `(base_url, profile, rel_namespace)`."""
    def stop(self) -> None: ...
    @property
    def urls(self) -> tuple[str, str, str] | None:
        """`(base_url, profile, rel_namespace)` while running, else `None`."""
    @property
    def ca_path(self) -> str | None:
        """With TLS, while running: the path of the CA's PEM file (removed on stop)."""
    def add_app(self, app_name: str, app_secret: str) -> None: ...
    def add_admin(self, creditor: str, login: str, password: str) -> None: ...
    def add_link(self, rel: str, href: str, templated: bool, admin_only: bool) -> None: ...
    def add_resource(self, path: str, document: str) -> None:
        """`document` is the JSON text of the resource (the wrapper serializes it)."""
    def route(
        self, method: str, path_template: str, handler: Callable[[SandboxRequest], Any]
    ) -> None: ...
    def notification_body(self, path: str) -> bytes:
        """The body the API would POST to a notification URL for the resource at `path` (see
        `FakeServer.notification_body`). Without the GIL: a Python route handler may run."""
    def requests(self) -> list[SandboxRequest]: ...
    def token_requests(self) -> list[SandboxRequest]: ...
    def clear_requests(self) -> None: ...
    def issued_tokens(self) -> list[str]:
        """Every access token issued so far (the last 10,000): a test aid for leak checks."""
    def expire_tokens(self) -> None: ...
    def advance_clock(self, seconds: float) -> None: ...
    def clock(self) -> float:
        """Virtual seconds since the server was created."""
    def fail_next(
        self, status: int, count: int, path: str | None, headers: list[tuple[str, str]]
    ) -> None: ...
    def drop_next(self, count: int, path: str | None) -> None: ...
    def delay_next(self, seconds: float, count: int, path: str | None) -> None: ...
    def malformed_next(self, count: int, path: str | None) -> None: ...
    def respond_next(self, reply: dict[str, Any], count: int, path: str | None) -> None:
        """`reply`: the answer to serve, a dict with the keys of [`RawReply`]."""
    def clear_faults(self) -> None: ...
