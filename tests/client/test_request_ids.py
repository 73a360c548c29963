"""Conflicts, rate limits and request ids
(docs/guides/errors.md#conflicts-rate-limits-and-request-ids), sync and async: 409 and 429 have
their own `ClientError`s; every `HTTPError`, and every `ProtocolError` raised for a response, has
`request_id` from the first of `request_id_headers` present (names ignore case); it ends the
message, is in the attempt's DEBUG line and span, and survives pickling."""

from __future__ import annotations

import asyncio
import copy
import pickle
from collections.abc import Iterator
from typing import Any

import otel_kit
import pytest

import recurring_payments as rp
from recurring_payments.testing import FakeServer

KINDS = ["sync", "async"]


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer() as server:
        server.add_resource("/thing", {"ok": True, "_links": {"self": {"href": "/thing"}}})
        yield server


def fail(server: FakeServer, kind: str, call: str = "get", **settings: Any) -> rp.Error:
    """The error of one call to /thing (a GET, or a POST)."""
    settings.setdefault("retries", 0)
    if kind == "sync":
        with server.client(**settings) as client:
            try:
                client.get("/thing") if call == "get" else client.post("/thing", {})
            except rp.Error as err:
                return err
    else:

        async def run() -> rp.Error | None:
            async with server.async_client(**settings) as client:
                try:
                    if call == "get":
                        await client.get("/thing")
                    else:
                        await client.post("/thing", {})
                except rp.Error as err:
                    return err
            return None

        err = asyncio.run(run())
        if err is not None:
            return err
    raise AssertionError("the call did not fail")


def test_the_new_errors_are_client_errors_exported_from_the_package() -> None:
    assert issubclass(rp.ConflictError, rp.ClientError)
    assert issubclass(rp.RateLimitError, rp.ClientError)
    assert rp.ConflictError is rp.errors.ConflictError
    assert {"ConflictError", "RateLimitError"} <= set(rp.__all__) & set(rp.errors.__all__)


@pytest.mark.parametrize("kind", KINDS)
def test_409_is_a_conflict_error(server: FakeServer, kind: str) -> None:
    server.route("POST", "/thing", lambda request: (409, {"code": 7, "message": "duplicate"}))
    err = fail(server, kind, "post")
    assert type(err) is rp.ConflictError and err.status == 409
    assert err.request_id is None and "request id" not in str(err)


@pytest.mark.parametrize("kind", KINDS)
def test_429_is_a_rate_limit_error_with_retry_after(server: FakeServer, kind: str) -> None:
    server.fail_next(429, path="/thing", headers={"Retry-After": "7", "Request-Id": "req_7"})
    err = fail(server, kind)
    assert type(err) is rp.RateLimitError and err.status == 429
    assert err.retry_after == 7.0 and err.request_id == "req_7"
    assert str(err).endswith("(request id req_7)")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"X-Request-Id": "abc123"}, "abc123"),
        ({"x-correlation-id": "corr-1"}, "corr-1"),
        # The first name of request_id_headers that is present wins, not the first sent.
        ({"X-Correlation-Id": "corr-2", "REQUEST-ID": "req-2"}, "req-2"),
        ({"X-Trace": "t"}, None),
    ],
)
def test_the_request_id_is_the_first_named_header_present(
    server: FakeServer, kind: str, headers: dict[str, str], expected: str | None
) -> None:
    server.fail_next(404, path="/thing", headers=headers)
    err = fail(server, kind)
    assert isinstance(err, rp.NotFoundError) and err.request_id == expected
    if expected is None:
        assert "request id" not in str(err)
    else:
        assert str(err).endswith(f"(request id {expected})")
        # Every detail of the message comes before it (the API's code and message here).
        assert "(999: failure injected" in str(err)


@pytest.mark.parametrize("kind", KINDS)
def test_request_id_headers_is_a_setting(server: FakeServer, kind: str) -> None:
    server.fail_next(503, path="/thing", headers={"X-Amzn-RequestId": "amz-1", "Request-Id": "r"})
    err = fail(server, kind, request_id_headers=["x-amzn-requestid"])
    assert type(err) is rp.ServerError and err.request_id == "amz-1"
    server.fail_next(503, path="/thing", headers={"Request-Id": "r"})
    assert fail(server, kind, request_id_headers=()).request_id is None


