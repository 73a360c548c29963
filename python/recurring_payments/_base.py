"""What the sync and async faces share (ARCHITECTURE.md): the `Session` a client and its
resources hold, the client's configuration, and the fields, relations and display of resources
and links. The faces (`_client.py`, `_resource.py`, `_async_client.py`, `_async_resource.py`)
add only the requests, blocking or as coroutines."""

from __future__ import annotations

import copy
import html
import logging
import os
import platform
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, Generic, TypeVar
from urllib.parse import urljoin

from . import _core, _settings
from ._credentials import AdminCredentials, AppCredentials
from ._headers import Headers
from .errors import ConfigurationError, Error, LinkNotFoundError, ProtocolError

if TYPE_CHECKING:
    from typing_extensions import Self

    from ._telemetry import Recorder

logger = logging.getLogger("recurring_payments")

V = TypeVar("V")
L = TypeVar("L", bound="_LinkBase")
_HAL_KEYS = ("_links", "_embedded")

Credentials = AppCredentials | AdminCredentials
_DEFAULT_SIZE = 32 * 2**20
_C = TypeVar("_C", bound="_ClientBase")
# Names that tools look up on any object, and may call: IPython's help (`client?`) calls
# `obj.getdoc()`, older IPython completers `obj.trait_names()`, pytest's doctest probes for
# mocks. No relation of the API is named like them; answering would fetch the entry point.
_PROBES = frozenset({"getdoc", "trait_names", "pytest_mock_example_attribute_that_shouldnt_exist"})


def _user_agent(extra: str | None) -> str:
    ours = f"recurring-payments/{_core.__version__} python/{platform.python_version()}"
    return f"{extra} {ours}" if extra else ours


def _read_env(prefix: str, settings: dict[str, Any]) -> None:
    """Complete ``settings`` (the overrides of ``from_env``) from the environment."""
    if "credentials" not in settings:
        settings["credentials"] = _env_credentials(prefix)
    for name in ("BASE_URL", "PROFILE"):
        if not settings.get(name.lower()):
            _require(prefix, name)
            settings[name.lower()] = os.environ[prefix + name]
    settings.setdefault("rel_namespace", os.environ.get(prefix + "REL_NAMESPACE") or None)
    # Read inline like the secrets: the URL may hold the Redis password.
    if "token_store" not in settings and os.environ.get(prefix + "TOKEN_STORE"):
        settings["token_store"] = os.environ[prefix + "TOKEN_STORE"]
    if "total_timeout" not in settings and os.environ.get(prefix + "TOTAL_TIMEOUT"):
        variable = prefix + "TOTAL_TIMEOUT"
        settings["total_timeout"] = _settings.parse_env_seconds(variable, os.environ[variable])


def _env_credentials(prefix: str) -> Credentials:
    # os.environ is read inline, never bound to a local: a frame holding the mapping or a
    # value would show the secret to whatever captures locals.
    if os.environ.get(prefix + "APP_NAME") or os.environ.get(prefix + "APP_SECRET"):
        _require(prefix, "APP_NAME", "APP_SECRET")
        return AppCredentials(os.environ[prefix + "APP_NAME"], os.environ[prefix + "APP_SECRET"])
    if os.environ.get(prefix + "CREDITOR") or os.environ.get(prefix + "LOGIN"):
        _require(prefix, "CREDITOR", "LOGIN", "PASSWORD")
        return AdminCredentials(
            os.environ[prefix + "CREDITOR"],
            os.environ[prefix + "LOGIN"],
            os.environ[prefix + "PASSWORD"],
        )
    raise ConfigurationError(
        f"missing credentials: set {prefix}APP_NAME and {prefix}APP_SECRET, "
        f"or {prefix}CREDITOR, {prefix}LOGIN and {prefix}PASSWORD"
    )


def _require(prefix: str, *names: str) -> None:
    missing = [prefix + name for name in names if not os.environ.get(prefix + name)]
    if missing:
        raise ConfigurationError(f"missing environment variable(s): {', '.join(missing)}")


_TELEMETRY: list[ModuleType | None] = []  # [the module or None] once looked for


