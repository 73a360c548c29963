"""`Headers`: the read-only, case-insensitive header mapping of responses and errors.

A module of its own so that `errors` (whose exceptions carry headers) and `_resource` (which
raises those exceptions) can both import it without importing each other.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

# Masked in repr(): a response could set a session cookie.
_SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "set-cookie"})


class Headers(Mapping[str, str]):
    """Response headers: a read-only mapping with case-insensitive names.

    Repeated headers are joined with ``", "`` (``Set-Cookie`` excepted: the last one wins).

    >>> headers = client.root().headers
    >>> headers["Content-Type"] == headers["content-type"], "ETag" in headers
    (True, True)
    >>> headers["content-type"]
    'application/hal+json; profile="http://127.0.0.1:.../alps/v1";charset=UTF-8'
    """

    __slots__ = ("_items", "_pairs")

    def __init__(self, pairs: Iterable[tuple[str, str]] | None = None) -> None:
        # Folded on first use: most responses' headers are never read (a reply's are a native
        # object that makes its strings only then).
        self._pairs = pairs
        self._items: dict[str, str] | None = None

    def _map(self) -> dict[str, str]:
        items = self._items
        if items is None:
            items = {}
            for name, value in self._pairs or ():
                key = name.lower()
                if key in items and key != "set-cookie":
                    items[key] = f"{items[key]}, {value}"
                else:
                    items[key] = value
            self._items, self._pairs = items, None
        return items

    def __getitem__(self, name: str) -> str:
        if not isinstance(name, str):  # only str names exist (Mapping.get(1) gives its default)
            raise KeyError(name)
        return self._map()[name.lower()]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._map()

    def __iter__(self) -> Iterator[str]:
        return iter(self._map())

    def __len__(self) -> int:
        return len(self._map())

    def __repr__(self) -> str:
        shown = {k: "***" if k in _SECRET_HEADERS else v for k, v in self._map().items()}
        return f"Headers({shown!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        # Errors carry headers and must pickle under every protocol: slots alone do not (0, 1).
        return (Headers, (list(self._map().items()),))
