"""The asyncio client (docs/guides/asyncio.md): the same core, configuration and token as `Client`,
with coroutines instead of blocking calls. Requests run on the library's own I/O threads; awaiting
one lets the event loop run other tasks, and cancelling the awaiting task cancels the request.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from . import _core
from ._async_resource import AsyncLink, AsyncResource, _send
from ._client_base import _PROBES, AsyncCredentialsSource, _ClientBase, named_publicly
from ._notifications import read_notification
from ._relations import NO_HEADERS
from ._resource import Resource
from ._resource_base import attached
from ._session import Session
from .errors import LinkNotFoundError

if TYPE_CHECKING:
    from typing_extensions import Never


@named_publicly
class AsyncClient(_ClientBase[AsyncCredentialsSource]):
    """An asyncio client of the API: the constructor and :meth:`from_env` of :class:`Client`;
    requests are coroutines. One client may serve every task (and loop) of a process.

    >>> async def main():
    ...     async with rp.AsyncClient(server.base_url, credentials=server.credentials,
    ...                               profile=server.profile) as client:
    ...         creditor = await client.get_creditors(reference="democreditor")
    ...         order = await client.create_orders.post({"reference": "o-1", "started": True})
    ...         async for page in (await creditor.get_mandates(size=50)).pages():
    ...             print(len(page.embedded["mandates"]), "mandates")
    ...         return order.status
    >>> asyncio.run(main())
    50 mandates
    50 mandates
    20 mandates
    201

    Every relation of the entry point is an attribute (``client.create_orders``) whose call,
    ``.get``, ``.post`` and ``.patch`` are awaitable; the entry point is fetched once, on first
    use, and cached. Cancelling a task (``asyncio.wait_for``, ``TaskGroup``) cancels its request
    and leaves the client usable. It works under repeated ``asyncio.run()`` and after
    ``os.fork()``.
    """

    _origin: AsyncClient | None

    def _init_root_cache(self) -> None:
        self._root: AsyncResource | None = None
        self._root_fetch: _SharedFetch | None = None
        self._root_pair = None

    async def authenticate(self) -> _core.Token:
        """Fetch a token now (validates the credentials at start-up).

        >>> asyncio.run(aclient.authenticate()).scope
        'api'
        """
        native = self._live()
        # In this task's context, before awaiting: the spans are children of its current span.
        session = self._session
        call = session.telemetry_call()
        if call is None:
            future, task = native.authenticate_async(options=session.options)
        else:
            future, task = native.authenticate_async(
                headers=call.headers, recorder=call.record, options=session.options
            )
        try:
            return await future
        except BaseException:  # cancelled: so is the request
            task.abort()
            raise

    async def root(self, refresh: bool = False) -> AsyncResource:
        """The entry point (GET ``/``), cached per client; ``refresh=True`` fetches it again.

        Tasks asking for it at once share one request.

        >>> root = asyncio.run(aclient.root())
        >>> root.url == server.base_url + "/", asyncio.run(aclient.root()) is root
        (True, True)
        """
        origin = self._origin
        if origin is not None:  # derived by `with_options`: the original's, fetched with ours
            self._session.live()  # closed: raises
            return self._own_root(await origin._fetch_root(self._session, refresh))
        return await self._fetch_root(self._session, refresh)

    async def _fetch_root(self, session: Session, refresh: bool) -> AsyncResource:
        """This client's cached entry point, fetched through ``session`` when missing (or
        ``refresh``)."""
        root = self._root
        if root is not None and not refresh:
            return root
        if refresh:
            self._root = self._kept(await _send(session, "GET", "/"))
            return self._root
        loop = asyncio.get_running_loop()
        shared = self._root_fetch
        if shared is None or shared.loop is not loop:
            shared = self._root_fetch = _SharedFetch(self, session, loop)
        return await shared.join()

    def _kept(self, root: AsyncResource) -> AsyncResource:
        """``root``, fetched through this client or one derived from it, as this client's."""
        own = self._session
        return root if root._session is own else root._bound(own)

    async def get(self, url: str, **variables: Any) -> AsyncResource:
        """GET ``url`` (absolute, relative to ``base_url``, or an RFC 6570 template).

        >>> asyncio.run(aclient.get("/creditors/{reference}", reference="democreditor"))["name"]
        'Demo Creditor SAS'
        """
        return await _send(self._session, "GET", url, variables)

    async def post(self, url: str, body: Any, /, **variables: Any) -> AsyncResource:
        """POST ``body`` as JSON. Never retried (but for the one replay after a 401).

        >>> order = asyncio.run(aclient.post("/orders", {"reference": "o-1", "started": True}))
        >>> order.status, order["state"]
        (201, 'open.running')
        """
        return await _send(self._session, "POST", url, variables, body)

    async def patch(
        self, url: str, body: Any, /, *, if_match: str | None = None, **variables: Any
    ) -> AsyncResource:
        """PATCH with a JSON merge patch (``application/merge-patch+json``); ``if_match``
        sends ``If-Match`` (412 :class:`PreconditionFailedError` when it no longer matches).

        >>> order = asyncio.run(aclient.post("/orders", {"reference": "o-1"}))
        >>> asyncio.run(aclient.patch(order.url, {"started": True}, if_match=order.etag))["started"]
        True
        """
        return await _send(self._session, "PATCH", url, variables, body, if_match=if_match)

    def attach(self, res: Resource | AsyncResource, /) -> AsyncResource:
        """``res`` bound to this client as an :class:`AsyncResource` (see
        :meth:`Client.attach`): for a resource that was pickled or copied, or one of another
        client (a sync :class:`Resource` included). No I/O.

        >>> import pickle
        >>> creditor = pickle.loads(pickle.dumps(client.get_creditors(reference="democreditor")))
        >>> mine = aclient.attach(creditor)
        >>> type(mine).__name__, asyncio.run(mine.fetch())["name"]
        ('AsyncResource', 'Demo Creditor SAS')
        """
        return attached(AsyncResource, self._session, res)

    def parse_notification(self, body: bytes | str, /) -> AsyncResource:
        """The HAL document the API POSTed to your notification URL, as an
        :class:`AsyncResource` bound to this client, without any request (not awaited): the
        sender's claim, refused as :meth:`Client.parse_notification` says.

        >>> body = server.notification_body("/creditors/democreditor")
        >>> aclient.parse_notification(body)["name"]
        'Demo Creditor SAS'
        """
        document, _ = read_notification(self._base_url, body, self._config.max_response_size)
        return AsyncResource._make(self._session, document, None, NO_HEADERS, False, ())

    async def verify_notification(self, body: bytes | str, /) -> AsyncResource:
        """The resource a notification names, as the API serves it now: the checks of
        :meth:`parse_notification`, then one GET of its ``self`` link (see
        :meth:`Client.verify_notification`).

        >>> body = server.notification_body("/creditors/democreditor")
        >>> asyncio.run(aclient.verify_notification(body)).status
        200
        """
        _, url = read_notification(self._base_url, body, self._config.max_response_size)
        return await _send(self._session, "GET", url, templated=False)

    async def aclose(self) -> None:
        """Forget the token and the cached entry point; later requests raise RuntimeError.
        Requests already under way finish.

        >>> asyncio.run(aclient.aclose())
        >>> asyncio.run(aclient.root())
        Traceback (most recent call last):
        ...
        RuntimeError: this client is closed
        """
        self._close()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __getattr__(self, name: str) -> _EntryRelation:
        # Relations of the entry point; private and dunder names are never relations, nor the
        # names introspection tools probe and call (IPython's `obj.getdoc()`): answering those
        # with a relation would create a coroutine nobody awaits.
        if name.startswith("_") or name in _PROBES:
            raise AttributeError(name)
        if name == "close":  # contextlib.closing, habit from Client: it must be awaited
            raise AttributeError(
                "'AsyncClient' has no close(): use `await aclient.aclose()` (or `async with`)"
            )
        if self._root is not None:
            _entry_link(self._root, name)  # known already: a wrong name fails here, not later
        return _EntryRelation(self, name)

    def __dir__(self) -> list[str]:
        names = set(super().__dir__())
        # Tab completion cannot await: relations once fetched (by the original client).
        root = getattr(getattr(self, "_origin", None) or self, "_root", None)
        if root is not None:
            names |= set(root._all_relations().attribute_names()) - _PROBES - {"close"}
        return sorted(names)