def _telemetry_module() -> ModuleType | None:
    """``_telemetry`` if ``opentelemetry-api`` can be imported (looked for once), else None."""
    if not _TELEMETRY:
        try:
            from . import _telemetry
        except ImportError:
            _TELEMETRY.append(None)
        else:
            _TELEMETRY.append(_telemetry)
    return _TELEMETRY[0]


class Session:
    """What a client shares with its resources and links: the native client, the base URL, the
    relation namespace, the relation-index cache and the telemetry. Resources hold it, never
    their client: they outlive a closed client (a notebook cell showing an old result) and
    still resolve their URLs against the base URL."""

    __slots__ = ("_indexes", "base_url", "native", "rel_namespace", "telemetry")

    def __init__(
        self,
        native: _core.NativeClient,
        base_url: str,
        rel_namespace: str | None,
        telemetry: ModuleType | None = None,
    ) -> None:
        self.native: _core.NativeClient | None = native
        self.base_url = base_url
        self.rel_namespace = rel_namespace
        # OpenTelemetry (API.md §9): `_telemetry` when telemetry is on and the API installed.
        self.telemetry = telemetry
        self._indexes: dict[tuple[tuple[str, ...], tuple[tuple[str, str], ...]], _core.RelIndex]
        self._indexes = {}

    def live(self) -> _core.NativeClient:
        native = self.native
        if native is None:
            raise RuntimeError("this client is closed")
        return native

    def close(self) -> None:
        self.native = None

    def telemetry_call(self) -> Recorder | None:
        """This call's telemetry (API.md §9), started in the caller's context — this thread's
        (sync), the awaiting task's (async) — before the request is sent: the headers that
        propagate that context and the recorder of its attempts. ``None`` when telemetry is
        off, or there is nothing to propagate nor record: then the send passes neither, and
        a warm follow still crosses into the core once."""
        telemetry = self.telemetry
        return None if telemetry is None else telemetry.start()

    def resolve(self, href: str) -> str:
        """The absolute URL of ``href`` (relative ones resolve against the base URL)."""
        native = self.native
        if native is None:
            # A closed client: resolve against the base URL alone, without bringing it back.
            return urljoin(self.base_url, href)
        return native.resolve(href)

    def expand(
        self, href: str, variables: Mapping[str, Any], templated: bool | None, name: str | None
    ) -> str:
        """What a request to ``href`` with ``variables`` would address (checked, expanded and
        resolved by the core, as ``send`` does)."""
        return _core.expand_target(self.base_url, href, variables, templated, name)

    def rel_index(self, rels: list[str], curies: list[tuple[str, str]]) -> _core.RelIndex:
        # Pages of one collection share their relations: build each index once.
        key = (tuple(rels), tuple(curies))
        index = self._indexes.get(key)
        if index is None:
            if len(self._indexes) > 256:
                self._indexes.clear()
            index = self._indexes[key] = _core.RelIndex(rels, curies, self.rel_namespace)
        return index

    def short_name(self, rel: str) -> str:
        return _core.RelIndex([rel], [], self.rel_namespace).short_name(rel) or rel


# Response bodies arrive as `_core.Document`: a read-only mapping converting fields on access.
Mapping.register(_core.Document)
_LINK_FIELDS = ("title", "name", "type", "profile", "deprecation", "hreflang")
_NO_HEADERS = Headers([])  # shared by embedded resources: immutable, and there are thousands


class RelationMap(Mapping[str, V]):
    """``Resource.links`` / ``Resource.embedded``: keys are the full relations as received;
    lookups also accept the short, attribute and CURIE names of a relation.

    Values are built on first access (a follow reads one link of several). An array is a new
    list on each read: appending to one changes no later read (a resource is immutable)."""

    __slots__ = ("_built", "_index", "_make", "_raw")

    def __init__(self, raw: dict[str, Any], index: _core.RelIndex, make: Callable[[str, Any], V]):
        self._raw = raw
        self._index = index
        self._make = make
        self._built: dict[str, V] = {}

    def __getitem__(self, name: str) -> V:
        built = self._built.get(name)
        if built is None:
            rel = name if name in self._raw else self._index.resolve(name)
            built = self._built.get(rel)
            if built is None:
                built = self._built[rel] = self._make(rel, self._raw[rel])
        return list(built) if isinstance(built, list) else built  # type: ignore[return-value]

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        if name in self._raw:
            return True
        try:
            return self._index.find(name) is not None
        except LinkNotFoundError:
            return False

    def __iter__(self) -> Iterator[str]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)

    def __repr__(self) -> str:
        return f"{{{', '.join(repr(k) for k in self._raw)}}}"

    def _ipython_key_completions_(self) -> list[str]:
        # `res.links["<tab>`: each relation by its short name ("get-mandates").
        return [self._index.short_name(rel) or rel for rel in self._raw]


