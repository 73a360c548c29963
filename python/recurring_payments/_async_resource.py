"""`AsyncResource` and `AsyncLink`: the resources and links of an `AsyncClient`
(docs/concepts.md#relations-and-their-names).

They share everything but the requests with `Resource` and `Link` (see `_resource_base.py`
and `_link_base.py`); here the requests are coroutines and `pages()` is an async iterator.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Coroutine, Mapping
from typing import TYPE_CHECKING, Any

from ._link_base import _LinkBase
from ._resource_base import _check_rel, _ResourceBase
from ._session import Session

if TYPE_CHECKING:
    from typing_extensions import Never


async def _send(
    session: Session,
    method: str,
    href: str | _LinkBase,
    variables: Mapping[str, Any] | None = None,
    body: Any = None,
    templated: bool | None = None,
    name: str | None = None,
    if_match: str | None = None,
) -> AsyncResource:
    """One request, in one call into the core (which checks, expands and resolves ``href``),
    awaited. The core hands back the request's future and the abort of its task, which is
    called when the await is interrupted (cancelled): cancelling the awaiting task cancels the
    request."""
    native = session.live()
    # Started in this task's context, before awaiting: the spans are children of its current
    # span, whichever thread records them (docs/guides/observability-otel.md).
    call = session.telemetry_call()
    request = session.request(method, href, variables, body, templated, name, if_match, call)
    if call is None:
        future, task = native.send_async(request)
    else:
        future, task = native.send_async(request, call.record)
    try:
        status, headers, document = await future
    except BaseException:
        task.abort()
        raise
    doc = {} if document is None else document
    return AsyncResource._make(session, doc, status, headers, False, ())


class AsyncLink(_LinkBase):
    """One HAL link of an :class:`AsyncClient`. Await a call (or ``.get``) to GET it;
    ``.post``/``.patch`` send JSON. Same fields as :class:`Link`.

    >>> link = asyncio.run(aclient.get_creditors.link())
    >>> link
    <AsyncLink get-creditors http://127.0.0.1:.../creditors{?reference} (templated)>
    >>> asyncio.run(link(reference="democreditor"))["name"]
    'Demo Creditor SAS'
    """

    __slots__ = ()

    def __call__(self, *positional: Never, **variables: Any) -> Coroutine[Any, Any, AsyncResource]:
        """GET this link; same as :meth:`get` (await the result). Template variables are
        keyword arguments."""
        if positional:
            raise self._positional_error()
        return self.get(**variables)

    async def get(self, *positional: Never, **variables: Any) -> AsyncResource:
        """GET this link and return the resource.

        >>> link = asyncio.run(aclient.get_creditors.link())
        >>> asyncio.run(link.get(reference="democreditor"))["name"]
        'Demo Creditor SAS'
        """
        if positional:
            raise self._positional_error(f"{self._call_name()}.get")
        self._warn_if_deprecated()
        session = self._session
        return await _send(session, "GET", self, variables, None, self.templated, self.rel)

    async def post(self, body: Any = None, /, **variables: Any) -> AsyncResource:
        """POST ``body`` as JSON to this link (never retried; see the guide "Errors and recovery").

        >>> link = asyncio.run(aclient.create_orders.link())
        >>> asyncio.run(link.post({"reference": "o-1", "started": True})).status
        201
        """
        self._warn_if_deprecated()
        session = self._session
        return await _send(session, "POST", self, variables, body, self.templated, self.rel)

    async def patch(
        self, body: Any, /, *, if_match: str | None = None, **variables: Any
    ) -> AsyncResource:
        """PATCH this link with a JSON merge patch (RFC 7396); ``if_match`` sends ``If-Match``.

        >>> order = asyncio.run(aclient.create_orders.post({"reference": "o-1"}))
        >>> asyncio.run(order.links["self"].patch({"started": True}))["started"]
        True
        """
        self._warn_if_deprecated()
        session, rel = self._session, self.rel
        return await _send(session, "PATCH", self, variables, body, self.templated, rel, if_match)


class AsyncResource(_ResourceBase[AsyncLink]):
    """A snapshot of one HAL document (immutable), from an :class:`AsyncClient`.

    The same members as :class:`Resource`; ``fetch`` and ``follow`` are coroutines, attributes
    name :class:`AsyncLink` relations and ``pages()`` is an async iterator.

    >>> creditor = asyncio.run(aclient.get_creditors(reference="democreditor"))
    >>> creditor
    <AsyncResource http://127.0.0.1:.../creditors/democreditor status=200 state=[...] links=6>
    >>> creditor["name"], creditor.get_mandates.variables
    ('Demo Creditor SAS', ['page', 'size'])
    """

    __slots__ = ()

    _link_type = AsyncLink

    async def fetch(self) -> AsyncResource:
        """GET the ``self`` link: the full representation.

        >>> page = asyncio.run(aclient.get_mandates(creditorReference="democreditor"))
        >>> mandate = page.embedded["mandates"][0]
        >>> asyncio.run(mandate.fetch()).partial
        False
        """
        return await _send(self._session, "GET", self._self_url())

    async def follow(self, rel: str, *positional: Never, **variables: Any) -> AsyncResource:
        """GET along a relation: the same as awaiting a call of the link.

        >>> root = asyncio.run(aclient.root())
        >>> asyncio.run(root.follow("get-creditors", reference="democreditor"))["name"]
        'Demo Creditor SAS'
        """
        link = self._single_link(rel)
        if positional:
            raise link._positional_error("follow", f"{rel!r}, ")
        return await link.get(**variables)

    async def pages(self) -> AsyncIterator[AsyncResource]:
        """This page, then every ``next`` page until there is none: ``async for page in
        res.pages()``. Each page is fetched when the loop asks for it.

        >>> async def count_mandates():
        ...     creditor = await aclient.get_creditors(reference="democreditor")
        ...     first = await creditor.get_mandates(size=50)
        ...     return [len(page.embedded["mandates"]) async for page in first.pages()]
        >>> asyncio.run(count_mandates())
        [50, 50, 20]
        """
        self._refuse_if_detached()
        page: AsyncResource = self
        seen: set[str] = set()
        while True:
            yield page
            url = page._next_url(seen)
            if url is None:
                return
            page = await _send(self._session, "GET", url)

    async def all(self, rel: str, /) -> AsyncIterator[AsyncResource]:
        """The resources embedded under ``rel`` on this page, then on each ``next`` page:
        ``async for mandate in page.all("mandates")``. Each further page is fetched when the
        loop reaches it; breaking out fetches nothing more. As :meth:`Resource.all`.

        >>> async def references():
        ...     creditor = await aclient.get_creditors(reference="democreditor")
        ...     first = await creditor.get_mandates(size=50)
        ...     return [mandate["reference"] async for mandate in first.all("mandates")]
        >>> found = asyncio.run(references())
        >>> len(found), found[0], found[-1]
        (120, 'MND-0001', 'MND-0120')
        """
        _check_rel(rel)
        async for page in self.pages():
            for item in page._embedded_items(rel):
                yield item
