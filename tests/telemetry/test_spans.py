"""OpenTelemetry spans (docs/guides/observability-otel.md), sync and async, with the SDK's in-memory
exporter (the global SDK of otel_kit.py): one CLIENT span per HTTP attempt, token requests, retries,
the 401 replay and failures included, children of the caller's span, with the stable HTTP semantic
conventions; the trace context sent to the API's origin only."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from typing import Any

import otel_kit
import pytest
from conftest import header

import recurring_payments as rp
from recurring_payments.testing import FakeServer

pytest.importorskip("opentelemetry.sdk")

from opentelemetry import trace
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)
from opentelemetry.trace import SpanKind, StatusCode

KINDS = ["sync", "async"]
THING = {"id": 1, "_links": {"self": {"href": "/things/1"}}}
tracer = trace.get_tracer("tests.telemetry")


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    with otel_kit.capture() as exporter:
        yield exporter


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer() as server:
        server.add_link("get-thing", "/things/{id}", templated=True)
        server.add_resource("/things/1", THING)
        yield server


class Caller:
    """A `Client` or an `AsyncClient` behind blocking calls, each made inside a parent span
    (the async ones in `asyncio.run`, whose task starts in the caller's context)."""

    def __init__(self, server: FakeServer, kind: str, **settings: Any) -> None:
        self.kind = kind
        factory = server.client if kind == "sync" else server.async_client
        self.client: Any = factory(**settings)

    def __call__(self, call: Any) -> tuple[Any, Any]:
        """Run `call(client)` inside a new parent span: (its result, the parent span)."""
        with tracer.start_as_current_span("caller") as parent:
            result = call(self.client)
            if self.kind == "async":
                result = asyncio.run(result)
        return result, parent

    def close(self) -> None:
        if self.kind == "async":
            asyncio.run(self.client.aclose())
        else:
            self.client.close()


@pytest.fixture(params=KINDS)
def caller(request: pytest.FixtureRequest, server: FakeServer) -> Iterator[Caller]:
    caller = Caller(server, request.param, retries=2)
    yield caller
    caller.close()


def client_spans(exporter: InMemorySpanExporter) -> list[Any]:
    found = [s for s in exporter.get_finished_spans() if s.kind == SpanKind.CLIENT]
    return sorted(found, key=lambda s: s.start_time)


def traceparent_of(span: Any) -> str:
    ctx = span.get_span_context()
    return f"00-{ctx.trace_id:032x}-{ctx.span_id:016x}-{ctx.trace_flags:02x}"


def test_a_follow_and_its_token_request_are_client_spans_of_the_caller(
    caller: Caller, server: FakeServer, spans: InMemorySpanExporter
) -> None:
    root, parent = caller(lambda c: c.root())
    assert root.status == 200
    token, get = client_spans(spans)
    port = int(server.base_url.rsplit(":", 1)[1])
    assert (token.name, get.name) == ("POST", "GET")
    assert dict(token.attributes) == {
        "http.request.method": "POST",
        "server.address": "127.0.0.1",
        "server.port": port,
        "url.full": server.base_url + "/oauth/token",
        "http.response.status_code": 200,
    }
    assert dict(get.attributes) == {
        "http.request.method": "GET",
        "server.address": "127.0.0.1",
        "server.port": port,
        "url.full": server.base_url + "/",
        "http.response.status_code": 200,
    }
    for span in (token, get):
        assert span.parent.span_id == parent.get_span_context().span_id
        assert span.context.trace_id == parent.get_span_context().trace_id
        assert span.status.status_code == StatusCode.UNSET
        assert span.instrumentation_scope.name == "recurring_payments"
        assert span.start_time <= span.end_time
    assert parent.start_time <= token.start_time <= token.end_time <= get.start_time
    assert get.end_time <= parent.end_time
    # The caller's context went to the API, token endpoint included.
    assert [header(r, "traceparent") for r in server.requests] == [traceparent_of(parent)] * 2


def test_a_templated_link_names_the_span_and_the_template(
    caller: Caller, server: FakeServer, spans: InMemorySpanExporter
) -> None:
    root, _ = caller(lambda c: c.root())
    href = root.links["get-thing"].href
    spans.clear()
    thing, _ = caller(lambda c: c.get_thing(id=1))
    assert thing["id"] == 1
    (get,) = client_spans(spans)
    assert get.name == f"GET {href}"
    assert get.attributes["url.template"] == href
    assert get.attributes["url.full"] == server.base_url + "/things/1"
    # A template given to client.get is one too.
    spans.clear()
    caller(lambda c: c.get("/things/{id}", id=1))
    (get,) = client_spans(spans)
    assert (get.name, get.attributes["url.template"]) == ("GET /things/{id}", "/things/{id}")


def test_a_get_retried_after_503_is_two_spans(
    caller: Caller, server: FakeServer, spans: InMemorySpanExporter
) -> None:
    caller(lambda c: c.root())
    server.fail_next(503, count=1, path="/things/1", headers={"Retry-After": "0"})
    spans.clear()
    caller(lambda c: c.get("/things/1"))
    failed, retried = client_spans(spans)
    assert failed.attributes["http.response.status_code"] == 503
    assert failed.attributes["error.type"] == "503"
    assert failed.status.status_code == StatusCode.ERROR
    assert "http.request.resend_count" not in failed.attributes
    assert retried.attributes["http.response.status_code"] == 200
    assert retried.attributes["http.request.resend_count"] == 1
    assert "error.type" not in retried.attributes
    assert retried.status.status_code == StatusCode.UNSET


def test_the_401_replay_is_a_resend_after_a_token_request(
    caller: Caller, server: FakeServer, spans: InMemorySpanExporter
) -> None:
    caller(lambda c: c.root())
    server.expire_tokens()
    spans.clear()
    _, parent = caller(lambda c: c.get("/things/1"))
    refused, token, replay = client_spans(spans)
    assert (refused.name, token.name, replay.name) == ("GET", "POST", "GET")
    assert refused.attributes["error.type"] == "401"
    assert refused.status.status_code == StatusCode.ERROR
    assert token.attributes["url.full"].endswith("/oauth/token")
    assert "http.request.resend_count" not in token.attributes
    assert replay.attributes["http.request.resend_count"] == 1
    assert replay.attributes["http.response.status_code"] == 200
    parent_id = parent.get_span_context().span_id
    assert {s.parent.span_id for s in (refused, token, replay)} == {parent_id}


def test_a_refused_connection_is_an_error_span(spans: InMemorySpanExporter) -> None:
    for kind in KINDS:
        with FakeServer() as server:
            caller = Caller(server, kind, retries=0)
        # The server stopped: nothing listens on its port any more.
        spans.clear()
        with pytest.raises(rp.TransportError):
            caller(lambda c: c.root())
        (token,) = client_spans(spans)
        assert token.attributes["error.type"] == "TransportError"
        assert "http.response.status_code" not in token.attributes
        assert token.status.status_code == StatusCode.ERROR
        caller.close()


@pytest.mark.parametrize("kind", KINDS)
def test_a_timeout_is_an_error_span(
    kind: str, server: FakeServer, spans: InMemorySpanExporter
) -> None:
    caller = Caller(server, kind, timeout=0.3, retries=0)
    try:
        caller(lambda c: c.root())
        server.delay_next(1.0, path="/things/1")
        spans.clear()
        with pytest.raises(rp.TimeoutError):
            caller(lambda c: c.get("/things/1"))
        (get,) = client_spans(spans)
        assert get.attributes["error.type"] == "TimeoutError"
        assert get.status.status_code == StatusCode.ERROR
        assert 0.25e9 < get.end_time - get.start_time < 5e9
    finally:
        caller.close()


@pytest.mark.parametrize("kind", KINDS)
def test_a_2xx_that_is_no_document_is_an_error_span(
    kind: str, server: FakeServer, spans: InMemorySpanExporter
) -> None:
    # The attempt got its answer, and the call failed on it (ProtocolError): the span said
    # nothing had gone wrong (status UNSET, no error.type).
    caller = Caller(server, kind, retries=0)
    faults = [
        lambda: server.malformed_next(path="/things/1"),
        lambda: server.respond_next(
            b"<p>", headers={"Content-Type": "text/html"}, path="/things/1"
        ),
        lambda: server.respond_next(b"", status=200, path="/things/1"),
    ]
    try:
        caller(lambda c: c.root())
        for fault in faults:
            fault()
            spans.clear()
            with pytest.raises(rp.ProtocolError):
                caller(lambda c: c.get("/things/1"))
            (get,) = client_spans(spans)
            assert get.attributes["http.response.status_code"] == 200
            assert get.attributes["error.type"] == "ProtocolError"
            assert get.status.status_code == StatusCode.ERROR
        spans.clear()
        assert caller(lambda c: c.get("/things/1"))[0]["id"] == 1  # and a good one is not
        (get,) = client_spans(spans)
        assert "error.type" not in get.attributes and get.status.status_code == StatusCode.UNSET
    finally:
        caller.close()


@pytest.mark.parametrize("kind", KINDS)
def test_a_token_response_that_is_no_token_is_an_error_span(
    kind: str, server: FakeServer, spans: InMemorySpanExporter
) -> None:
    caller = Caller(server, kind, retries=0)
    try:
        server.malformed_next(path="/oauth/token")
        with pytest.raises(rp.ProtocolError):
            caller(lambda c: c.root())
        (token,) = client_spans(spans)
        assert token.attributes["url.full"].endswith("/oauth/token")
        assert token.attributes["error.type"] == "ProtocolError"
        assert token.status.status_code == StatusCode.ERROR
    finally:
        caller.close()


def test_a_cancelled_await_still_records_its_attempts(
    server: FakeServer, spans: InMemorySpanExporter
) -> None:
    # The attempts were recorded only when the call ended: a cancelled await dropped them,
    # the token request that had happened included.
    client = server.async_client(retries=0)
    server.delay_next(2.0, path="/things/1")

    async def cut() -> None:
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(client.get("/things/1"), 0.5)

    try:
        asyncio.run(cut())
        deadline = time.monotonic() + 5
        while len(client_spans(spans)) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)  # observed by the completion thread, after the cancel
        token, get = client_spans(spans)
        assert token.attributes["url.full"].endswith("/oauth/token")
        assert token.status.status_code == StatusCode.UNSET
        assert get.attributes["url.full"].endswith("/things/1")
        assert get.attributes["error.type"] == "CancelledError"
        assert get.status.status_code == StatusCode.ERROR
        assert 0.4e9 < get.end_time - get.start_time < 2e9
    finally:
        asyncio.run(client.aclose())


