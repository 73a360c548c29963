"""The synchronous client (docs/reference/index.md#clients): blocking requests over the shared
`_ClientBase`."""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING, Any

from . import _core
from ._client_base import _PROBES, CredentialsSource, _ClientBase, named_publicly
from ._green import _blocking
from ._notifications import read_notification
from ._relations import NO_HEADERS
from ._resource import Link, Resource, _send
from ._resource_base import attached
from ._session import Session
from .errors import LinkNotFoundError

if TYPE_CHECKING:  # the async face loads on first use (asyncio is a third of the import)
    from ._async_resource import AsyncResource


@named_publicly
class Client(_ClientBase[CredentialsSource]):
    """A client of the API, safe to share between threads (one per process is the norm).

    >>> client = rp.Client(server.base_url, credentials=server.credentials,
    ...                    profile=server.profile, timeout=10.0)
    >>> creditor = client.get_creditors(reference="democreditor")
    >>> creditor["name"], creditor.status
    ('Demo Creditor SAS', 200)
    >>> client.create_orders.post({"reference": "o-1", "started": True}).status
    201

    Every relation of the entry point is an attribute (``client.create_orders``); the entry
    point is fetched once, on first use, and cached. ``with rp.Client(...) as client:`` closes
    it at the end of the block. Constructor arguments: see the guide "Configuration" of the
    documentation (``base_url``, ``credentials`` and ``profile`` are required).

    ``token_store="redis://host:6379/0"`` (or ``rediss://`` for TLS; ``from_env`` reads
    ``TOKEN_STORE``) shares one token between every process, on any machine, configured with
    the same ``base_url`` and credentials: one token request per renewal for the whole fleet.
    Redis holds it encrypted with a key derived from the credentials, under a key name that
    shows no app name, creditor or secret, until it is due for renewal. If Redis is down, slow
    (a command over ``connect_timeout``) or refusing, the client uses its own token, logs a
    WARNING at most once a minute, and no request fails because of the store.

    ``request_id_headers=("Request-Id", "X-Request-Id", "X-Correlation-Id")`` names the
    response headers that carry the request id support asks for: the first present is
    ``err.request_id`` of an ``HTTPError`` or ``ProtocolError``, ends its message, and is in
    the attempt's DEBUG line and span. ``proxy="http://user:pass@host:3128"`` sends every
    request through that proxy (token requests included; ``from_env`` reads ``PROXY``), whose
    credentials are never shown; ``trust_env=False`` ignores ``HTTP(S)_PROXY``, ``ALL_PROXY``
    and ``NO_PROXY``.
    """

    _origin: Client | None

    def _init_root_cache(self) -> None:
        self._root: Resource | None = None
        self._root_pair = None
        self._root_lock = threading.Lock()
        self._root_lock_made = (os.getpid(), threading.Lock)

    def authenticate(self) -> _core.Token:
        """Fetch a token now (validates the credentials at start-up).

        >>> token = client.authenticate()
        >>> token.scope, token == client.token
        ('api', True)
        """
        native = self._live()
        session = self._session
        call = session.telemetry_call()
        if call is None:
            return _blocking(native.authenticate, options=session.options)
        try:  # recorded on this thread, as `_resource._send` does
            return _blocking(
                native.authenticate,
                headers=call.headers,
                recorder=call.sink,
                options=session.options,
            )
        finally:
            call.flush()

    def root(self, refresh: bool = False) -> Resource:
        """The entry point (GET ``/``), cached per client; ``refresh=True`` fetches it again.

        >>> root = client.root()
        >>> root.url == server.base_url + "/", client.root() is root
        (True, True)
        >>> client.root(refresh=True) is root
        False
        """
        origin = self._origin
        if origin is not None:  # derived by `with_options`: the original's, fetched with ours
            self._session.live()  # closed: raises
            return self._own_root(origin._fetch_root(self._session, refresh))
        return self._fetch_root(self._session, refresh)

    def _fetch_root(self, session: Session, refresh: bool) -> Resource:
        """This client's cached entry point, fetched through ``session`` when missing (or
        ``refresh``)."""
        root = self._root
        if root is not None and not refresh:
            return root
        with self._root_guard():
            if self._root is None or refresh:
                fetched = _send(session, "GET", "/")
                own = self._session
                self._root = fetched if session is own else fetched._bound(own)
            return self._root

    def get(self, url: str, **variables: Any) -> Resource:
        """GET ``url`` (absolute, relative to ``base_url``, or an RFC 6570 template).

        >>> client.get("/creditors/{reference}", reference="democreditor")["name"]
        'Demo Creditor SAS'
        """
        return _send(self._session, "GET", url, variables)

    def post(self, url: str, body: Any, /, **variables: Any) -> Resource:
        """POST ``body`` as JSON. Never retried (but for the one replay after a 401).

        >>> order = client.post("/orders", {"reference": "o-1", "started": True})
        >>> order.status, order["state"]
        (201, 'open.running')
        """
        return _send(self._session, "POST", url, variables, body)

    def patch(
        self, url: str, body: Any, /, *, if_match: str | None = None, **variables: Any
    ) -> Resource:
        """PATCH with a JSON merge patch (``application/merge-patch+json``).

        ``if_match`` (typically ``res.etag``) sends ``If-Match``: the server applies the patch
        only to that version, else answers 412 (:class:`PreconditionFailedError`).

        >>> order = client.post("/orders", {"reference": "o-1"})
        >>> client.patch(order.url, {"started": True}, if_match=order.etag)["started"]
        True
        """
        return _send(self._session, "PATCH", url, variables, body, if_match=if_match)

    def attach(self, res: Resource | AsyncResource, /) -> Resource:
        """``res`` bound to this client: the same document (state, links, embedded resources,
        status, headers) as a :class:`Resource` whose links this client follows. For a resource
        that was pickled or copied (detached: its links raise ``ConfigurationError``), or one
        of another client (an ``AsyncResource`` included). No I/O.

        >>> import pickle
        >>> creditor = pickle.loads(pickle.dumps(client.get_creditors(reference="democreditor")))
        >>> creditor.fetch()
        Traceback (most recent call last):
        ...
        recurring_payments.errors.ConfigurationError: this resource was pickled or copied ...
        >>> client.attach(creditor).fetch()["name"]
        'Demo Creditor SAS'
        """
        return attached(Resource, self._session, res)

    def parse_notification(self, body: bytes | str, /) -> Resource:
        """The HAL document the API POSTed to your notification URL, as a :class:`Resource`
        bound to this client, without any request: everything in it is the sender's claim
        (use :meth:`verify_notification` to act on it). ``body`` is the request's raw body.

        Refused with :class:`ProtocolError` before anything is sent: a body that is not a HAL
        JSON object, is larger than ``max_response_size`` (a ``str`` counts in UTF-8 bytes) or
        nested too deep, or whose ``self`` link is missing, empty, one of several, a template
        that needs variables, not on the API's origin (scheme, host and port of
        ``base_url``), or carries userinfo.

        >>> body = server.notification_body("/creditors/democreditor")
        >>> claim = client.parse_notification(body)
        >>> claim["name"], claim.status
        ('Demo Creditor SAS', None)
        >>> client.parse_notification(b'{"_links": {"self": {"href": "https://evil.example/x"}}}')
        Traceback (most recent call last):
        ...
        recurring_payments.errors.ProtocolError: notification refused: its self link ...
        """
        document, _ = read_notification(self._base_url, body, self._config.max_response_size)
        return Resource._make(self._session, document, None, NO_HEADERS, False, ())

    def verify_notification(self, body: bytes | str, /) -> Resource:
        """The resource a notification names, as the API serves it now: the checks of
        :meth:`parse_notification`, then one GET of its ``self`` link with this client's token
        (a call with its deadline and retries, as any GET). Nothing of the posted body is in
        the result: a forged body costs one GET and gives the real resource or an
        :class:`HTTPError` (e.g. :class:`NotFoundError`).

        >>> body = server.notification_body("/creditors/democreditor")
        >>> creditor = client.verify_notification(body)
        >>> creditor["name"], creditor.status
        ('Demo Creditor SAS', 200)
        """
        _, url = read_notification(self._base_url, body, self._config.max_response_size)
        return _send(self._session, "GET", url, templated=False)

    def close(self) -> None:
        """Forget the token and the cached entry point; later requests raise RuntimeError.

        >>> client.close()
        >>> client.root()
        Traceback (most recent call last):
        ...
        RuntimeError: this client is closed
        """
        self._close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __getattr__(self, name: str) -> Link:
        # Relations of the entry point; private and dunder names are never relations.
        if name.startswith("_") or name in _PROBES:
            raise AttributeError(name)
        if name == "aclose":  # contextlib.aclosing, anyio: this client is not the async one
            raise AttributeError("'Client' has no aclose(): call client.close() (it is sync)")
        link = getattr(self.root(), name)
        if not isinstance(link, Link):
            raise LinkNotFoundError(f"{name!r} is not a single link of the entry point")
        return link

    def __dir__(self) -> list[str]:
        # Tab completion does no I/O: relations only once the entry point is cached. It never
        # fetches it nor waits for a fetch in flight (a hung API would freeze the shell).
        names = set(super().__dir__())
        root = getattr(getattr(self, "_origin", None) or self, "_root", None)
        if root is not None:
            names |= set(root._all_relations().attribute_names()) - _PROBES - {"aclose"}
        return sorted(names)

    def _root_guard(self) -> threading.Lock:
        # A lock made before fork may be held forever; one made before gevent or eventlet
        # patched threading would block the hub's thread: replace either.
        made = (os.getpid(), threading.Lock)
        if self._root_lock_made != made:
            self._root_lock, self._root_lock_made = threading.Lock(), made
        return self._root_lock
