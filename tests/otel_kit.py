"""The OpenTelemetry SDK as the test suite installs it (docs/guides/observability-otel.md), once per
process.

A real SDK `TracerProvider` and `MeterProvider` become the global ones, so every client of the
suite (telemetry is on by default) records real spans and measurements:
- the secret watch (secret_watch.py) sees every span and every metric data point
  (`observe_spans`, `collect`);
- tests/telemetry reads them through the SDK's `InMemorySpanExporter` (only while a test
  captures: a soak of millions of requests keeps nothing) and `InMemoryMetricReader` (delta
  temporality: each `collect()` returns what was measured since the last one).

Without `opentelemetry-sdk` installed, `AVAILABLE` is False and nothing is installed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

try:
    from opentelemetry import metrics, trace
    from opentelemetry.sdk.metrics import Histogram, MeterProvider
    from opentelemetry.sdk.metrics.export import AggregationTemporality, InMemoryMetricReader
    from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
except ImportError:  # the suite without the `test` extra's SDK
    AVAILABLE = False
else:
    AVAILABLE = True

_lock = threading.Lock()
_installed: dict[str, Any] = {}
_span_observers: list[Callable[[Any], None]] = []
_point_observers: list[Callable[[str, dict[str, Any]], None]] = []


if AVAILABLE:

    class _Fanout(SpanProcessor):
        """Every ended span to the observers, and to the exporter while a test captures."""

        def __init__(self, exporter: InMemorySpanExporter) -> None:
            self.capture = SimpleSpanProcessor(exporter)
            self.capturing = 0

        def on_end(self, span: ReadableSpan) -> None:
            for observe in _span_observers:
                observe(span)
            if self.capturing:
                self.capture.on_end(span)


def install() -> bool:
    """Install the SDK as the global providers (once); False without the SDK."""
    if not AVAILABLE:
        return False
    with _lock:
        if _installed:
            return True
        exporter = InMemorySpanExporter()
        fanout = _Fanout(exporter)
        tracer_provider = TracerProvider()
        tracer_provider.add_span_processor(fanout)
        trace.set_tracer_provider(tracer_provider)
        reader = InMemoryMetricReader(
            preferred_temporality={Histogram: AggregationTemporality.DELTA}
        )
        metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
        _installed.update(exporter=exporter, fanout=fanout, reader=reader)
        return True


def observe_spans(observer: Callable[[Any], None]) -> None:
    """Call `observer(span)` for every span that ends (the secret watch)."""
    _span_observers.append(observer)


def observe_points(observer: Callable[[str, dict[str, Any]], None]) -> None:
    """Call `observer(metric_name, attributes)` for every data point `collect` returns."""
    _point_observers.append(observer)


@contextmanager
def capture() -> Iterator[InMemorySpanExporter]:
    """The exporter, receiving the spans that end within the block (emptied first)."""
    install()
    exporter: InMemorySpanExporter = _installed["exporter"]
    fanout: _Fanout = _installed["fanout"]
    exporter.clear()
    collect()  # forget the measurements made before
    with _lock:
        fanout.capturing += 1
    try:
        yield exporter
    finally:
        with _lock:
            fanout.capturing -= 1


def collect() -> list[tuple[str, dict[str, Any], Any]]:
    """The data points measured since the last call, as (metric name, attributes, point)."""
    if not _installed:
        return []
    data = _installed["reader"].get_metrics_data()
    points = []
    for resource_metrics in data.resource_metrics if data else []:
        for scope_metrics in resource_metrics.scope_metrics:
            for metric in scope_metrics.metrics:
                for point in metric.data.data_points:
                    attributes = dict(point.attributes or {})
                    for observe in _point_observers:
                        observe(metric.name, attributes)
                    points.append((metric.name, attributes, point))
    return points
