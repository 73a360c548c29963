"""Finding relations in a HAL document: `RelationMap` (``Resource.links`` and ``.embedded``,
looked up by full, short, attribute or CURIE name), the single link of a relation, and the
CURIEs a document declares. Shared by resources of both faces."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

from . import _core
from .errors import LinkNotFoundError

V = TypeVar("V")


class RelationMap(Mapping[str, V]):
    """``Resource.links`` / ``Resource.embedded``: keys are the full relations as received;
    lookups also accept the short, attribute and CURIE names of a relation.

    Values are built on first access (a follow reads one link of several). An array is a new
    list on each read: appending to one changes no later read (a resource is immutable)."""

    __slots__ = ("_built", "_index", "_indexed", "_make", "_raw")

    def __init__(
        self,
        raw: Mapping[str, Any],
        indexed: Callable[[], _core.RelIndex],
        make: Callable[[str, Any], V],
    ):
        self._raw = raw
        self._indexed = indexed  # the index, built when a name other than a full rel is used
        self._index: _core.RelIndex | None = None
        self._make = make
        self._built: dict[str, V] = {}

    @property
    def _names(self) -> _core.RelIndex:
        if self._index is None:
            self._index = self._indexed()
        return self._index

    def __getitem__(self, name: str) -> V:
        built = self._built.get(name)
        if built is None:
            rel = name if name in self._raw else self._names.resolve(name)
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
            return self._names.find(name) is not None
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
        names = self._names
        return [names.short_name(rel) or rel for rel in self._raw]


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
