"""`AsyncResource` and `AsyncLink`: the resources and links of an `AsyncClient` (API.md §4).

They share everything but the requests with `Resource` and `Link` (see `_resource.py`); here
the requests are coroutines and `pages()` is an async iterator.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Coroutine, Mapping
from typing import TYPE_CHECKING, Any

from ._resource import _LinkBase, _ResourceBase

if TYPE_CHECKING:
    from ._async_client import AsyncClient


class AsyncLink(_LinkBase):
    """One HAL link of an :class:`AsyncClient`. Await a call (or ``.get``) to GET it;
    ``.post``/``.patch`` send JSON. Same fields as :class:`Link`.

    >>> link = creditor.get_mandates                              # doctest: +SKIP
    >>> link.variables                                            # doctest: +SKIP
    ['creditorReference', 'reference', 'rum', 'id', 'paymentScheme']
    >>> page = await link(creditorReference="democreditor")       # doctest: +SKIP
    """

    __slots__ = ()
    _client: AsyncClient

    def __call__(self, **variables: Any) -> Coroutine[Any, Any, AsyncResource]:
        """GET this link; same as :meth:`get` (await the result)."""
        return self.get(**variables)

    async def get(self, **variables: Any) -> AsyncResource:
        """GET this link and return the resource."""
        self._warn_if_deprecated()
        return await self._client._send("GET", self._target(variables), None)

    async def post(self, body: Any = None, /, **variables: Any) -> AsyncResource:
        """POST ``body`` as JSON to this link (never retried; see the README)."""
        self._warn_if_deprecated()
        body = {} if body is None else body
        return await self._client._send("POST", self._target(variables), body)

    async def patch(self, body: Any, /, **variables: Any) -> AsyncResource:
        """PATCH this link with a JSON merge patch (RFC 7396)."""
        self._warn_if_deprecated()
        return await self._client._send("PATCH", self._target(variables), body)


class AsyncResource(_ResourceBase[AsyncLink]):
    """A snapshot of one HAL document (immutable), from an :class:`AsyncClient`.

    The same members as :class:`Resource`; ``fetch`` and ``follow`` are coroutines, attributes
    name :class:`AsyncLink` relations and ``pages()`` is an async iterator.

    >>> creditor = await client.get_creditors(reference="democreditor")  # doctest: +SKIP
    >>> creditor["reference"], creditor.url                              # doctest: +SKIP
    ('democreditor', 'http://127.0.0.1:.../creditors/democreditor')
    >>> async for page in (await creditor.get_mandates()).pages():       # doctest: +SKIP
    ...     print(len(page.embedded["mandates"]))
    """

    __slots__ = ()
    _client: AsyncClient

    def _link(self, rel: str, data: Mapping[str, Any]) -> AsyncLink:
        return AsyncLink(self._client, rel, data)

    async def fetch(self) -> AsyncResource:
        """GET the ``self`` link: the full representation."""
        return await self._client._send("GET", self._self_url(), None)

    async def follow(self, rel: str, **variables: Any) -> AsyncResource:
        """GET along a relation: ``await res.follow("get-creditors", reference="x")``."""
        return await self._single_link(rel).get(**variables)

    async def pages(self) -> AsyncIterator[AsyncResource]:
        """This page, then every ``next`` page until there is none: ``async for page in
        res.pages()``. Each page is fetched when the loop asks for it."""
        page: AsyncResource = self
        seen: set[str] = set()
        while True:
            yield page
            url = page._next_url(seen)
            if url is None:
                return
            page = await self._client._send("GET", url, None)
