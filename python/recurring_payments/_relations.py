"""Finding relations in a HAL document: `RelationMap` (``Resource.links`` and ``.embedded``,
looked up by full, short, attribute or CURIE name), the single link of a relation, and the
CURIEs a document declares. Shared by resources of both faces."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

from . import _core
from ._headers import Headers
from ._session import Session
from .errors import LinkNotFoundError

V = TypeVar("V")
NO_HEADERS = Headers([])  # shared by embedded resources: immutable, and there are thousands


class RelationMap(Mapping[str, V]):
    """``Resource.links`` / ``Resource.embedded``: keys are the full relations as received;
    lookups also accept the short, attribute and CURIE names of a relation.

    Values are built on first access (a follow reads one link of several). An array is a new
    list on each read: appending to one changes no later read (a resource is immutable).

    A map holds the resource's document, never the resource: a resource in a cycle with its own
    map is freed by the GC only. The subclasses build the values: two closures per map and the
    CURIEs computed up front were ~8,000 of the 39,000 instructions of a fresh resource's
    ``mandate.creditor`` (BENCHMARKS.md)."""

    __slots__ = ("_built", "_doc", "_index", "_inherited", "_make", "_raw", "_scope", "_session")

    def __init__(
        self,
        raw: Mapping[str, Any],
        session: Session,
        doc: Mapping[str, Any],
        inherited: Sequence[tuple[str, str]],
        make: Callable[..., Any],
    ):
        self._raw = raw
        self._session = session
        self._make = make  # what the subclass's `_build` calls
        self._doc = doc
        self._inherited = inherited  # the CURIEs of the resources embedding this one
        self._scope: list[tuple[str, str]] | None = None
        self._index: _core.RelIndex | None = None  # built when a name other than a full rel is used
        self._built: dict[str, V] = {}

    def _curies(self) -> list[tuple[str, str]]:
        if self._scope is None:
            self._scope = curies_in_scope(self._doc, self._inherited)
        return self._scope

    @property
    def _names(self) -> _core.RelIndex:
        if self._index is None:
            self._index = self._session.rels.of(list(self._raw), self._curies())
        return self._index

    def _build(self, rel: str, value: Any) -> V:
        raise NotImplementedError  # links and embedded resources are built differently

    def _full(self, rel: str) -> V:
        """The value of the full relation ``rel`` (KeyError if the document has none)."""
        built = self._built.get(rel)
        if built is None:
            built = self._built[rel] = self._build(rel, self._raw[rel])
        return list(built) if isinstance(built, list) else built  # type: ignore[return-value]

    def __getitem__(self, name: str) -> V:
        built = self._built.get(name)
        if built is not None:
            return list(built) if isinstance(built, list) else built  # type: ignore[return-value]
        if name in self._raw:
            return self._full(name)
        if not isinstance(name, str):  # only str keys exist (Mapping.get(1) gives its default)
            raise KeyError(name)
        try:
            rel = self._names.resolve(name)
        except UnicodeEncodeError:  # a lone surrogate: no relation has one
            raise LinkNotFoundError(f"no relation {name!r} in this resource") from None
        return self._full(rel)

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        if name in self._raw:
            return True
        try:
            return self._names.find(name) is not None
        except (LinkNotFoundError, UnicodeEncodeError):
            return False

    def __iter__(self) -> Iterator[str]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)

    def __repr__(self) -> str:
        return f"{{{', '.join(repr(k) for k in self._raw)}}}"

    def _ipython_key_completions_(self) -> list[str]:
        # `res.links["<tab>`: each relation by its short name ("get-mandates").
        names = self._names
        return [names.short_name(rel) or rel for rel in self._raw]


class LinkMap(RelationMap[V]):
    """``Resource.links``: each link made by ``make(session, rel, link_object)``."""

    __slots__ = ()

    def _build(self, rel: str, value: Any) -> V:
        make, session = self._make, self._session
        if isinstance(value, list):
            return [make(session, rel, d) for d in value]  # type: ignore[return-value]
        return make(session, rel, value)  # type: ignore[no-any-return]


class EmbeddedMap(RelationMap[V]):
    """``Resource.embedded``: each resource made by ``make._item(session, document, curies)``
    (``make`` is the embedding resource's class), an array by ``make._items(session,
    documents, curies)``, inheriting the CURIEs in scope (HAL draft §8.3)."""

    __slots__ = ()

    def _build(self, rel: str, value: Any) -> V:
        cls: Any = self._make  # the embedding resource's class
        session, curies = self._session, self._curies()
        if isinstance(value, list):
            return cls._items(session, value, curies)  # type: ignore[no-any-return]
        return cls._item(session, value, curies)  # type: ignore[no-any-return]


def curies_in_scope(
    doc: Mapping[str, Any], inherited: Sequence[tuple[str, str]]
) -> list[tuple[str, str]]:
    """The CURIEs of ``doc``'s links, then the ``inherited`` ones (of the resources embedding
    it) under other names: its own win. The list is shared by the resources it embeds."""
    own = _curies(doc.get("_links") or {})
    if inherited:
        names = {name for name, _ in own}
        own += [c for c in inherited if c[0] not in names]
    return own


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