def test_an_interrupted_sync_wait_still_records_its_attempts(
    server: FakeServer, spans: InMemorySpanExporter
) -> None:
    import _thread

    client = server.client(retries=0)
    try:
        client.root()
        server.delay_next(2.0, path="/things/1")
        spans.clear()
        interrupt = threading.Timer(0.3, _thread.interrupt_main)
        interrupt.start()
        with pytest.raises(KeyboardInterrupt):
            client.get("/things/1")
        interrupt.join()
        (get,) = client_spans(spans)
        assert get.attributes["error.type"] == "KeyboardInterrupt"
        assert get.status.status_code == StatusCode.ERROR
        assert client.get("/things/1")["id"] == 1  # and the client goes on
    finally:
        client.close()


@pytest.fixture
def elsewhere() -> Iterator[FakeServer]:
    with FakeServer() as other:
        # Answered as it is: another origin does not know our profile.
        other.respond_next(b'{"landed": true}', status=200, path="/landing")
        yield other


def test_no_trace_context_leaves_the_api_origin(
    caller: Caller, server: FakeServer, elsewhere: FakeServer, spans: InMemorySpanExporter
) -> None:
    target = elsewhere.base_url + "/landing"
    server.route("GET", "/away", lambda request: (302, None, {"Location": target}))
    landing, parent = caller(lambda c: c.get("/away"))
    assert landing["landed"] is True
    assert [header(r, "traceparent") for r in server.requests] == [traceparent_of(parent)] * 2
    (landed,) = elsewhere.requests
    assert header(landed, "traceparent") is None and header(landed, "authorization") is None
    _token, away, there = client_spans(spans)
    assert away.attributes["http.response.status_code"] == 302
    assert there.attributes["url.full"] == target
    assert there.attributes["http.request.resend_count"] == 1  # a redirect is a resend


