"""``recurring-payments demo --trace``: the OpenTelemetry spans of the walk
(docs/guides/observability-otel.md), printed as a tree when it ends. Needs ``opentelemetry-sdk``
(imported only with ``--trace``)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider


class Collector(SpanProcessor):
    """Keeps the spans that end while it is active."""

    def __init__(self) -> None:
        self.spans: list[ReadableSpan] = []
        self.active = True

    def on_end(self, span: ReadableSpan) -> None:
        if self.active:
            self.spans.append(span)


@contextmanager
def tracing(out: TextIO, base_url: str) -> Iterator[None]:
    """Record the spans that end within the block, under one "demo walk" span, and print
    them afterwards. The SDK's global provider is used if there is one, else installed."""
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
    collector = Collector()
    provider.add_span_processor(collector)
    try:
        with trace.get_tracer("recurring_payments.demo").start_as_current_span("demo walk"):
            yield
    finally:
        collector.active = False  # a provider cannot drop a processor: this one goes quiet
        print_tree(out, collector.spans, base_url.rstrip("/"))


def print_tree(out: TextIO, spans: list[Any], base_url: str) -> None:
    """One line per span, indented under its parent, in start order."""
    print("\nSpans (OpenTelemetry; name, url, status or error.type, duration):", file=out)
    ids = {span.context.span_id for span in spans}
    children: dict[int | None, list[Any]] = {}
    for span in spans:
        parent = span.parent.span_id if span.parent and span.parent.span_id in ids else None
        children.setdefault(parent, []).append(span)

    def show(span: Any, depth: int) -> None:
        attributes = span.attributes or {}
        ms = ((span.end_time or 0) - (span.start_time or 0)) / 1e6
        url = str(attributes.get("url.full", ""))
        path = url.removeprefix(base_url) if url.startswith(base_url) else url
        outcome = str(attributes.get("error.type", attributes.get("http.response.status_code", "")))
        resend = attributes.get("http.request.resend_count")
        name = f"{'  ' * depth}{span.name.replace(base_url, '')}"[:38]
        line = f"  {name:<38} {path[:26]:<26} {outcome:>6} {ms:7.1f} ms"
        print(line + (f" (resend {resend})" if resend else ""), file=out)
        for child in sorted(children.get(span.context.span_id, []), key=lambda s: s.start_time):
            show(child, depth + 1)

    for span in sorted(children.get(None, []), key=lambda s: s.start_time):
        show(span, 0)