@pytest.mark.parametrize("bad", ["Request-Id", [""], ["Bad Name"], [3], None])
def test_bad_request_id_headers_are_configuration_errors(server: FakeServer, bad: Any) -> None:
    with pytest.raises(rp.ConfigurationError, match="request_id_headers"):
        server.client(request_id_headers=bad)


@pytest.mark.parametrize("kind", KINDS)
def test_an_authentication_error_ends_with_the_request_id(server: FakeServer, kind: str) -> None:
    server.fail_next(401, count=2, path="/thing", headers={"X-Request-Id": "auth-1"})
    err = fail(server, kind)
    assert type(err) is rp.AuthenticationError and err.request_id == "auth-1"
    assert str(err).endswith("(request id auth-1)")


@pytest.mark.parametrize("kind", KINDS)
def test_a_protocol_error_for_a_response_has_its_request_id(server: FakeServer, kind: str) -> None:
    server.respond_next(b"not json", path="/thing", headers={"X-Request-Id": "bad-body-1"})
    err = fail(server, kind)
    assert type(err) is rp.ProtocolError and err.status == 200
    assert err.request_id == "bad-body-1" and str(err).endswith("(request id bad-body-1)")


@pytest.mark.parametrize("kind", KINDS)
def test_a_body_over_the_limit_has_its_request_id(server: FakeServer, kind: str) -> None:
    server.respond_next(b"x" * 4096, path="/thing", headers={"Request-Id": "big-1"})
    err = fail(server, kind, max_response_size=1024)
    assert type(err) is rp.ProtocolError and err.request_id == "big-1"


@pytest.mark.parametrize("kind", KINDS)
def test_errors_without_a_response_have_none(server: FakeServer, kind: str) -> None:
    server.drop_next(path="/thing")
    err = fail(server, kind)
    assert type(err) is rp.TransportError and err.request_id is None


def test_the_request_id_survives_pickling_and_copying(server: FakeServer) -> None:
    server.fail_next(409, path="/thing", headers={"Request-Id": "keep-1"})
    err = fail(server, "sync")
    for clone in (pickle.loads(pickle.dumps(err)), copy.copy(err), copy.deepcopy(err)):
        assert type(clone) is rp.ConflictError
        assert clone.request_id == "keep-1" and str(clone) == str(err)
    server.respond_next(b"not json", path="/thing", headers={"Request-Id": "keep-2"})
    protocol = fail(server, "sync")
    assert pickle.loads(pickle.dumps(protocol)).request_id == "keep-2"


def test_errors_built_by_hand_take_a_request_id() -> None:
    err = rp.RateLimitError(
        "GET https://h/: HTTP 429",
        status=429,
        method="GET",
        url="https://h/",
        headers={"Retry-After": "2"},
        request_id="hand-1",
    )
    assert err.retry_after == 2.0 and str(err) == "GET https://h/: HTTP 429 (request id hand-1)"
    assert rp.ProtocolError("bad", request_id="p-1").request_id == "p-1"
    assert rp.TransportError("reset").request_id is None


@pytest.mark.parametrize("kind", KINDS)
def test_the_request_id_is_in_the_attempts_debug_line(
    server: FakeServer, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("DEBUG", logger="recurring_payments")
    server.fail_next(503, path="/thing", headers={"X-Request-Id": "log-1"})
    fail(server, kind)
    (line,) = [r.getMessage() for r in caplog.records if "/thing ->" in r.getMessage()]
    assert line.endswith("(attempt 1, request id log-1)"), line


@pytest.mark.parametrize("kind", KINDS)
def test_the_request_id_is_an_attribute_of_the_attempts_span(server: FakeServer, kind: str) -> None:
    pytest.importorskip("opentelemetry.sdk")
    server.fail_next(503, count=2, path="/thing", headers={"Request-Id": "span-1"})
    with otel_kit.capture() as exporter:
        fail(server, kind, retries=1)
    ids = {
        str((s.attributes or {}).get("url.full")): (s.attributes or {}).get(
            "recurring_payments.request_id"
        )
        for s in exporter.get_finished_spans()
    }
    assert ids == {f"{server.base_url}/oauth/token": None, f"{server.base_url}/thing": "span-1"}
