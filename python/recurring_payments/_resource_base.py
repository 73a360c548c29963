"""What `Resource` and `AsyncResource` share: the state (a read-only mapping), the relations
(links, embedded, attributes), the response facts and the display. The faces
(`_resource.py`, `_async_resource.py`) add the navigation, blocking or as coroutines."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from gc import is_tracked as _is_tracked
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from . import _core
from ._core import resource_items as _resource_items
from ._core import track as _track
from ._headers import Headers
from ._link_base import _LinkBase
from ._relations import (
    NO_HEADERS,
    EmbeddedMap,
    LinkMap,
    RelationMap,
    _only_link,
    curies_in_scope,
)
from ._session import DetachedSession, Session
from .errors import Error, LinkNotFoundError, ProtocolError

if TYPE_CHECKING:
    from typing_extensions import Self

L = TypeVar("L", bound=_LinkBase)
R = TypeVar("R", bound="_ResourceBase[Any]")

# Response bodies arrive as `_core.Document`: a read-only mapping converting fields on access.
Mapping.register(_core.Document)
Mapping.register(_core.Links)  # a document's `_links`, read one relation at a time
_new = _core._ResourceCore.__new__
_Document = _core.Document


class _ResourceBase(_core._ResourceCore, Mapping[str, Any], Generic[L]):
    """What :class:`Resource` and ``AsyncResource`` share: the state, relations, response
    facts and display. Subclasses add the navigation (``fetch``, ``follow``, ``pages``).

    The state lives in the native base (``_core._ResourceCore``), which also answers the
    mapping protocol, ``get``, ``data`` and ``url`` in native slots: a page's loop reads them
    thousands of times."""

    __slots__ = ()

    # Declared for the type checkers; the native base holds them.
    _session: Session
    _doc: Mapping[str, Any]
    _status: int | None
    _headers: Headers | Iterable[tuple[str, str]] | None  # a reply's pairs until first read
    _partial: bool
    _inherited: Sequence[tuple[str, str]]
    _link_map: RelationMap[L | list[L]] | None
    _embedded_map: RelationMap[Any] | None
    _index: _core.RelIndex | None
    _attributes: dict[str, Any] | None  # relations read as attributes

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
        pass  # the native base's __new__ took every argument

    @classmethod
    def _make(
        cls,
        session: Session,
        document: Mapping[str, Any],
        status: int | None,
        headers: Headers | Iterable[tuple[str, str]] | None,
        partial: bool,
        curies: Sequence[tuple[str, str]],
    ) -> Self:
        """What ``cls(session, document, status=..., headers=..., partial=..., curies=...)``
        makes, for every response and the thousands of items of a page: a call with keywords
        passes them through a dict in CPython 3.11, which cost a third of building an item and
        ~350 ns of each request (BENCHMARKS.md). ``headers`` may be a reply's header pairs,
        wrapped in :class:`Headers` when first read."""
        return _new(cls, session, document, status, headers, partial, curies)

    def _bound(self, session: Session) -> Self:
        """This response as seen through another client sharing the same native client (a
        client derived by ``with_options``): the same document, links followed through
        ``session``."""
        cls = type(self)
        return cls._make(
            session, self._doc, self._status, self._headers, self._partial, self._inherited
        )

    @classmethod
    def _item(
        cls, session: Session, document: Mapping[str, Any], curies: Sequence[tuple[str, str]]
    ) -> Self:
        """An embedded resource (partial, without status or headers). The items of an array
        are made by `_items`, in the core when the class allows."""
        return cls._make(session, document, None, None, True, curies)

    # Whether a class's embedded items may be made untracked by the cycle collector
    # (`_items`): only when its instances have no slot or `__dict__` beyond ours, so that
    # nothing but what this class keeps (and tracks the item before keeping) can lead back.
    _untrackable = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._untrackable = (
            cls.__dictoffset__ == 0 and cls.__basicsize__ == _ResourceBase.__basicsize__
        )

    @classmethod
    def _items(
        cls, session: Session, documents: list[Any], curies: Sequence[tuple[str, str]]
    ) -> list[Self]:
        """The resources of an embedded array. They are made untracked by the cycle collector
        when the class allows (`_untrackable`): a page's 5,000 items then trigger no collection
        that traverses or promotes them, nor the full collections of the whole heap that
        promoted objects bring (BENCHMARKS.md). What a fresh item holds (its session, document
        and CURIEs) cannot lead back to it; before it keeps more (links, embedded resources,
        relations read as attributes), it is tracked again."""
        return _resource_items(cls, session, documents, curies, cls._untrackable)

    # --- the state (Mapping protocol): `__getitem__`, `__contains__`, `__iter__`, `__len__`,
    # `get` and `data` are the native base's -----------------------------------------------

    # --- relations ---------------------------------------------------------------------------
    _link_type: type[L]  # each face's kind of link

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
        links = self._link_map
        if links is None:
            if not _is_tracked(self):  # an embedded item about to keep objects (`_items`)
                _track(self)
            raw = self._doc.get("_links") or {}
            links = self._link_map = LinkMap(
                raw, self._session, self._doc, self._inherited, self._link_type
            )
            attributes = self._attributes
            if attributes:  # links read as attributes first: the map gives the same objects
                built = links._built
                for value in attributes.values():
                    if isinstance(value, self._link_type):
                        built[value.rel] = value
        return links

    @property
    def embedded(self) -> RelationMap[Self | list[Self]]:
        """Relation -> embedded resource of the same class (or a list), each possibly partial.

        >>> page = client.get_mandates(creditorReference="democreditor")
        >>> mandates = page.embedded["mandates"]
        >>> len(mandates), mandates[0].partial, mandates[0]["reference"]
        (20, True, 'MND-0001')
        """
        embedded = self._embedded_map
        if embedded is None:
            if not _is_tracked(self):  # an embedded item about to keep objects (`_items`)
                _track(self)
            raw = self._doc.get("_embedded") or {}
            embedded = self._embedded_map = EmbeddedMap(
                raw, self._session, self._doc, self._inherited, type(self)
            )
        return embedded

    # A relation read as an attribute (`mandate.creditor`): the native base's `__getattribute__`
    # finds methods, properties and other attributes first, then makes a response's plain link
    # with no Python frame and hands everything else to `_relation_slow`. Declared for the type
    # checkers only: a `__getattr__` in the class would make CPython raise an AttributeError
    # before each relation read.
    if TYPE_CHECKING:

        def __getattr__(self, name: str) -> Any: ...

    def _relation_slow(self, name: str) -> Any:
        """``self.<name>`` as the relation it stands for, kept in ``_attributes`` (an array
        is a new list on each read), once ``_attributes`` has no such name: the native caller
        looked, or could not read the name (a lone surrogate), which no relation has.
        LinkNotFoundError, with a did-you-mean, when none or ambiguous."""
        if name.startswith("_"):
            raise AttributeError(name)
        attributes = self._attributes
        if attributes is None:
            if not _is_tracked(self):  # an embedded item about to keep objects (`_items`)
                _track(self)
            attributes = self._attributes = {}
        # One index of links and embedded rels: `ns#get-foo` among the links and `ns#get_foo`
        # embedded make `get_foo` ambiguous too. A rel in both is the link.
        doc = self._doc
        try:
            if type(doc) is _Document:  # a response's: looked up by the core, nothing converted
                rel, is_link, _, _ = self._session.rels.attribute(doc, self._inherited, name)
            else:
                rel = self._all_relations().resolve_attribute(name)
                is_link = rel in self.links._raw
        except UnicodeEncodeError:  # a lone surrogate (getattr(res, "x\udc80")): no rel has one
            raise LinkNotFoundError(f"no relation {name!r} in this resource") from None
        value = self.links._full(rel) if is_link else self.embedded._full(rel)
        if not isinstance(value, list):  # an array is a new list on each read
            attributes[name] = value
        return value

    def _all_relations(self) -> _core.RelIndex:
        if self._index is None:
            doc, cache = self._doc, self._session.rels
            if isinstance(doc, _core.Document):  # read from the body, nothing converted
                self._index = cache.of_document(doc, self._inherited)
            else:  # an empty body's {}
                rels = list(doc.get("_links") or {}) + list(doc.get("_embedded") or {})
                self._index = cache.of(rels, curies_in_scope(doc, self._inherited))
        return self._index

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self._all_relations().attribute_names()))

    # --- response facts ----------------------------------------------------------------------
    def _url_of_self(self) -> str | None:
        """``url`` (the native base's) of a ``self`` link it does not read itself: templated,
        an array of one, with more members, or in a document that is a plain mapping."""
        link = _only_link(self._doc, "self")
        return None if link is None else self._link_url(link, "self")

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
        headers = self._headers
        if headers is None:  # an embedded resource's
            return NO_HEADERS
        if not isinstance(headers, Headers):  # a reply's pairs (native), wrapped when first read
            headers = self._headers = Headers(headers)
        return headers

    @property
    def etag(self) -> str | None:
        """The ``ETag`` response header, or ``None``.

        >>> client.root().etag  # the sandbox's are strong: quoted, no W/
        '"..."'
        """
        return self.headers.get("etag")

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
        return self._link_url(link, "self")

    def _link_url(self, link: Mapping[str, Any], rel: str) -> str:
        """The absolute URL that calling this link with no variables addresses: a templated
        ``self`` or ``next`` (Spring Data REST's ``/people{?page,size}``) is expanded, not
        sent with its braces."""
        href = link["href"]
        if link.get("templated") is True:
            return self._session.expand(href, {}, True, rel)
        return self._session.resolve(href)

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
        links raise ``LinkNotFoundError``. ``seen`` holds the URLs of the pages so far (each
        ``next`` followed, and each page's own ``self``): a ``next`` back to one of them is a
        looping server, a ``ProtocolError`` before anything is fetched again."""
        following = _only_link(self._doc, "next", strict=True)
        if following is None:
            return None
        own = self._shown_url()
        if own is not None:
            seen.add(own)
        url = self._link_url(following, "next")
        if url in seen:
            raise ProtocolError(f"pagination loops back to {url}", method="GET", url=url)
        seen.add(url)
        return url

    def _embedded_items(self, rel: str) -> list[Self]:
        """The resources embedded under ``rel`` on this page (``all(rel)``): an array's items,
        a single resource as one item, none when the page has no such relation. ``rel`` is
        found as any relation name is (full, short, CURIE); an ambiguous name raises
        ``LinkNotFoundError``, and so does a name that looks like a misspelling of an embedded
        relation (the did-you-mean of ``res.embedded[rel]``), rather than yield nothing."""
        embedded = self.embedded
        if rel in embedded._raw:
            full: str | None = rel
        else:
            try:
                full = embedded._names.find_unless_misspelt(rel)
            except UnicodeEncodeError:  # a lone surrogate: no relation has one
                full = None
        if full is None:
            return []
        value = embedded._full(full)
        return value if isinstance(value, list) else [value]

    def _refuse_if_detached(self) -> None:
        """Navigation of a pickled or copied resource raises ``ConfigurationError`` naming
        ``client.attach(res)``, before anything else happens."""
        session = self._session
        if session.detached:
            session.live()  # raises

    # --- travelling (pickle, copy) -----------------------------------------------------------
    def __reduce__(self) -> tuple[Any, ...]:
        # Its document (pickled as the JSON text, indexed again when loaded), response facts and
        # inherited CURIEs, and of its client only the base URL and namespace (`Session`): never
        # the client, its token or credentials. Caches (links, indexes) are made again on use.
        args = (self._session, self._doc, self._status, self.headers, self._partial)
        return (_rebuild, (type(self), *args, list(self._inherited)))

    def to_dict(self) -> dict[str, Any]:
        """The whole document as received, ``_links`` and ``_embedded`` included (a copy).

        >>> sorted(client.get_creditors(reference="democreditor").to_dict())
        ['_links', 'name', 'reference']
        """
        doc = self._doc
        return doc.to_dict() if isinstance(doc, _core.Document) else copy.deepcopy(dict(doc))

    # --- display -----------------------------------------------------------------------------
    def _shown_url(self) -> str | None:
        """``url`` for a display, which never raises (a malformed templated ``self``)."""
        try:
            return self.url
        except Error:
            return None

    def __repr__(self) -> str:
        url = self._shown_url()
        parts = [f"<{type(self).__name__} {_printable(url or '(no self link)')}"]
        if self._status is not None:
            parts.append(f"status={self._status}")
        if self._partial:
            parts.append("partial")
        keys = list(self)
        if keys:
            shown = ", ".join(map(_printable, keys[:6])) + (", …" if len(keys) > 6 else "")
            parts.append(f"state=[{shown}]")
        n_links = len(self._doc.get("_links") or {})
        if n_links:
            parts.append(f"links={n_links}")
        embedded = self._doc.get("_embedded") or {}
        if embedded:
            counts = ", ".join(
                _printable(rel) + (f"[{len(v)}]" if isinstance(v, list) else "")
                for rel, v in embedded.items()
            )
            parts.append(f"embedded=[{counts}]")
        return " ".join(parts) + ">"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))

    def _ipython_key_completions_(self) -> list[str]:
        return list(self)  # `res["<tab>`: the state's keys

    def _repr_html_(self) -> str:
        import html  # notebooks only

        esc = html.escape
        rows = "".join(
            f"<tr><td><code>{esc(str(k))}</code></td><td>{esc(repr(v))}</td></tr>"
            for k, v in self.items()
        )
        link_rows = []
        for rel, value in self.links.items():
            for link in value if isinstance(value, list) else [value]:
                try:
                    variables = ", ".join(link.variables) if link.templated else ""
                except Error:  # a malformed template: shown, a display never raises
                    variables = "(malformed template)"
                link_rows.append(
                    f"<tr><td><code>{esc(self._session.short_name(rel))}</code></td>"
                    f"<td>{esc(link.href)}</td><td>{esc(variables)}</td></tr>"
                )
        embedded_rows = "".join(
            f"<tr><td><code>{esc(self._session.short_name(rel))}</code></td>"
            f"<td>{len(v) if isinstance(v, list) else 1}</td></tr>"
            for rel, v in (self._doc.get("_embedded") or {}).items()
        )
        title = esc(self._shown_url() or "resource")
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


