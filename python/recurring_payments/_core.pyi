"""The native core of recurring_payments (Rust, PyO3). Import the public API from the package."""

from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, final

from typing_extensions import Self, disjoint_base

__all__ = [
    "CallOptions",
    "Document",
    "Links",
    "NativeClient",
    "RelCache",
    "RelIndex",
    "SandboxRequest",
    "SandboxServer",
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
    """Expand an RFC 6570 template; raises TemplateError when it is malformed."""

def expand_target(
    base_url: str,
    href: str,
    variables: Mapping[str, Any] | None = None,
    templated: bool | None = None,
    name: str | None = None,
) -> str:
    """The absolute URL a request to ``href`` with ``variables`` addresses: checked, expanded
    and resolved against ``base_url`` as ``NativeClient.send`` does, without a client."""

def template_variables(template: str) -> list[str]:
    """The variable names a template declares, in order of first appearance."""

def resource_items(
    cls: type[Any], session: Any, documents: list[Any], curies: Any, untracked: bool
) -> list[Any]:
    """For each of ``documents``, ``cls(session, document, partial=True, curies=curies)``
    without running Python; with ``untracked``, each untracked by the cycle collector as it
    is made (the caller vouches nothing it holds can lead back to it)."""

@disjoint_base
class _LinkCore:
    """The native base of ``Link`` and ``AsyncLink``: the fields, and the sync face's GET."""

    _session: Any
    _variables: list[str] | None
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
        """A link of ``cls`` with ``href`` and ``templated`` alone."""
    def _call(self, **variables: Any) -> Any:
        """GET this link; same as :meth:`get`.

        >>> client.get_creditors(reference="democreditor").status
        200
        """

@disjoint_base
class _ResourceCore:
    """The native base of ``Resource`` and ``AsyncResource``: the state, read in native slots."""

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
    """Track ``object`` again if it is a GC object the cycle collector does not track."""

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

# One HTTP attempt as the recorder receives it: method, url (no userinfo), status or None,
# start and end (Unix ns), token request, resend count, the exception class name or None, the
# response's request id or None.
_AttemptRecord = tuple[str, str, int | None, int, int, bool, int, str | None, str | None]
# One command to the token store (API.md §10): op, start and end (Unix ns), error type or None.
_StoreRecord = tuple[str, int, int, str | None]

# Called with the attempts, the template the request was expanded from (or None), and the
# token store's commands.
_Recorder = Callable[[list[_AttemptRecord], str | None, list[_StoreRecord]], object]

@final
class CallOptions:
    """The settings of a client derived by ``with_options`` (API.md §11): each one given
    replaces the client's for every call made through it; ``headers`` replaces the client's
    ``headers=`` (already merged by name). Checked as the constructor checks them."""

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
# ``templated`` says so (or, when it is None, when it holds a ``{``); ``name`` is what messages
# call the target; ``headers`` are this call's extra headers for the API's origin (token
# endpoint included: the trace context); ``options`` are a derived client's settings.
_Call = tuple[
    str,
    str,
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
    """The Rust client behind ``recurring_payments.Client`` (internal)."""

    def __new__(
        cls,
        settings: Any,
        *,
        credentials: Any,
        user_agent: str,
        logger: Any,
    ) -> NativeClient:
        """``settings``: the checked ``_settings.Settings``, read attribute by attribute."""
    @property
    def token(self) -> Token | None: ...
    def close(self) -> None:
        """Let the core and its hold on the connection pools go; later calls raise
        RuntimeError."""
    def authenticate(
        self,
        *,
        headers: list[tuple[str, str]] | None = None,
        recorder: _Recorder | None = None,
        options: CallOptions | None = None,
    ) -> Token:
        """Fetch a token now. ``headers``: extra headers of the token request (the trace
        context); ``recorder``: called once with the call's attempts (and None: no template);
        ``options``: a derived client's settings."""
    def resolve(self, reference: str) -> str: ...
    def send(
        self, call: _Call, recorder: _Recorder | None = None
    ) -> tuple[int, Iterable[tuple[str, str]], Document | None]:
        """One request, ``call`` (see ``_Call`` above); ``recorder``, if given, is called once
        with the call's attempts and the template. Returns (status, headers, document or None
        for an empty body)."""
    def authenticate_async(
        self,
        *,
        headers: list[tuple[str, str]] | None = None,
        recorder: _Recorder | None = None,
        options: CallOptions | None = None,
    ) -> tuple[Awaitable[Token], _Abort]:
        """``authenticate`` as an awaitable, and the abort of its request; call it from a
        coroutine of the running loop, which calls ``abort()`` when its await is interrupted."""
    def send_async(
        self, call: _Call, recorder: _Recorder | None = None
    ) -> tuple[Awaitable[tuple[int, Iterable[tuple[str, str]], Document | None]], _Abort]:
        """``send`` as an awaitable, and the abort of its request; call it from a coroutine of
        the running loop, which calls ``abort()`` when its await is interrupted (cancelling the
        awaiting task cancels the request)."""

@final
class Document(Mapping[str, Any]):
    """A response document: a read-only mapping whose values become Python objects when read:
    a scalar once (then kept), an object or an array afresh on each read, so that changing one
    changes no later read; ``_embedded`` holds ``Document`` objects. (A virtual ``Mapping``
    subclass: registered by ``recurring_payments._resource_base``.)"""

    def __new__(cls, body: bytes) -> Document:
        """The document of a JSON body (a HAL object), validated and indexed as a response's
        is; ``ProtocolError`` when it is not JSON, not an object, or nested too deep."""
    def __reduce__(self) -> tuple[type[Document], tuple[bytes]]:
        """Pickled as its JSON text, indexed again when loaded."""
    def __copy__(self) -> Document: ...
    def __deepcopy__(self, memo: Any, /) -> Document:
        """Immutable: a copy is the document itself."""
    def __getitem__(self, key: str, /) -> Any: ...
    def get(self, key: str, default: Any = None, /) -> Any: ...
    def __contains__(self, key: object, /) -> bool: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[str]: ...
    def state(self) -> dict[str, Any]:
        """Every field but ``_links`` and ``_embedded``, as a new dict (``Resource.data``)."""
    def to_dict(self) -> dict[str, Any]:
        """The whole object as new Python objects (embedded documents as dicts too)."""

@final
class Links(Mapping[str, Any]):
    """A document's ``_links``: relation -> link object (or list of them), each converted when
    read and afresh on each read. (A virtual ``Mapping`` subclass, registered by
    ``recurring_payments._base``.)"""

    def __getitem__(self, rel: str, /) -> Any: ...
    def get(self, rel: str, default: Any = None, /) -> Any: ...
    def __contains__(self, rel: object, /) -> bool: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[str]: ...

@final
class RelCache:
    """The relation indexes of one client's resources, one per shape (relations and CURIEs in
    scope) under the client's namespace: the responses of one endpoint and the items of a
    collection share theirs. At most 256 shapes are kept."""

    def __new__(cls, namespace: str | None = None) -> RelCache: ...
    def of_document(
        self, document: Document, inherited: Sequence[tuple[str, str]] = ()
    ) -> RelIndex:
        """The index of ``document``'s relations (``_links``, then ``_embedded``), with its
        CURIEs, then the ``inherited`` ones under other names."""

    def of(self, rels: Sequence[str], curies: Sequence[tuple[str, str]] = ()) -> RelIndex:
        """The index of ``rels`` with ``curies``, as ``RelIndex(rels, curies, namespace)``."""

    def attribute(
        self, document: Document, inherited: Sequence[tuple[str, str]], name: str
    ) -> tuple[str, bool, str | None, bool]:
        """What ``resource.<name>`` stands for: ``(rel, is_link, href, templated)``, the full rel
        (``LinkNotFoundError`` if none or ambiguous), whether it is a relation of ``_links``,
        and the href and templated of its link object when it has those two members alone
        (else ``None`` and ``False``)."""

    def __len__(self) -> int: ...

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
    with one short name make that name ambiguous; each stays reachable by its full rel. Python
    attributes are looked up with :meth:`find_attribute`, where ``get-foo`` and ``get_foo``
    are one short name.
    """

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
        """The full rel ``name`` designates, or ``None`` if none.

        Raises ``LinkNotFoundError`` if ``name`` is ambiguous, naming the candidate rels.
        """

    def resolve(self, name: str) -> str:
        """The full rel ``name`` designates.

        Raises ``LinkNotFoundError`` (also an ``AttributeError`` and a ``KeyError``) if there is
        none, with a did-you-mean and the available names, or if ``name`` is ambiguous.
        """

    def find_attribute(self, name: str) -> str | None:
        """The full rel the Python attribute ``name`` stands for, or ``None`` if none.

        An attribute stands for every rel with a name of that attribute form: ``ns#get-foo``
        and ``ns#get_foo`` make ``get_foo`` ambiguous (``LinkNotFoundError`` naming both),
        though ``find("get_foo")`` names the second. A full rel outranks short names.
        """

    def resolve_attribute(self, name: str) -> str:
        """The full rel the Python attribute ``name`` stands for (see :meth:`find_attribute`).

        Raises ``LinkNotFoundError`` if there is none (with a did-you-mean) or it is ambiguous.
        """

    def attribute_names(self) -> list[str]:
        """Names usable as attributes (for ``dir()`` and tab completion), sorted: every
        attribute that stands for exactly one rel."""

    def short_name(self, rel: str) -> str | None:
        """The shortest unambiguous name of the full rel ``rel``, for display: its short name,
        else its CURIE form, else ``rel`` itself. ``None`` if ``rel`` is not in the index."""

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
        cls,
        token_ttl: float = 960.0,
        demo: bool = False,
        host: str = "127.0.0.1",
        port: int = 0,
        journal_limit: int = 100_000,
        tls: bool = False,
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
        """The document a GET of ``path`` serves (a ``self`` link added when it has none), as
        the API would POST it to a notification URL; ``ValueError`` when nothing is served."""
    def requests(self) -> list[SandboxRequest]: ...
    def token_requests(self) -> list[SandboxRequest]: ...
    def clear_requests(self) -> None: ...
    def issued_tokens(self) -> list[str]:
        """Every access token issued so far (the last 10,000): a test aid for leak checks."""
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
    def respond_next(self, reply: dict[str, Any], count_: int, path: str | None) -> None:
        """``reply``: status, headers, body, repeat, cut_after, chunk_delay and chunked."""
    def clear_faults(self) -> None: ...