class _LinkBase:
    """What :class:`Link` and ``AsyncLink`` share: the link's fields and its expansion."""

    __slots__ = (
        "_session",
        "_variables",
        "deprecation",
        "href",
        "hreflang",
        "name",
        "profile",
        "rel",
        "templated",
        "title",
        "type",
    )

    rel: str
    href: str
    templated: bool
    title: str | None
    name: str | None
    type: str | None
    profile: str | None
    deprecation: str | None
    hreflang: str | None

    def __init__(self, session: Session, rel: str, data: Mapping[str, Any]) -> None:
        self._session = session
        self.rel = rel
        self.href = data["href"]
        templated = self.templated = data.get("templated") is True
        self.title = self.name = self.type = self.profile = None
        self.deprecation = self.hreflang = None
        if len(data) > 1 + templated:  # most links are {"href"} or {"href", "templated"}
            for field in _LINK_FIELDS:
                value = data.get(field)
                if isinstance(value, str):
                    setattr(self, field, value)
        self._variables: list[str] | None = None

    @property
    def variables(self) -> list[str]:
        """The names of the template's variables (empty for a plain link).

        >>> client.get_creditors.variables, client.create_orders.variables
        (['reference'], [])
        """
        return list(self._declared())

    def _declared(self) -> list[str]:
        # Parsed once per link (the core checks each call's variables when it expands them).
        if self._variables is None:
            self._variables = _core.template_variables(self.href) if self.templated else []
        return self._variables

    def expand(self, **variables: Any) -> str:
        """The absolute URL of this link with ``variables`` filled in (RFC 6570).

        A variable the template does not declare raises ``TypeError``.

        >>> client.get_creditors.expand(reference="demo creditor")
        'http://127.0.0.1:.../creditors?reference=demo%20creditor'
        >>> client.get_creditors.expand(ref="x")
        Traceback (most recent call last):
        ...
        TypeError: '...#get-creditors' got unexpected variable(s) 'ref'; it declares reference
        """
        return self._session.expand(self.href, variables, self.templated, self.rel or None)

    def _warn_if_deprecated(self) -> None:
        if self.deprecation is not None:
            warnings.warn(
                f"link {self.rel!r} is deprecated (see {self.deprecation})",
                DeprecationWarning,
                stacklevel=3,
            )

    def __repr__(self) -> str:
        short = self._session.short_name(self.rel)
        templated = " (templated)" if self.templated else ""
        return f"<{type(self).__name__} {short} {self.href}{templated}>"


