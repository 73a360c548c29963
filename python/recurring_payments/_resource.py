"""HAL resources and links of the sync client (docs/concepts.md#relations-and-their-names):
`Resource` and `Link`. What they share with the async ones (state, relations, display) is in
`_resource_base.py` and `_link_base.py`; here, the requests."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, cast

from . import _core
from ._green import _blocking
from ._link_base import _LinkBase
from ._resource_base import _check_rel, _ResourceBase
from ._session import Session

if TYPE_CHECKING:
    from typing_extensions import Never

    from ._telemetry import Recorder

# `_send`'s telemetry recorder not given: started there.
_START = object()


def _send(
    session: Session,
    method: str,
    href: str | _LinkBase,
    variables: Mapping[str, Any] | None = None,
    body: Any = None,
    templated: bool | None = None,
    name: str | None = None,
    if_match: str | None = None,
    call: Recorder | object | None = _START,
) -> Resource:
    """One request, in one call into the core (which checks, expands and resolves ``href``; a
    link's template is parsed once and kept with it):
    one request value (`_core._Call`, built by ``Session.request`` for both faces) with this
    session's options (``with_options``).
    Under gevent/eventlet the wait runs on the hub's thread pool
    (docs/guides/web-frameworks.md#worker-classes). ``call``: the telemetry recorder when the
    caller started it already (the native ``Link`` call)."""
    native = session.native
    if native is None:
        native = session.live()  # raises: the client is closed
    if call is _START:
        telemetry = session.telemetry
        call = None if telemetry is None else telemetry.start()
    call = cast("Recorder | None", call)
    request = session.request(method, href, variables, body, templated, name, if_match, call)
    if call is None:
        # Neither gevent's nor eventlet's patcher imported (what `_blocking` looks for first):
        # call the core here, one frame less on the hottest path.
        if "gevent.monkey" not in sys.modules and "eventlet.patcher" not in sys.modules:
            reply = native.send(request)
        else:
            reply = _blocking(native.send, request)
    else:
        # The spans are recorded here, on the calling thread, as children of its context
        # (docs/guides/observability-otel.md): under gevent the wait runs on a native thread,
        # where the SDK's locks must not be taken, so the native client only hands the attempts
        # to `sink`.
        try:
            reply = _blocking(native.send, request, call.sink)
        finally:
            call.flush()
    status, headers, document = reply
    doc = {} if document is None else document
    return Resource._make(session, doc, status, headers, False, ())


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

    if TYPE_CHECKING:

        def __call__(self, *positional: Never, **variables: Any) -> Resource:
            """GET this link; same as :meth:`get`. Template variables are keyword arguments.

            >>> client.get_creditors(reference="democreditor").status
            200
            >>> client.get_creditors("democreditor")
            Traceback (most recent call last):
            ...
            TypeError: ... as keyword arguments: get_creditors(reference=...)
            """
            ...

    else:  # the native base's GET: no Python frame between the caller and the core
        __call__ = _core._LinkCore._call

    def _get(self, variables: dict[str, Any], call: Recorder | object | None = _START) -> Resource:
        """``link(**variables)`` when the native call hands it over: a deprecated link (which
        warns), a call with telemetry (``call``, its recorder, started already), under gevent
        or eventlet, or of a closed client."""
        if self.deprecation is not None:
            self._warn_if_deprecated()
        session = self._session
        return _send(session, "GET", self, variables, None, self.templated, self.rel, None, call)

    def get(self, *positional: Never, **variables: Any) -> Resource:
        """GET this link and return the resource.

        >>> client.get_creditors.get(reference="democreditor")["name"]
        'Demo Creditor SAS'
        """
        if positional:
            raise self._positional_error(f"{self._call_name()}.get")
        if self.deprecation is not None:
            self._warn_if_deprecated()
        return _send(self._session, "GET", self, variables, None, self.templated, self.rel)

    def post(self, body: Any = None, /, **variables: Any) -> Resource:
        """POST ``body`` as JSON to this link (never retried; see the guide "Errors and recovery").

        >>> order = client.create_orders.post({"reference": "o-1", "started": True})
        >>> order.status, order.headers["Location"] == order.url
        (201, True)
        """
        self._warn_if_deprecated()
        return _send(self._session, "POST", self, variables, body, self.templated, self.rel)

    def patch(self, body: Any, /, *, if_match: str | None = None, **variables: Any) -> Resource:
        """PATCH this link with a JSON merge patch (RFC 7396). ``if_match`` (typically
        ``res.etag``) sends ``If-Match``: a 412 :class:`PreconditionFailedError` then says the
        resource changed since it was read, and nothing was changed.

        >>> order = client.create_orders.post({"reference": "o-1"})
        >>> order.links["self"].patch({"started": True}, if_match=order.etag)["started"]
        True
        """
        self._warn_if_deprecated()
        session = self._session
        return _send(session, "PATCH", self, variables, body, self.templated, self.rel, if_match)


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

    _link_type = Link

    def fetch(self) -> Resource:
        """GET the ``self`` link: the full representation.

        >>> mandate = client.get_mandates(creditorReference="democreditor").embedded["mandates"][0]
        >>> full = mandate.fetch()
        >>> full.url == mandate.url, full.partial, full.status
        (True, False, 200)
        """
        return _send(self._session, "GET", self._self_url())

    def follow(self, rel: str, *positional: Never, **variables: Any) -> Resource:
        """GET along a relation: the same as calling the link.

        >>> client.root().follow("get-creditors", reference="democreditor")["name"]
        'Demo Creditor SAS'
        """
        link = self._single_link(rel)
        if positional:
            raise link._positional_error("follow", f"{rel!r}, ")
        return link.get(**variables)

    def pages(self) -> Iterator[Resource]:
        """This page, then every ``next`` page until there is none (fetched as you go).

        >>> creditor = client.get_creditors(reference="democreditor")
        >>> [len(page.embedded["mandates"]) for page in creditor.get_mandates(size=50).pages()]
        [50, 50, 20]
        """
        self._refuse_if_detached()
        page: Resource = self
        seen: set[str] = set()
        while True:
            yield page
            url = page._next_url(seen)
            if url is None:
                return
            page = _send(self._session, "GET", url)

    def all(self, rel: str, /) -> Iterator[Resource]:
        """The resources embedded under ``rel`` on this page, then on each ``next`` page,
        fetched as the loop reaches them (one GET per further page, as :meth:`pages`; breaking
        out fetches nothing more). A page without ``rel`` gives none; a single embedded
        resource is one item. ``rel`` is a relation name as anywhere (full, short, CURIE); one
        that looks like a misspelling of an embedded relation raises the
        :class:`LinkNotFoundError` of ``res.embedded[rel]`` (did you mean …?).

        >>> first = client.get_creditors(reference="democreditor").get_mandates(size=50)
        >>> mandates = list(first.all("mandates"))
        >>> len(mandates), mandates[0]["reference"], mandates[-1].partial
        (120, 'MND-0001', True)
        >>> next(first.all("mandate"))
        Traceback (most recent call last):
        ...
        recurring_payments.errors.LinkNotFoundError: ... did you mean 'mandates'? ...

        A ``next`` link back to a page already seen raises :class:`ProtocolError` instead of
        fetching it again.
        """
        _check_rel(rel)
        for page in self.pages():
            yield from page._embedded_items(rel)


Link._resource_type = Resource  # what the native call makes (`_core._LinkCore`)