def _entry_link(root: AsyncResource, name: str) -> AsyncLink:
    link = getattr(root, name)
    if not isinstance(link, AsyncLink):
        raise LinkNotFoundError(f"{name!r} is not a single link of the entry point")
    return link


class _EntryRelation:
    """A relation of the entry point of an :class:`AsyncClient` (``client.create_orders``),
    usable before the entry point is fetched: ``await client.get_creditors(reference="x")``.
    Its call, ``get``, ``post`` and ``patch`` fetch the entry point first if needed;
    ``await rel.link()`` gives the :class:`AsyncLink` itself.

    >>> aclient.get_creditors
    <relation 'get_creditors' of the entry point of http://127.0.0.1:...>
    >>> asyncio.run(aclient.get_creditors(reference="democreditor"))["name"]
    'Demo Creditor SAS'
    """

    __slots__ = ("_client", "_name")

    def __init__(self, client: AsyncClient, name: str) -> None:
        self._client = client
        self._name = name

    async def link(self) -> AsyncLink:
        """The :class:`AsyncLink` of the entry point (fetched once per client).

        >>> asyncio.run(aclient.get_creditors.link()).variables
        ['reference']
        """
        return _entry_link(await self._client.root(), self._name)

    def __call__(self, *positional: Never, **variables: Any) -> Coroutine[Any, Any, AsyncResource]:
        """GET the link; same as :meth:`get` (await the result)."""
        if positional:
            return self._refuse_positional(self._name)
        return self.get(**variables)

    async def get(self, *positional: Never, **variables: Any) -> AsyncResource:
        """GET the link and return the resource.

        >>> asyncio.run(aclient.get_creditors.get(reference="democreditor"))["name"]
        'Demo Creditor SAS'
        """
        if positional:
            return await self._refuse_positional(f"{self._name}.get")
        return await (await self.link()).get(**variables)

    async def _refuse_positional(self, call: str) -> AsyncResource:
        # The link's variables name the keywords to use: known once the entry point is.
        raise (await self.link())._positional_error(call)

    async def post(self, body: Any = None, /, **variables: Any) -> AsyncResource:
        """POST ``body`` as JSON to the link (never retried; see the guide "Errors and recovery").

        >>> asyncio.run(aclient.create_orders.post({"reference": "o-1"})).status
        201
        """
        return await (await self.link()).post(body, **variables)

    async def patch(
        self, body: Any, /, *, if_match: str | None = None, **variables: Any
    ) -> AsyncResource:
        """PATCH the link with a JSON merge patch (RFC 7396).

        >>> server.add_link("get-order", "/orders/{id}", templated=True)
        >>> order = asyncio.run(aclient.create_orders.post({"reference": "o-1"}))
        >>> asyncio.run(aclient.get_order.patch({"started": True}, id=order["id"]))["started"]
        True
        """
        return await (await self.link()).patch(body, if_match=if_match, **variables)

    def __repr__(self) -> str:
        return f"<relation {self._name!r} of the entry point of {self._client.base_url}>"


class _SharedFetch:
    """One GET of the entry point shared by the tasks of a loop that want it at once. It is
    cancelled (and forgotten) when every task waiting for it has been cancelled."""

    __slots__ = ("_client", "_session", "_task", "_waiters", "loop")

    def __init__(
        self, client: AsyncClient, session: Session, loop: asyncio.AbstractEventLoop
    ) -> None:
        self._client = client
        self._session = session  # the client's, or that of the derived client asking first
        self.loop = loop
        self._waiters = 0
        self._task = loop.create_task(self._fetch())

    async def _fetch(self) -> AsyncResource:
        try:
            root = self._client._kept(await _send(self._session, "GET", "/"))
            self._client._root = root
            return root
        finally:
            self._forget()

    def _forget(self) -> None:
        if self._client._root_fetch is self:
            self._client._root_fetch = None

    async def join(self) -> AsyncResource:
        self._waiters += 1
        try:
            # shield: one waiter's cancellation must not cancel the others' request.
            return await asyncio.shield(self._task)
        finally:
            self._waiters -= 1
            if self._waiters == 0 and not self._task.done():
                self._forget()  # a task arriving now starts afresh instead of joining a cancel
                self._task.cancel()
