"""OpenTelemetry (docs/guides/observability-otel.md): a CLIENT span and a duration measurement per
HTTP attempt.

Imported only when ``opentelemetry-api`` is installed, a client has ``telemetry=True`` and the
application has imported OpenTelemetry (``_session.telemetry_for_clients``). The attempts happen
in Rust; the session's send path (``Session.telemetry_call``) asks :func:`start`, in the
caller's context, for the headers that carry that context (W3C ``traceparent`` through the
global propagator; the native client sends them to the API's origin only) and for a recorder.
The native client calls the recorder once, when the call is over, with a record per attempt
(``_core.AttemptRecord``, named fields) and the template its request was expanded from (the core's
``Prepared::template``); it creates the spans with their real start and end times as children
of the caller's context, from whatever thread it runs on.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from urllib.parse import urlsplit

from opentelemetry import context as otel_context
from opentelemetry import metrics, propagate, trace
from opentelemetry.metrics import _internal as _metrics_internal
from opentelemetry.trace import SpanKind, Status, StatusCode

from . import _core

NAME = "recurring_payments"
_logger = logging.getLogger(NAME)
# The HTTP semantic conventions' advice for http.client.request.duration (seconds).
_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0)
_DEFAULT_PORTS = {"https": 443, "http": 80}
_ERROR = Status(StatusCode.ERROR)

# Proxies until the application installs an SDK: they then forward to it.
_tracer = trace.get_tracer(NAME, _core.__version__)
_meter = metrics.get_meter(NAME, _core.__version__)
_duration = _meter.create_histogram(
    "http.client.request.duration",
    unit="s",
    description="Duration of HTTP client requests.",
    explicit_bucket_boundaries_advisory=_BUCKETS,
)

# What the native client hands the recorder: an attempt, a token store command.
Record = _core.AttemptRecord
StoreRecord = _core.StoreRecord


# Whether an SDK's providers are set: then spans and measurements go somewhere. The API keeps
# them in module globals that are set once and never unset; reading them directly costs
# nothing, where its getters look the environment up (microseconds) on every call. A later API
# without these names, or providers named in the environment, means: always record.
_UNSET = object()
_PROVIDERS_FROM_ENV = (
    "OTEL_PYTHON_TRACER_PROVIDER" in os.environ or "OTEL_PYTHON_METER_PROVIDER" in os.environ
)
# The modules' namespaces, read with `dict.get` in `start`: calling `getattr` on the modules,
# storing a flag and one more frame were ~900 of the ~3,300 instructions a no-op `start()`
# took (BENCHMARKS.md).
_TRACE_GLOBALS = vars(trace)
_METRICS_GLOBALS = vars(_metrics_internal)


class Recorder:
    """One call's telemetry: the ``headers`` that propagate the caller's context, and the
    recording of its attempts as spans and measurements.

    The asyncio face hands ``record`` (the recorder itself) to the native client, which calls
    it on the completion thread; the sync face hands it ``sink`` (:meth:`keep`) and calls
    :meth:`flush` on the calling thread, so that under gevent no SDK code runs on the hub's
    native worker threads. Both are None when no SDK is configured: nothing is recorded.
    """

    __slots__ = ("_kept", "_parent", "_recording", "_store", "_template", "headers")

    def __init__(
        self, parent: otel_context.Context, headers: list[tuple[str, str]], recording: bool
    ) -> None:
        self._parent = parent
        self._kept: Sequence[Record] = ()
        self._store: Sequence[StoreRecord] = ()
        self._template: str | None = None
        self._recording = recording
        self.headers = headers

    # Properties, not attributes: a recorder holding itself (or its bound `keep`) is a cycle,
    # freed by the GC only, one per call (tests/hal/test_no_cycles.py).
    @property
    def record(self) -> Recorder | None:
        return self if self._recording else None

    @property
    def sink(self) -> Callable[..., None] | None:
        return self.keep if self._recording else None

    def keep(
        self, attempts: Sequence[Record], template: str | None, store: Sequence[StoreRecord] = ()
    ) -> None:
        self._kept, self._template, self._store = attempts, template, store

    def flush(self) -> None:
        kept, store, self._kept, self._store = self._kept, self._store, (), ()
        if kept or store:
            self(kept, self._template, store)

    def __call__(
        self, attempts: Sequence[Record], template: str | None, store: Sequence[StoreRecord] = ()
    ) -> None:
        # The template names the caller's request as it was first sent: not the token
        # request, nor a hop that a redirect sent elsewhere.
        first_url = next((a.url for a in attempts if not a.token_request), None)
        try:
            for a in attempts:
                named = None if a.token_request or a.url != first_url else template
                _record(
                    self._parent,
                    a.method,
                    a.url,
                    a.status,
                    (a.start_ns, a.end_ns),
                    a.resend_count,
                    a.error_kind,
                    named,
                    a.request_id,
                )
            for c in store:
                _record_store(self._parent, c.op, c.start_ns, c.end_ns, c.error_type)
        except Exception:  # a broken exporter or processor never fails a payment call
            _logger.warning("recording OpenTelemetry spans failed", exc_info=True)


def _record_store(
    parent: otel_context.Context, op: str, start: int, end: int, error: str | None
) -> None:
    """One command to the fleet's token store (docs/guides/fleets.md): a span named
    ``recurring_payments.token_store``, ``error.type`` set when it failed."""
    attributes: dict[str, str] = {"db.system.name": "redis", "db.operation.name": op}
    if error is not None:
        attributes["error.type"] = error
    span = _tracer.start_span(
        "recurring_payments.token_store",
        context=parent,
        kind=SpanKind.CLIENT,
        attributes=attributes,
        start_time=start,
    )
    if error is not None:
        span.set_status(_ERROR)
    span.end(end_time=end)


def _record(
    parent: otel_context.Context,
    method: str,
    url: str,
    status: int | None,
    times: tuple[int, int],
    resends: int,
    kind: str | None,
    template: str | None,
    request_id: str | None,
) -> None:
    start, end = times
    host, port = _server(url)
    common: dict[str, str | int] = {
        "http.request.method": method,
        "server.address": host,
        "server.port": port,
    }
    if template is not None:
        common["url.template"] = template
    if status is not None:
        common["http.response.status_code"] = status
    error = str(status) if status is not None and status >= 400 else kind
    if error is not None:
        common["error.type"] = error
    span_attributes = dict(common)
    span_attributes["url.full"] = url
    if resends:
        span_attributes["http.request.resend_count"] = resends
    # What support asks for, on the attempt's span
    # (docs/guides/errors.md#conflicts-rate-limits-and-request-ids).
    if request_id is not None:
        span_attributes["recurring_payments.request_id"] = request_id
    name = method if template is None else f"{method} {template}"
    span = _tracer.start_span(
        name, context=parent, kind=SpanKind.CLIENT, attributes=span_attributes, start_time=start
    )
    if error is not None:
        span.set_status(_ERROR)
    span.end(end_time=end)
    _duration.record(max(end - start, 0) / 1e9, common)


_servers: dict[str, tuple[str, int]] = {}


def _server(url: str) -> tuple[str, int]:
    """``server.address`` and ``server.port`` of ``url``, parsed once per origin."""
    scheme, _, rest = url.partition("://")
    origin = rest.split("/", 1)[0].split("?", 1)[0]
    found = _servers.get(origin)
    if found is None:
        parts = urlsplit(url)
        found = (parts.hostname or "", parts.port or _DEFAULT_PORTS.get(scheme, 0))
        if len(_servers) > 1024:
            _servers.clear()
        _servers[origin] = found
    return found


def start() -> Recorder | None:
    """In the caller's context: the call's recorder, or None when there is nothing to
    propagate nor to record (no SDK configured and an empty context: the common no-op case
    costs two lookups, docs/guides/observability-otel.md's budget)."""
    parent = otel_context.get_current()
    # Whether an SDK may record what we give it (its providers are set once, never unset).
    recording = (
        _PROVIDERS_FROM_ENV
        or _TRACE_GLOBALS.get("_TRACER_PROVIDER", _UNSET) is not None
        or _METRICS_GLOBALS.get("_METER_PROVIDER", _UNSET) is not None
    )
    if not recording and not parent:
        return None
    carrier: dict[str, str] = {}
    propagate.inject(carrier, context=parent)
    return Recorder(parent, list(carrier.items()), recording)