def test_telemetry_false_records_and_sends_nothing(
    server: FakeServer, spans: InMemorySpanExporter
) -> None:
    for kind in KINDS:
        caller = Caller(server, kind, telemetry=False)
        caller(lambda c: c.get("/things/1"))
        caller.close()
    assert client_spans(spans) == []
    assert [p for p in otel_kit.collect() if p[0] == "http.client.request.duration"] == []
    assert all(header(r, "traceparent") is None for r in server.requests)


def test_the_duration_histogram_has_low_cardinality_attributes(
    caller: Caller, server: FakeServer, spans: InMemorySpanExporter
) -> None:
    caller(lambda c: c.root())
    server.fail_next(503, count=1, path="/things/1", headers={"Retry-After": "0"})
    caller(lambda c: c.get_thing(id=1))
    points = [p for p in otel_kit.collect() if p[0] == "http.client.request.duration"]
    port = int(server.base_url.rsplit(":", 1)[1])
    common = {"server.address": "127.0.0.1", "server.port": port}
    href = client_spans(spans)[-1].attributes["url.template"]
    seen = {key(attributes): point.count for _, attributes, point in points}

    def expected(method: str, status: int, **more: str) -> tuple[Any, ...]:
        return key(
            {**common, "http.request.method": method, "http.response.status_code": status, **more}
        )

    assert seen == {
        expected("POST", 200): 1,
        expected("GET", 200): 1,
        expected("GET", 503, **{"error.type": "503", "url.template": href}): 1,
        expected("GET", 200, **{"url.template": href}): 1,
    }
    for _, _, point in points:
        assert 0 < point.sum < 5  # seconds