class _ResourceBase(Mapping[str, Any], Generic[L]):
    """What :class:`Resource` and ``AsyncResource`` share: the state, relations, response
    facts and display. Subclasses add the navigation (``fetch``, ``follow``, ``pages``)."""

    __slots__ = (
        "_attributes",
        "_curies",
        "_doc",
        "_embedded",
        "_headers",
        "_index",
        "_inherited",
        "_links",
        "_partial",
        "_session",
        "_status",
    )

    def __init__(
        self,
        session: Session,
        document: Mapping[str, Any],
        *,
        status: int | None = None,
        headers: Headers | None = None,
        partial: bool = False,
        curies: Sequence[tuple[str, str]] = (),
    ) -> None:
        self._session = session
        self._doc = document
        self._status = status
        self._headers = headers if headers is not None else _NO_HEADERS
        self._partial = partial
        self._inherited = curies  # the CURIEs of the resources that embed this one
        self._curies: list[tuple[str, str]] | None = None
        self._links: RelationMap[L | list[L]] | None = None
        self._embedded: RelationMap[Self | list[Self]] | None = None
        self._index: _core.RelIndex | None = None
        self._attributes: dict[str, Any] | None = None  # relations read as attributes

    # --- the state (Mapping protocol) -------------------------------------------------------
    def __getitem__(self, key: str) -> Any:
        if key in _HAL_KEYS:
            raise KeyError(key)
        return self._doc[key]

    def __contains__(self, key: object) -> bool:
        return key in self._doc and key not in _HAL_KEYS

    def __iter__(self) -> Iterator[str]:
        return (k for k in self._doc if k not in _HAL_KEYS)

    def __len__(self) -> int:
        return len(self._doc) - sum(1 for k in _HAL_KEYS if k in self._doc)

    @property
    def data(self) -> dict[str, Any]:
        """The state as a new ``dict`` (a deep copy: change it freely).

        >>> client.get_creditors(reference="democreditor").data
        {'reference': 'democreditor', 'name': 'Demo Creditor SAS'}
        """
        doc = self._doc
        if isinstance(doc, _core.Document):  # it converts objects and arrays afresh already
            return {k: v for k, v in doc.items() if k not in _HAL_KEYS}
        return {k: copy.deepcopy(v) for k, v in doc.items() if k not in _HAL_KEYS}

    # --- relations ---------------------------------------------------------------------------
    def _link(self, rel: str, data: Mapping[str, Any]) -> L:
        raise NotImplementedError  # each subclass builds its own kind of link

    @property
    def links(self) -> RelationMap[L | list[L]]:
        """Relation -> :class:`Link` (``AsyncLink`` in an ``AsyncResource``), or a list of them
        when the document has an array. Keys are the full relations; lookups also take the
        short (``"get-creditors"``), attribute and CURIE names.

        >>> root = client.root()
        >>> root.links["get-creditors"] is root.get_creditors
        True
        >>> root.links["self"].href == server.base_url + "/"
        True
        """
        if self._links is None:
            raw = self._doc.get("_links") or {}
            make = self._link

            def build(rel: str, value: Any) -> L | list[L]:
                return (
                    [make(rel, d) for d in value] if isinstance(value, list) else make(rel, value)
                )

            index = self._session.rel_index(list(raw), self._curies_in_scope())
            self._links = RelationMap(raw, index, build)
        return self._links

    @property
    def embedded(self) -> RelationMap[Self | list[Self]]:
        """Relation -> embedded resource of the same class (or a list), each possibly partial.

        >>> page = client.get_mandates(creditorReference="democreditor")
        >>> mandates = page.embedded["mandates"]
        >>> len(mandates), mandates[0].partial, mandates[0]["reference"]
        (20, True, 'MND-0001')
        """
        if self._embedded is None:
            raw = self._doc.get("_embedded") or {}
            session = self._session
            cls = type(self)
            # HAL draft §8.3: embedded resources inherit the CURIEs of those that embed them.
            curies = self._curies_in_scope()

            def build(rel: str, value: Any) -> Self | list[Self]:
                if isinstance(value, list):
                    return [cls(session, d, partial=True, curies=curies) for d in value]
                return cls(session, value, partial=True, curies=curies)

            self._embedded = RelationMap(raw, session.rel_index(list(raw), curies), build)
        return self._embedded

    def _curies_in_scope(self) -> list[tuple[str, str]]:
        """This resource's CURIEs, then those it inherits under other names (its own win).
        Shared by the resources it embeds: never changed once built."""
        if self._curies is None:
            own = _curies(self._doc.get("_links") or {})
            if self._inherited:
                names = {name for name, _ in own}
                own += [c for c in self._inherited if c[0] not in names]
            self._curies = own
        return self._curies

    def __getattr__(self, name: str) -> Any:
        # Only relations reach here: methods and properties are found first.
        if name.startswith("_"):
            raise AttributeError(name)
        attributes = self._attributes
        if attributes is None:
            attributes = self._attributes = {}
        else:
            found = attributes.get(name)
            if found is not None:  # a warm `client.get_creditors(...)` stays in Python
                return found
        # One index of links and embedded rels: `ns#get-foo` among the links and `ns#get_foo`
        # embedded make `get_foo` ambiguous too. A rel in both is the link.
        rel = self._all_relations().resolve_attribute(name)  # LinkNotFoundError, did-you-mean
        value = self.links[rel] if rel in self.links else self.embedded[rel]
        if not isinstance(value, list):  # an array is a new list on each read
            attributes[name] = value
        return value

    def _all_relations(self) -> _core.RelIndex:
        if self._index is None:
            links = self._doc.get("_links") or {}
            rels = list(links) + list(self._doc.get("_embedded") or {})
            self._index = self._session.rel_index(rels, self._curies_in_scope())
        return self._index

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self._all_relations().attribute_names()))

    # --- response facts ----------------------------------------------------------------------
    @property
    def url(self) -> str | None:
        """The absolute ``self`` href (also from an array of one ``self`` link), or ``None``.

        >>> client.get_creditors(reference="democreditor").url
        'http://127.0.0.1:.../creditors/democreditor'
        """
        link = _only_link(self._doc, "self")
        return None if link is None else self._session.resolve(link["href"])

    @property
    def status(self) -> int | None:
        """The HTTP status of the response (``None`` for an embedded resource).

        >>> client.create_orders.post({"reference": "o-1"}).status
        201
        """
        return self._status

    @property
    def headers(self) -> Headers:
        """Response headers, case-insensitive (empty for an embedded resource).

        >>> client.root().headers["Content-Type"].startswith("application/hal+json")
        True
        """
        return self._headers

    @property
    def etag(self) -> str | None:
        """The ``ETag`` response header, or ``None``.

        >>> client.root().etag  # the sandbox's are strong: quoted, no W/
        '"..."'
        """
        return self._headers.get("etag")

    @property
    def partial(self) -> bool:
        """``True`` for an embedded resource, which may be a partial representation.

        >>> mandate = client.get_mandates(creditorReference="democreditor").embedded["mandates"][0]
        >>> mandate.partial, mandate.fetch().partial
        (True, False)
        """
        return self._partial

    # --- navigation helpers (the sync and async subclasses send the requests) ---------------
    def _self_url(self) -> str:
        link = _only_link(self._doc, "self", strict=True)
        if link is None:
            raise LinkNotFoundError("this resource has no 'self' link to fetch")
        return self._session.resolve(link["href"])

    def _single_link(self, rel: str) -> L:
        link = self.links[rel]
        if isinstance(link, list):
            if len(link) != 1:
                raise LinkNotFoundError(
                    f"relation {rel!r} has {len(link)} links; pick one from res.links[{rel!r}]"
                )
            link = link[0]
        return link

    def _next_url(self, seen: set[str]) -> str | None:
        """The absolute ``next`` href (also from an array of one), or ``None``; several ``next``
        links raise ``LinkNotFoundError``; ``seen`` guards against a looping server."""
        following = _only_link(self._doc, "next", strict=True)
        if following is None:
            return None
        url = self._session.resolve(following["href"])
        if url in seen:
            raise ProtocolError(f"pagination loops back to {url}", method="GET", url=url)
        seen.add(url)
        return url

    def to_dict(self) -> dict[str, Any]:
        """The whole document as received, ``_links`` and ``_embedded`` included (a copy).

        >>> sorted(client.get_creditors(reference="democreditor").to_dict())
        ['_links', 'name', 'reference']
        """
        doc = self._doc
        return doc.to_dict() if isinstance(doc, _core.Document) else copy.deepcopy(dict(doc))

    # --- display -----------------------------------------------------------------------------
    def __repr__(self) -> str:
        parts = [f"<{type(self).__name__} {self.url or '(no self link)'}"]
        if self._status is not None:
            parts.append(f"status={self._status}")
        if self._partial:
            parts.append("partial")
        keys = list(self)
        if keys:
            shown = ", ".join(keys[:6]) + (", …" if len(keys) > 6 else "")
            parts.append(f"state=[{shown}]")
        n_links = len(self._doc.get("_links") or {})
        if n_links:
            parts.append(f"links={n_links}")
        embedded = self._doc.get("_embedded") or {}
        if embedded:
            counts = ", ".join(
                f"{rel}[{len(v)}]" if isinstance(v, list) else rel for rel, v in embedded.items()
            )
            parts.append(f"embedded=[{counts}]")
        return " ".join(parts) + ">"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))

    def _ipython_key_completions_(self) -> list[str]:
        return list(self)  # `res["<tab>`: the state's keys

    def _repr_html_(self) -> str:
        esc = html.escape
        rows = "".join(
            f"<tr><td><code>{esc(str(k))}</code></td><td>{esc(repr(v))}</td></tr>"
            for k, v in self.items()
        )
        link_rows = []
        for rel, value in self.links.items():
            for link in value if isinstance(value, list) else [value]:
                variables = ", ".join(link.variables) if link.templated else ""
                link_rows.append(
                    f"<tr><td><code>{esc(self._session.short_name(rel))}</code></td>"
                    f"<td>{esc(link.href)}</td><td>{esc(variables)}</td></tr>"
                )
        embedded_rows = "".join(
            f"<tr><td><code>{esc(self._session.short_name(rel))}</code></td>"
            f"<td>{len(v) if isinstance(v, list) else 1}</td></tr>"
            for rel, v in (self._doc.get("_embedded") or {}).items()
        )
        title = esc(self.url or "resource")
        out = [f"<div><strong>{type(self).__name__}</strong> <code>{title}</code>"]
        if self._status is not None:
            out.append(f" (status {self._status})")
        out.append("<table><tr><th>property</th><th>value</th></tr>" + rows + "</table>")
        if link_rows:
            out.append(
                "<table><tr><th>relation</th><th>href</th><th>variables</th></tr>"
                + "".join(link_rows)
                + "</table>"
            )
        if embedded_rows:
            out.append(
                "<table><tr><th>embedded</th><th>count</th></tr>" + embedded_rows + "</table>"
            )
        out.append("</div>")
        return "".join(out)


