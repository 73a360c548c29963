"""HAL resources and links (API.md §4): `Resource`, `Link` and their mapping views."""

from __future__ import annotations

import copy
import html
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from . import _core
from ._headers import Headers as Headers  # re-exported: its home before errors needed it
from .errors import LinkNotFoundError, ProtocolError

if TYPE_CHECKING:
    from typing_extensions import Self

    from ._client import Client, _ClientBase

V = TypeVar("V")
L = TypeVar("L", bound="_LinkBase")
_HAL_KEYS = ("_links", "_embedded")

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
        "_client",
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

    def __init__(self, client: _ClientBase, rel: str, data: Mapping[str, Any]) -> None:
        self._client = client
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
        # Parsed once per link; expand() checks every call's variables against it.
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
        return self._client._resolve(self._target(variables))

    def _target(self, variables: Mapping[str, Any]) -> str:
        # What a request sends: expanded, not yet resolved (the native client resolves it).
        if not self.templated and not variables:
            return self.href
        declared = self._declared()
        return self._client._target(self.href, variables, self.templated, self.rel, declared)

    @property
    def _template(self) -> str | None:
        # A span's url.template (API.md §9): the href as the document holds it.
        return self.href if self.templated else None

    def _warn_if_deprecated(self) -> None:
        if self.deprecation is not None:
            warnings.warn(
                f"link {self.rel!r} is deprecated (see {self.deprecation})",
                DeprecationWarning,
                stacklevel=3,
            )

    def __repr__(self) -> str:
        short = self._client._short_name(self.rel)
        templated = " (templated)" if self.templated else ""
        return f"<{type(self).__name__} {short} {self.href}{templated}>"


class Link(_LinkBase):
    """One HAL link. Call it (or ``.get``) to GET it; ``.post``/``.patch`` send JSON.

    Fields: ``rel`` (the full relation), ``href`` (as sent, possibly a template),
    ``templated``, :attr:`variables`, and ``title``, ``name``, ``type``, ``profile``,
    ``deprecation``, ``hreflang`` (``None`` when absent).

    >>> link = client.get_creditors
    >>> link
    <Link get-creditors http://127.0.0.1:.../creditors{?reference} (templated)>
    >>> link.templated, link.variables, link.title
    (True, ['reference'], None)
    >>> link(reference="democreditor")["name"]
    'Demo Creditor SAS'
    """

    __slots__ = ()
    _client: Client

    def __call__(self, **variables: Any) -> Resource:
        """GET this link; same as :meth:`get`.

        >>> client.get_creditors(reference="democreditor").status
        200
        """
        return self.get(**variables)

    def get(self, **variables: Any) -> Resource:
        """GET this link and return the resource.

        >>> client.get_creditors.get(reference="democreditor")["name"]
        'Demo Creditor SAS'
        """
        self._warn_if_deprecated()
        return self._client._send("GET", self._target(variables), None, template=self._template)

    def post(self, body: Any = None, /, **variables: Any) -> Resource:
        """POST ``body`` as JSON to this link (never retried; see the README).

        >>> order = client.create_orders.post({"reference": "o-1", "started": True})
        >>> order.status, order.headers["Location"] == order.url
        (201, True)
        """
        self._warn_if_deprecated()
        body = {} if body is None else body
        return self._client._send("POST", self._target(variables), body, template=self._template)

    def patch(self, body: Any, /, *, if_match: str | None = None, **variables: Any) -> Resource:
        """PATCH this link with a JSON merge patch (RFC 7396). ``if_match`` (typically
        ``res.etag``) sends ``If-Match``: a 412 :class:`PreconditionFailedError` then says the
        resource changed since it was read, and nothing was changed.

        >>> order = client.create_orders.post({"reference": "o-1"})
        >>> order.links["self"].patch({"started": True}, if_match=order.etag)["started"]
        True
        """
        self._warn_if_deprecated()
        target = self._target(variables)
        return self._client._send("PATCH", target, body, if_match, template=self._template)