def key(attributes: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(sorted(attributes.items()))


def test_concurrent_tasks_each_get_their_own_children(
    server: FakeServer, spans: InMemorySpanExporter
) -> None:
    async def one(client: rp.AsyncClient, name: str) -> Any:
        with tracer.start_as_current_span(name) as parent:
            await asyncio.sleep(0)
            for _ in range(3):
                await client.get("/things/1")
            return parent

    async def main() -> list[Any]:
        async with server.async_client() as client:
            await client.authenticate()
            return await asyncio.gather(*(one(client, f"task-{i}") for i in range(4)))

    parents = asyncio.run(main())
    children = [s for s in client_spans(spans) if s.name == "GET"]
    assert len(children) == 12
    for parent in parents:
        mine = [s for s in children if s.parent.span_id == parent.get_span_context().span_id]
        assert len(mine) == 3
        assert all(parent.start_time <= s.start_time <= s.end_time <= parent.end_time for s in mine)


def test_threads_each_get_their_own_children(
    server: FakeServer, spans: InMemorySpanExporter
) -> None:
    client = server.client()
    client.authenticate()
    parents: dict[str, Any] = {}

    def one(name: str) -> None:
        with tracer.start_as_current_span(name) as parent:
            for _ in range(3):
                client.get("/things/1")
        parents[name] = parent

    threads = [threading.Thread(target=one, args=(f"thread-{i}",)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    client.close()
    children = [s for s in client_spans(spans) if s.name == "GET"]
    assert len(children) == 12
    for parent in parents.values():
        ids = [s for s in children if s.parent.span_id == parent.get_span_context().span_id]
        assert len(ids) == 3


@pytest.mark.parametrize("kind", KINDS)
def test_authenticate_is_a_token_span(
    kind: str, server: FakeServer, spans: InMemorySpanExporter
) -> None:
    caller = Caller(server, kind)
    token, parent = caller(lambda c: c.authenticate())
    caller.close()
    assert token.scope == "api"
    (span,) = client_spans(spans)
    assert span.name == "POST" and span.parent.span_id == parent.get_span_context().span_id
    assert header(server.token_requests[0], "traceparent") == traceparent_of(parent)
