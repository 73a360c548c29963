"""The `Session` a client shares with its resources and links (docs/design.md#the-path-of-a-call):
the native client, the base URL, the relation namespace and index cache, the telemetry. Apart from
the client so that resources depend on it alone, and never on the client that made them."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any

from . import _core
from .errors import ConfigurationError

if TYPE_CHECKING:
    from ._telemetry import Recorder


_TELEMETRY: list[ModuleType | None] = []  # [the module or None] once looked for
_MODULES = sys.modules
# An SDK named in the environment records without the application importing OpenTelemetry.
_PROVIDERS_FROM_ENV = (
    "OTEL_PYTHON_TRACER_PROVIDER" in os.environ or "OTEL_PYTHON_METER_PROVIDER" in os.environ
)


def _telemetry_module() -> ModuleType | None:
    """``_telemetry`` if ``opentelemetry-api`` can be imported (looked for once), else None."""
    if not _TELEMETRY:
        try:
            from . import _telemetry
        except ImportError:
            _TELEMETRY.append(None)
        else:
            _TELEMETRY.append(_telemetry)
    return _TELEMETRY[0]


def _nothing() -> None:
    return None


class _Telemetry:
    """The telemetry of every client with ``telemetry=True`` (docs/guides/observability-otel.md),
    imported when first there can be something to record or propagate. Until the application imports
    OpenTelemetry, no SDK is set and no context holds a span or baggage, so ``_telemetry.start``
    would return None: importing it (~10 ms with the API's modules) is left out of a short script's
    start, and each call pays one lookup. From the first call after the application imports it,
    ``start`` is ``_telemetry.start`` itself."""

    __slots__ = ("start",)

    start: Callable[[], Recorder | None]

    def __init__(self) -> None:
        self.start = self._first_start

    def _first_start(self) -> Recorder | None:
        if "opentelemetry" not in _MODULES and not _PROVIDERS_FROM_ENV:
            return None
        module = _telemetry_module()
        self.start = _nothing if module is None else module.start
        return self.start()


_LAZY_TELEMETRY = _Telemetry()


def telemetry_for_clients() -> ModuleType | _Telemetry:
    """What a client with ``telemetry=True`` records through: ``_telemetry`` when OpenTelemetry
    is already imported (or its SDK named in the environment), else the lazy gate."""
    if "opentelemetry" in _MODULES or _PROVIDERS_FROM_ENV:
        module = _telemetry_module()
        if module is not None:
            return module
    return _LAZY_TELEMETRY


class Session:
    """What a client shares with its resources and links: the native client, the base URL, the
    relation namespace, the relation-index cache and the telemetry. Resources hold it, never
    their client: they outlive a closed client (a notebook cell showing an old result) and
    still resolve their URLs against the base URL."""

    __slots__ = ("base_url", "native", "options", "owner", "rel_namespace", "rels", "telemetry")

    def __init__(
        self,
        native: _core.NativeClient,
        base_url: str,
        rel_namespace: str | None,
        telemetry: ModuleType | _Telemetry | None = None,
    ) -> None:
        self.native: _core.NativeClient | None = native
        self.base_url = base_url
        self.rel_namespace = rel_namespace
        # OpenTelemetry (docs/guides/observability-otel.md) when telemetry is on: `_telemetry`, or
        # the gate that imports it once the application has imported OpenTelemetry
        # (`telemetry_for_clients`).
        self.telemetry = telemetry
        # Pages of one collection share their relations: each index is built once per shape.
        self.rels = _core.RelCache(rel_namespace)
        # A derived client's settings (`with_options`,
        # docs/guides/configuration.md#per-call-settings), sent with every call.
        self.options: _core.CallOptions | None = None
        # Whether closing this session closes the native client (not a derived client's).
        self.owner = True

    def derived(self, options: _core.CallOptions | None) -> Session:
        """A session of a client derived by ``with_options``: the same native client (its
        connections, token, token store), relation indexes and telemetry, with ``options``
        for every call. Closing it closes nothing the original uses."""
        session = Session.__new__(Session)
        session.native = self.native
        session.base_url = self.base_url
        session.rel_namespace = self.rel_namespace
        session.telemetry = self.telemetry
        session.rels = self.rels
        session.options = options
        session.owner = False
        return session

    # A session rebuilt from a pickle or a copy has no client (`DetachedSession`).
    detached = False

    def __reduce__(self) -> tuple[Any, ...]:
        # What travels (pickle, copy.deepcopy) is the base URL and namespace, never the native
        # client, its token or credentials: the copy is detached until `client.attach(res)`.
        return (DetachedSession, (self.base_url, self.rel_namespace))

    def __copy__(self) -> Session:
        # A shallow copy shares the client, as shallow copies do (only what travels detaches).
        twin = object.__new__(type(self))
        for name in Session.__slots__:
            setattr(twin, name, getattr(self, name))
        return twin

    def live(self) -> _core.NativeClient:
        native = self.native
        if native is None:
            raise RuntimeError("this client is closed")
        return native

    def close(self) -> None:
        native, self.native = self.native, None
        if native is not None and self.owner:
            # Now, not when the native client is collected: a kept error's frames (and an
            # async call's cycle through its future) can hold it long after.
            native.close()

    def telemetry_call(self) -> Recorder | None:
        """This call's telemetry (docs/guides/observability-otel.md), started in the caller's
        context — this thread's (sync), the awaiting task's (async) — before the request is sent:
        the headers that propagate that context and the recorder of its attempts. ``None`` when
        telemetry is off, or there is nothing to propagate nor record: then the send passes neither,
        and a warm follow still crosses into the core once."""
        telemetry = self.telemetry
        return None if telemetry is None else telemetry.start()

    def request(
        self,
        method: str,
        href: str | _core._LinkCore,
        variables: Mapping[str, Any] | None,
        body: Any,
        templated: bool | None,
        name: str | None,
        if_match: str | None,
        call: Recorder | None,
    ) -> _core._Call:
        """The request value of one call of either face (``_core._Call``, read by position
        in the core): its parts, the trace context of its telemetry ``call``, and this
        session's options (``with_options``)."""
        trace = None if call is None else call.headers
        return (method, href, variables, body, templated, name, if_match, trace, self.options)

    def resolve(self, href: str) -> str:
        """The absolute URL of ``href`` (relative ones resolve against the base URL)."""
        native = self.native
        if native is None:
            # A closed client: resolve against the base URL alone, without bringing it back.
            from urllib.parse import urljoin  # only then: 4 ms of the package's import

            return urljoin(self.base_url, href)
        return native.resolve(href)

    def expand(
        self, href: str, variables: Mapping[str, Any], templated: bool | None, name: str | None
    ) -> str:
        """What a request to ``href`` with ``variables`` would address (checked, expanded and
        resolved by the core, as ``send`` does)."""
        return _core.expand_target(self.base_url, href, variables, templated, name)

    def short_name(self, rel: str) -> str:
        # A one-rel index, not cached: display names must not fill the cache of real shapes.
        return _core.RelIndex([rel], [], self.rel_namespace).short_name(rel) or rel


class DetachedSession(Session):
    """The session of a resource that was pickled or copied: it reads (URLs resolve against
    the base URL, relations under the namespace) but has no client to send with. Sending
    raises ``ConfigurationError`` naming ``client.attach(res)``, which binds it again."""

    __slots__ = ()

    detached = True

    def __init__(self, base_url: str, rel_namespace: str | None) -> None:
        self.native = None
        self.base_url = base_url
        self.rel_namespace = rel_namespace
        self.telemetry = None
        self.rels = _core.RelCache(rel_namespace)
        self.options = None
        self.owner = False

    def live(self) -> _core.NativeClient:
        raise ConfigurationError(
            "this resource was pickled or copied and is detached from any client: "
            "bind it with client.attach(res) (AsyncClient.attach for async) to follow its links"
        )

    def resolve(self, href: str) -> str:
        # The core's resolution of a server's href, as the client that made the resource did.
        return _core.expand_target(self.base_url, href, None, False, None)

    def close(self) -> None:
        pass  # nothing to close