class _ClientBase:
    """What :class:`Client` and ``AsyncClient`` share: configuration, the :class:`Session`
    (native client, relation indexes) and the token. Subclasses send the requests (blocking,
    or as coroutines) and cache the entry point."""

    _session: Session  # set last, once every check passed

    def __init__(
        self,
        base_url: str,
        *,
        credentials: Credentials,
        profile: str,
        rel_namespace: str | None = None,
        timeout: float = 30.0,
        connect_timeout: float = 10.0,
        retries: int = 2,
        token_leeway: float = 30.0,
        max_response_size: int = _DEFAULT_SIZE,
        allow_http: bool = False,
        verify: bool | str | os.PathLike[str] = True,
        user_agent: str | None = None,
        total_timeout: float = 25.0,
        headers: Mapping[str, str] | None = None,
        telemetry: bool = True,
        token_store: str | None = None,
    ) -> None:
        # Nothing is stored before every check passed: repr() of a client whose constructor
        # raised (or of a subclass asking before calling us) shows no unchecked value.
        settings: _settings.Settings
        try:
            settings = _settings.check(
                base_url=base_url,
                profile=profile,
                rel_namespace=rel_namespace,
                timeout=timeout,
                connect_timeout=connect_timeout,
                total_timeout=total_timeout,
                retries=retries,
                token_leeway=token_leeway,
                max_response_size=max_response_size,
                allow_http=allow_http,
                verify=verify,
                user_agent=user_agent,
                headers=headers,
                telemetry=telemetry,
                token_store=token_store,
            )
            if not isinstance(credentials, (AppCredentials, AdminCredentials)):
                raise ConfigurationError(
                    "credentials must be AppCredentials or AdminCredentials, "
                    f"not {type(credentials).__name__}"
                )
            native = _core.NativeClient(
                settings.base_url,
                credentials=credentials,
                profile=settings.profile,
                timeout=settings.timeout,
                connect_timeout=settings.connect_timeout,
                retries=settings.retries,
                token_leeway=settings.token_leeway,
                max_response_size=settings.max_response_size,
                allow_http=settings.allow_http,
                verify=settings.verify,
                user_agent=_user_agent(settings.user_agent),
                logger=logger,
                total_timeout=settings.total_timeout,
                headers=settings.headers,
                token_store=settings.token_store,
            )
        except Error as err:
            # Error trackers capture the locals of every frame of a traceback: forget the
            # arguments (base_url may hold a password, headers an API key, credentials a
            # secret) and drop the frames of the checks, which held them too.
            base_url = credentials = headers = token_store = None  # type: ignore[assignment]
            settings = None  # type: ignore[assignment]
            raise err.with_traceback(None) from None
        self._base_url = settings.base_url
        self._profile = settings.profile
        self._credentials = credentials
        self._total_timeout: float = settings.total_timeout
        self._extra_headers: list[tuple[str, str]] = settings.headers
        self._init_root_cache()
        telemetry_module = _telemetry_module() if settings.telemetry else None
        self._session = Session(native, settings.base_url, settings.rel_namespace, telemetry_module)

    @classmethod
    def from_env(cls: type[_C], prefix: str = "RECURRING_PAYMENTS_", **overrides: Any) -> _C:
        """Build a client from environment variables: ``<prefix>BASE_URL``, ``PROFILE``,
        ``REL_NAMESPACE`` (optional), ``TOTAL_TIMEOUT`` (optional, seconds), ``TOKEN_STORE``
        (optional, a Redis URL: fleet mode), and ``APP_NAME`` +
        ``APP_SECRET`` or ``CREDITOR`` + ``LOGIN`` + ``PASSWORD``. Keyword arguments override
        or add constructor arguments.

        ``Client.from_env()`` in a Django settings module or a Flask app factory reads
        ``RECURRING_PAYMENTS_BASE_URL`` and so on; a missing variable is named:

        >>> rp.Client.from_env(prefix="SHOP_API_", timeout=10.0)
        Traceback (most recent call last):
        ...
        recurring_payments.errors.ConfigurationError: missing credentials: set SHOP_API_APP_NAME ...
        """
        # No frame of this call keeps a secret in its locals once it raised (error trackers
        # capture them): secrets go from os.environ into the credentials object, whose repr
        # masks them, within one expression, and `overrides` is emptied on the way out.
        try:
            _read_env(prefix, overrides)
            return cls(**overrides)
        except BaseException:
            overrides.clear()
            raise

    # --- public API --------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        """The environment's base address, as given; relative hrefs resolve against it.

        >>> client.base_url == server.base_url
        True
        """
        return self._base_url

    @property
    def profile(self) -> str:
        """The profile URL that every ``Accept`` header names.

        >>> client.profile
        'http://127.0.0.1:.../alps/v1'
        """
        return self._profile

    @property
    def credentials(self) -> Credentials:
        """The credentials given (their secret masked in ``repr()``).

        >>> client.credentials
        AppCredentials(app_name='sandbox-app', app_secret='***')
        """
        return self._credentials

    @property
    def token(self) -> _core.Token | None:
        """The current token, or ``None`` before the first request.

        >>> client.token is None
        True
        >>> client.root().status, client.token.scope
        (200, 'api')
        """
        return self._live().token

    def __repr__(self) -> str:
        # getattr: also for a client whose constructor raised, or has not run yet.
        base_url = getattr(self, "_base_url", None)
        if base_url is None:
            return f"<{type(self).__name__} (not set up)>"
        session = getattr(self, "_session", None)
        closed = session is None or session.native is None
        state = "closed" if closed else repr(getattr(self, "_credentials", None))
        return f"<{type(self).__name__} {base_url} {state}>"

    # --- internals shared with resources and links ---------------------------------------------
    def _live(self) -> _core.NativeClient:
        session: Session | None = getattr(self, "_session", None)
        if session is None:
            raise RuntimeError("this client is closed")
        return session.live()

    def _init_root_cache(self) -> None:
        raise NotImplementedError  # the entry point cache is sync or async

    def _close(self) -> None:
        # Resources keep the session (to resolve their URLs); only the native client goes.
        self._session.close()
        self._init_root_cache()


def _only_link(doc: Mapping[str, Any], rel: str, strict: bool = False) -> Any:
    """The link object of ``rel`` when there is one, as an object or an array of one; ``None``
    when there is none. Several are ``None``, or ``LinkNotFoundError`` when ``strict``."""
    link = (doc.get("_links") or {}).get(rel)
    if isinstance(link, list):
        if len(link) == 1:
            return link[0]
        if strict and link:
            raise LinkNotFoundError(
                f"relation {rel!r} has {len(link)} links, not one; pick one from res.links[{rel!r}]"
            )
        return None
    return link


def _curies(links: Mapping[str, Any]) -> list[tuple[str, str]]:
    raw = links.get("curies")
    if raw is None:
        return []
    items = raw if isinstance(raw, list) else [raw]
    return [
        (c["name"], c["href"])
        for c in items
        if isinstance(c, dict) and isinstance(c.get("name"), str)
    ]
