"""OpenTelemetry is optional (docs/guides/observability-otel.md), checked in fresh interpreters:
without `opentelemetry-api` nothing is imported and requests work; with `telemetry=False` it is not
imported either; with it and no SDK configured (no-op tracer) requests work and send no trace
context (there is none); until the application imports it, neither does the client."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("opentelemetry.trace")

# Refuses every import of `opentelemetry`, as if the package were not installed.
BLOCK = """
import sys
class _NoOtel:
    def find_spec(self, name, path=None, target=None):
        if name == "opentelemetry" or name.startswith("opentelemetry."):
            raise ModuleNotFoundError(f"No module named {name!r}")
        return None
sys.meta_path.insert(0, _NoOtel())
"""

WALK = """
import asyncio, sys
from recurring_payments.testing import FakeServer
with FakeServer() as server:
    with server.client({settings}) as client:
        assert client.root().status == 200
        assert client.authenticate().scope == "api"
    async def main():
        async with server.async_client({settings}) as aclient:
            assert (await aclient.root()).status == 200
    asyncio.run(main())
    sent = [r for r in server.requests if "traceparent" in {{k.lower() for k in r.headers}}]
    assert not sent, sent
loaded = sorted(m for m in sys.modules if m.startswith(("opentelemetry", "recurring_payments._t")))
print(loaded)
"""


def run(source: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(source)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_without_opentelemetry_nothing_is_imported() -> None:
    assert run(BLOCK + WALK.format(settings="")) == "[]"


def test_telemetry_false_imports_nothing() -> None:
    assert run(WALK.format(settings="telemetry=False")) == "[]"


def test_with_the_api_and_no_sdk_requests_work() -> None:
    source = "import opentelemetry.context\n" + WALK.format(settings="")
    loaded = run(source)
    assert "'recurring_payments._telemetry'" in loaded and "'opentelemetry.trace'" in loaded


def test_with_the_api_not_imported_by_the_application_nothing_is_imported() -> None:
    # Until the application imports OpenTelemetry no SDK is set and no context holds a span:
    # there is nothing to record or propagate, and a short script does not pay the import.
    assert run(WALK.format(settings="")) == "[]"


def test_opentelemetry_imported_after_the_client_records_from_then_on() -> None:
    source = """
    import sys
    from recurring_payments.testing import FakeServer
    incoming = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    with FakeServer() as server, server.client() as client:
        client.root()
        assert not [m for m in sys.modules if m.startswith("opentelemetry")]
        from opentelemetry import context, propagate, trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(provider)
        server.clear_requests()
        token = context.attach(propagate.extract({"traceparent": incoming}))
        client.root(refresh=True)
        context.detach(token)
        sent = [r.headers.get("traceparent", "")[:36] for r in server.requests]
        assert sent == [incoming[:36]], sent
        print([span.name for span in exporter.get_finished_spans()])
    """
    assert run(source) == "['GET']"


def test_importing_the_package_imports_no_opentelemetry() -> None:
    source = "import sys, recurring_payments\nprint(sorted(m for m in sys.modules if 'otel' in m))"
    assert run(source) == "[]"


def test_telemetry_is_checked_like_the_other_settings() -> None:
    import recurring_payments as rp
    from recurring_payments.testing import FakeServer

    with FakeServer() as server:
        with pytest.raises(rp.ConfigurationError, match="telemetry must be True or False"):
            server.client(telemetry="false")


def test_without_an_sdk_an_incoming_context_still_propagates_and_a_late_sdk_records() -> None:
    # A web framework's instrumentation may extract the incoming traceparent without any SDK:
    # it is passed on. An SDK configured after the client was built is used from then on.
    source = """
    from opentelemetry import context, propagate, trace
    from recurring_payments.testing import FakeServer
    incoming = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    with FakeServer() as server, server.client() as client:
        token = context.attach(propagate.extract({"traceparent": incoming}))
        client.root()
        context.detach(token)
        sent = {r.headers.get("traceparent") for r in server.requests}
        assert sent == {incoming}, sent
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(provider)
        client.root(refresh=True)
        print([span.name for span in exporter.get_finished_spans()])
    """
    assert run(source) == "['GET']"
