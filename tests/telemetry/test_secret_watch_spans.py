"""The secret watch (secret_watch.py) sees spans and metrics: a pytest run in a subprocess
whose spans, span events or metric attributes hold a token, a Basic value or an app secret
fails and names each test; the spans and metrics of real requests are clean."""

from __future__ import annotations

from pathlib import Path

import pytest
from watched_session import run_watched

pytest.importorskip("opentelemetry.sdk")


LEAKS = """
from opentelemetry import metrics, trace

from recurring_payments.testing import FakeServer

tracer = trace.get_tracer("app")
counter = metrics.get_meter("app").create_counter("app.calls")


def test_a_token_in_a_span_attribute():
    with FakeServer() as server, server.client() as client:
        client.root()
        bearer = server.requests[-1].headers["authorization"]
        with tracer.start_as_current_span("call") as span:
            span.set_attribute("auth", bearer)


def test_a_basic_value_in_a_span_event():
    with FakeServer() as server, server.client() as client:
        client.root()
        basic = server.token_requests[0].headers["authorization"]
        with tracer.start_as_current_span("call") as span:
            span.add_event("token", {"header": basic})


def test_a_secret_in_a_metric_attribute():
    with FakeServer() as server:
        counter.add(1, {"who": server.credentials.app_secret})
"""

CLEAN = """
import asyncio

from opentelemetry import trace

from recurring_payments.testing import FakeServer


def test_requests_with_spans():
    with FakeServer() as server, server.client() as client:
        with trace.get_tracer("app").start_as_current_span("call"):
            client.root()
            server.expire_tokens()
            client.root(refresh=True)

        async def main():
            async with server.async_client() as aclient:
                await aclient.root()

        asyncio.run(main())
"""


def test_the_watch_flags_secrets_in_spans_and_metrics(tmp_path: Path) -> None:
    run = run_watched(tmp_path / "leaks", LEAKS)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "3 passed" in run.stdout  # the tests pass; the session fails on the leaks
    summary = run.stdout.split("secret watch: LEAKS", 1)[1]
    for test in (
        "test_a_token_in_a_span_attribute",
        "test_a_basic_value_in_a_span_event",
        "test_a_secret_in_a_metric_attribute",
    ):
        assert f"test_it.py::{test}:" in summary, run.stdout


def test_the_spans_and_metrics_of_requests_are_clean(tmp_path: Path) -> None:
    run = run_watched(tmp_path / "clean", CLEAN)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "no leak" in run.stdout
    assert "spans" in run.stdout  # the summary counts what it saw of telemetry
