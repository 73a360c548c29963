"""What a merchant needs to recover (docs/guarantees.md#outcome), sync and async: `outcome_unknown`,
the deadline of a call (`total_timeout`), retries of what was never sent, 429, empty bodies, extra
headers and conditional PATCH."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import header
from fault_kit import Api, connects_hang, install_routes, unique_body

import recurring_payments as rp
from recurring_payments.testing import FakeServer

pytestmark = pytest.mark.attack("money")
KINDS = ["sync", "async"]
JSON = {"Content-Type": "application/json"}


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer() as s:
        install_routes(s)
        yield s


def writes(server: FakeServer, path: str = "/orders") -> list[Any]:
    return [r for r in server.requests if r.method in ("POST", "PATCH") and r.path == path]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


# --- outcome_unknown ----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_a_post_that_timed_out_after_it_was_written_has_an_unknown_outcome(
    server: FakeServer, kind: str
) -> None:
    api = Api(server, kind, timeout=0.3)
    try:
        api.root()
        server.delay_next(2.0, path="/orders")
        with pytest.raises(rp.TimeoutError) as caught:
            api.post("/orders", unique_body())
        assert caught.value.outcome_unknown is True
        assert len(writes(server)) == 1  # never retried
    finally:
        api.close()


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("fault", ["dropped", "cut short"])
def test_a_write_whose_answer_never_came_whole_has_an_unknown_outcome(
    server: FakeServer, kind: str, fault: str
) -> None:
    api = Api(server, kind)
    try:
        api.root()
        if fault == "dropped":
            server.drop_next(path="/orders")
        else:
            server.respond_next(b'{"reference": "', status=201, cut_after=5, path="/orders")
        with pytest.raises(rp.TransportError) as caught:
            api.post("/orders", unique_body())
        assert caught.value.outcome_unknown is True
        assert len(writes(server)) == 1
    finally:
        api.close()


@pytest.mark.parametrize("kind", KINDS)
def test_a_get_that_failed_is_never_of_unknown_outcome(server: FakeServer, kind: str) -> None:
    api = Api(server, kind, timeout=0.3, retries=0)
    try:
        server.delay_next(2.0, path="/thing")
        with pytest.raises(rp.TimeoutError) as caught:
            api.get("/thing")
        assert caught.value.outcome_unknown is False
    finally:
        api.close()


@pytest.mark.parametrize("kind", KINDS)
def test_a_failed_token_request_before_a_post_leaves_the_outcome_known(
    server: FakeServer, kind: str
) -> None:
    api = Api(server, kind, timeout=0.3)
    try:
        server.delay_next(2.0, path="/oauth/token")
        with pytest.raises(rp.TimeoutError) as caught:
            api.post("/orders", unique_body())
        assert caught.value.outcome_unknown is False
        assert writes(server) == []
    finally:
        api.close()


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("fault", ["dropped", "hung"])
def test_a_post_refused_with_401_whose_new_token_fails_has_a_known_outcome(
    server: FakeServer, kind: str, fault: str
) -> None:
    # Found by the soak: the 401 says the POST was not processed; the token request of its
    # replay then fails. Nothing was processed, so the outcome is known.
    api = Api(server, kind, timeout=0.3, retries=0)
    try:
        api.root()
        server.expire_tokens()
        if fault == "dropped":
            server.drop_next(path="/oauth/token")
        else:
            server.delay_next(2.0, path="/oauth/token")
        with pytest.raises(rp.TransportError) as caught:
            api.post("/orders", unique_body())
        assert caught.value.outcome_unknown is False
        assert [r.status for r in writes(server)] == [401]
    finally:
        api.close()


@pytest.mark.parametrize("kind", KINDS)
def test_complete_answers_have_a_known_outcome(server: FakeServer, kind: str) -> None:
    api = Api(server, kind)
    try:
        server.fail_next(500, path="/orders")
        with pytest.raises(rp.ServerError) as caught:
            api.post("/orders", unique_body())
        assert caught.value.outcome_unknown is False
        server.respond_next(
            b"{not json", status=201, headers={**JSON, "Location": "/orders/9"}, path="/orders"
        )
        with pytest.raises(rp.ProtocolError) as bad:
            api.post("/orders", unique_body())
        # The order was created: the error still says so, and where.
        assert (bad.value.status, bad.value.outcome_unknown) == (201, False)
        assert bad.value.headers["location"] == "/orders/9"
    finally:
        api.close()


@pytest.mark.parametrize("kind", KINDS)
def test_a_processed_post_whose_redirect_target_failed_is_of_unknown_outcome(
    server: FakeServer, kind: str
) -> None:
    server.route("POST", "/checkout", lambda request: (303, None, {"Location": "/thing"}))
    api = Api(server, kind, retries=0)
    try:
        api.root()
        server.drop_next(path="/thing")
        with pytest.raises(rp.TransportError) as caught:
            api.post("/checkout", unique_body())
        # The GET failed, but the POST before it reached the server: not safe to send again.
        assert caught.value.outcome_unknown is True
        assert len(writes(server, "/checkout")) == 1
    finally:
        api.close()


# --- what was never sent is retried ---------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_a_refused_post_is_retried_and_known_not_to_have_arrived(kind: str) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    client: Any = (rp.Client if kind == "sync" else rp.AsyncClient)(
        base,
        credentials=rp.AppCredentials("app", "secret-that-never-leaves"),
        profile=base + "/alps/v1",
        retries=2,
    )
    api = Api.__new__(Api)
    api.kind, api.client = kind, client
    started = time.monotonic()
    try:
        with pytest.raises(rp.TransportError) as caught:
            api.post("/orders", unique_body())
        assert caught.value.outcome_unknown is False
        assert "connection failed" in str(caught.value)
        assert time.monotonic() - started >= 0.25  # two backoff pauses: it was retried
    finally:
        api.close()


@contextlib.contextmanager
def api_whose_connects_hang(kind: str, **settings: Any) -> Iterator[Api]:
    """A client that has its token and the entry point, of an API that then stops answering
    connects: nothing of a later request can be written."""
    server = FakeServer()
    install_routes(server)
    server.start()
    api = Api(server, kind, **settings)
    try:
        api.root()
        port = int(server.base_url.rsplit(":", 1)[1].split("/")[0])
        server.stop()
        # The async client's idle connection is watched by a task on the runtime's workers:
        # give it time to see the server's close, or the request may go out on that closing
        # connection (a failure after writing, not the connect these tests are about).
        time.sleep(0.2)
        with connects_hang(port):
            yield api
    finally:
        api.close()
        server.stop()


@pytest.mark.parametrize("kind", KINDS)
def test_a_connect_cut_by_the_attempts_timeout_is_known_not_to_have_sent_and_is_retried(
    kind: str,
) -> None:
    # `timeout` (0.5 s) shorter than `connect_timeout` (10 s): the attempt's timer cuts the
    # connect, which must read as a failure before anything was written (outcome known,
    # retried), not as a timeout after the request started: no connection ever existed.
    with api_whose_connects_hang(kind, timeout=0.5, connect_timeout=10.0, retries=2) as api:
        for send in (lambda: api.post("/orders", unique_body()), lambda: api.get("/thing")):
            started = time.monotonic()
            with pytest.raises(rp.TimeoutError) as caught:
                send()
            assert caught.value.outcome_unknown is False
            assert "connect timeout" in str(caught.value)
            # 1 + `retries` attempts of ~0.5 s and two backoff pauses: it was retried.
            assert time.monotonic() - started >= 1.6


@pytest.mark.parametrize("kind", KINDS)
def test_a_connect_cut_by_the_calls_deadline_is_known_not_to_have_sent(kind: str) -> None:
    with api_whose_connects_hang(kind, total_timeout=1.0, connect_timeout=10.0, retries=3) as api:
        started = time.monotonic()
        with pytest.raises(rp.TimeoutError) as caught:
            api.patch("/orders/1", unique_body())
        assert caught.value.outcome_unknown is False
        assert time.monotonic() - started < 1.5  # cut at the deadline, not at 10 s


@pytest.mark.parametrize("kind", KINDS)
def test_a_post_to_an_api_that_is_restarting_goes_through_once(kind: str) -> None:
    port = free_port()
    pending = FakeServer(port=port)
    pending.route("POST", "/orders", lambda request: (201, {"ref": request.json["ref"]}))
    base = f"http://127.0.0.1:{port}"
    client: Any = (rp.Client if kind == "sync" else rp.AsyncClient)(
        base, credentials=pending.credentials, profile=base + "/alps/v1", retries=6
    )
    api = Api.__new__(Api)
    api.kind, api.client = kind, client
    starter = threading.Timer(0.3, pending.start)
    starter.start()
    try:
        body = unique_body()
        assert api.post("/orders", body)["ref"] == body["ref"]
        assert len(writes(pending)) == 1
        assert len(pending.token_requests) == 1  # the token request was retried too
    finally:
        starter.join()
        api.close()
        pending.stop()


# --- the deadline of a call -------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seconds", ["30", str(2**64 - 1)])  # the largest: no overflow either
def test_retry_after_longer_than_the_deadline_raises_at_once(
    server: FakeServer, kind: str, seconds: str
) -> None:
    api = Api(server, kind, total_timeout=2.0, retries=5)
    try:
        api.root()
        server.fail_next(503, count=10, path="/thing", headers={"Retry-After": seconds})
        started = time.monotonic()
        with pytest.raises(rp.ServerError) as caught:
            api.get("/thing")
        assert time.monotonic() - started < 1.5
        assert caught.value.status == 503
        assert len([r for r in server.requests if r.path == "/thing"]) == 1
    finally:
        api.close()


@pytest.mark.parametrize("kind", KINDS)
def test_an_attempt_in_flight_at_the_deadline_is_cut(server: FakeServer, kind: str) -> None:
    api = Api(server, kind, total_timeout=0.5, timeout=20.0)
    try:
        api.root()
        server.delay_next(5.0, path="/orders")
        started = time.monotonic()
        with pytest.raises(rp.TimeoutError, match="total_timeout") as caught:
            api.post("/orders", unique_body())
        assert time.monotonic() - started < 2.0
        assert caught.value.outcome_unknown is True
    finally:
        api.close()


@pytest.mark.parametrize("kind", KINDS)
def test_the_deadline_covers_the_token_request(server: FakeServer, kind: str) -> None:
    api = Api(server, kind, total_timeout=0.5, timeout=20.0)
    try:
        server.delay_next(5.0, path="/oauth/token")
        started = time.monotonic()
        with pytest.raises(rp.TimeoutError) as caught:
            api.get("/thing")
        assert time.monotonic() - started < 2.0
        assert caught.value.outcome_unknown is False
    finally:
        api.close()


@pytest.mark.parametrize("kind", KINDS)
def test_retries_stop_at_the_deadline(server: FakeServer, kind: str) -> None:
    api = Api(server, kind, total_timeout=1.0, retries=50)
    try:
        api.root()
        server.fail_next(503, count=100, path="/thing")
        started = time.monotonic()
        with pytest.raises(rp.ServerError):
            api.get("/thing")
        assert time.monotonic() - started < 1.8
    finally:
        api.close()


# --- 429 --------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_429_is_retried_for_get_only(server: FakeServer, kind: str) -> None:
    api = Api(server, kind)
    try:
        server.fail_next(429, path="/thing", headers={"Retry-After": "0"})
        assert api.get("/thing")["ok"] is True
        server.fail_next(429, path="/orders", headers={"Retry-After": "7"})
        with pytest.raises(rp.ClientError) as caught:
            api.post("/orders", unique_body())
        assert caught.value.status == 429
        assert len(writes(server)) == 1
    finally:
        api.close()


# --- empty bodies -----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_an_empty_200_is_a_protocol_error_but_not_an_empty_201_or_204(
    server: FakeServer, kind: str
) -> None:
    api = Api(server, kind)
    try:
        server.respond_next(b"", status=200, path="/thing")
        with pytest.raises(rp.ProtocolError, match="empty body") as caught:
            api.get("/thing")
        assert caught.value.status == 200
        for status in (201, 202, 204):
            server.respond_next(b"", status=status, path="/orders")
            created = api.post("/orders", unique_body())
            assert (created.status, dict(created)) == (status, {})
    finally:
        api.close()


# --- extra headers, If-Match ------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_extra_headers_go_to_the_api_origin_only(server: FakeServer, kind: str) -> None:
    with FakeServer() as elsewhere:
        elsewhere.respond_next(b"{}", headers=JSON, path="/page")
        api = Api(server, kind, headers={"X-Merchant": "shop-42"})
        try:
            api.get("/thing")
            api.get(f"{elsewhere.base_url}/page")
            (thing,) = [r for r in server.requests if r.path == "/thing"]
            assert header(thing, "x-merchant") == "shop-42"
            assert header(server.token_requests[0], "x-merchant") is None
            assert header(elsewhere.requests[0], "x-merchant") is None
        finally:
            api.close()


@pytest.mark.parametrize("name", ["Authorization", "accept", "Content-Type", "Host"])
def test_extra_headers_cannot_replace_the_protocol_s(server: FakeServer, name: str) -> None:
    with pytest.raises(rp.ConfigurationError, match="headers"):
        server.client(headers={name: "x"})


@pytest.mark.parametrize("kind", KINDS)
def test_if_match_is_sent_and_412_is_a_precondition_failure(server: FakeServer, kind: str) -> None:
    api = Api(server, kind)
    try:
        api._run(api.client.patch("/orders/1", unique_body(), if_match='"v7"'))
        assert header(writes(server, "/orders/1")[-1], "if-match") == '"v7"'
        server.fail_next(412, path="/orders/1")
        with pytest.raises(rp.PreconditionFailedError) as caught:
            api._run(api.client.patch("/orders/1", unique_body(), if_match='"v6"'))
        assert isinstance(caught.value, rp.ClientError) and caught.value.status == 412
    finally:
        api.close()