class _ResourceBase(Mapping[str, Any], Generic[L]):
    """What :class:`Resource` and ``AsyncResource`` share: the state, relations, response
    facts and display. Subclasses add the navigation (``fetch``, ``follow``, ``pages``)."""

    __slots__ = (
        "_client",
        "_curies",
        "_doc",
        "_embedded",
        "_headers",
        "_index",
        "_inherited",
        "_links",
        "_partial",
        "_status",
    )

    def __init__(
        self,
        client: _ClientBase,
        document: Mapping[str, Any],
        *,
        status: int | None = None,
        headers: Headers | None = None,
        partial: bool = False,
        curies: Sequence[tuple[str, str]] = (),
    ) -> None:
        self._client = client
        self._doc = document
        self._status = status
        self._headers = headers if headers is not None else _NO_HEADERS
        self._partial = partial
        self._inherited = curies  # the CURIEs of the resources that embed this one
        self._curies: list[tuple[str, str]] | None = None
        self._links: RelationMap[L | list[L]] | None = None
        self._embedded: RelationMap[Self | list[Self]] | None = None
        self._index: _core.RelIndex | None = None

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

            index = self._client._rel_index(list(raw), self._curies_in_scope())
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
            client = self._client
            cls = type(self)
            # HAL draft §8.3: embedded resources inherit the CURIEs of those that embed them.
            curies = self._curies_in_scope()

            def build(rel: str, value: Any) -> Self | list[Self]:
                if isinstance(value, list):
                    return [cls(client, d, partial=True, curies=curies) for d in value]
                return cls(client, value, partial=True, curies=curies)

            self._embedded = RelationMap(raw, client._rel_index(list(raw), curies), build)
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
        # One index of links and embedded rels: `ns#get-foo` among the links and `ns#get_foo`
        # embedded make `get_foo` ambiguous too. A rel in both is the link.
        rel = self._all_relations().resolve_attribute(name)  # LinkNotFoundError, did-you-mean
        if rel in self.links:
            return self.links[rel]
        return self.embedded[rel]

    def _all_relations(self) -> _core.RelIndex:
        if self._index is None:
            links = self._doc.get("_links") or {}
            rels = list(links) + list(self._doc.get("_embedded") or {})
            self._index = self._client._rel_index(rels, self._curies_in_scope())
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
        return None if link is None else self._client._resolve(link["href"])

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
        return self._client._resolve(link["href"])

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
        url = self._client._resolve(following["href"])
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
                    f"<tr><td><code>{esc(self._client._short_name(rel))}</code></td>"
                    f"<td>{esc(link.href)}</td><td>{esc(variables)}</td></tr>"
                )
        embedded_rows = "".join(
            f"<tr><td><code>{esc(self._client._short_name(rel))}</code></td>"
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


class Resource(_ResourceBase[Link]):
    """A snapshot of one HAL document (immutable).

    The mapping protocol reads its state (every property but ``_links``/``_embedded``);
    attributes name relations: ``creditor.get_mandates`` is a :class:`Link`.

    >>> creditor = client.get_creditors(reference="democreditor")
    >>> creditor
    <Resource http://127.0.0.1:.../creditors/democreditor status=200 state=[...] links=6>
    >>> creditor["name"], "name" in creditor, len(creditor), list(creditor)
    ('Demo Creditor SAS', True, 2, ['reference', 'name'])
    >>> creditor.get_mandates.variables
    ['page', 'size']

    In Jupyter it shows as tables (state, links with their variables, embedded counts), and
    ``dir()`` lists its relations for tab completion.
    """

    __slots__ = ()
    _client: Client

    def _link(self, rel: str, data: Mapping[str, Any]) -> Link:
        return Link(self._client, rel, data)

    def fetch(self) -> Resource:
        """GET the ``self`` link: the full representation.

        >>> mandate = client.get_mandates(creditorReference="democreditor").embedded["mandates"][0]
        >>> full = mandate.fetch()
        >>> full.url == mandate.url, full.partial, full.status
        (True, False, 200)
        """
        return self._client._send("GET", self._self_url(), None)

    def follow(self, rel: str, **variables: Any) -> Resource:
        """GET along a relation: the same as calling the link.

        >>> client.root().follow("get-creditors", reference="democreditor")["name"]
        'Demo Creditor SAS'
        """
        return self._single_link(rel).get(**variables)

    def pages(self) -> Iterator[Resource]:
        """This page, then every ``next`` page until there is none (fetched as you go).

        >>> creditor = client.get_creditors(reference="democreditor")
        >>> [len(page.embedded["mandates"]) for page in creditor.get_mandates(size=50).pages()]
        [50, 50, 20]
        """
        page: Resource = self
        seen: set[str] = set()
        while True:
            yield page
            url = page._next_url(seen)
            if url is None:
                return
            page = self._client._send("GET", url, None)


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