def _check_rel(rel: object) -> None:
    if not isinstance(rel, str):
        raise TypeError(f"rel must be a str, not {type(rel).__name__}")


def _rebuild(
    cls: type[_ResourceBase[Any]],
    session: Session,
    document: Mapping[str, Any],
    status: int | None,
    headers: Headers,
    partial: bool,
    curies: list[tuple[str, str]],
) -> _ResourceBase[Any]:
    """A resource from its pickle or copy: detached (``client.attach(res)`` binds it again).
    A pickle or deep copy brings a `DetachedSession` already; ``copy.copy`` passes the
    original's session, which is replaced so that any copy is detached."""
    if not session.detached:
        session = DetachedSession(session.base_url, session.rel_namespace)
    return cls._make(session, document, status, headers, partial, curies)


def attached(cls: type[R], session: Session, res: object) -> R:
    """``res`` (a resource of either face, attached or not) bound to ``session`` as a ``cls``:
    the same document, status, headers and CURIEs (``client.attach``)."""
    if not isinstance(res, _ResourceBase):
        raise TypeError(f"attach() takes a Resource or AsyncResource, not {type(res).__name__}")
    args = (res._doc, res._status, res.headers, res._partial, res._inherited)
    return cls._make(session, *args)


def _printable(text: str) -> str:
    """``text`` as it is, or quoted with its escapes when it holds a newline, a control
    character or a terminal's escape sequence: a repr stays one line, and a log safe to print."""
    return text if text.isprintable() else repr(text)
