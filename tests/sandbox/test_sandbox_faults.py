"""Injected faults: fail_next, drop_next, delay_next, malformed_next, respond_next."""

from __future__ import annotations

import json
import time
from http.client import IncompleteRead, RemoteDisconnected

import pytest
from sandbox_http import Http

from recurring_payments.testing import FakeServer


@pytest.fixture
def thing(rp_server: FakeServer) -> FakeServer:
    rp_server.add_resource("/thing", {"ok": True})
    rp_server.add_resource("/other", {"ok": True})
    return rp_server


def test_fail_next(thing: FakeServer, http: Http) -> None:
    token = http.token()
    thing.fail_next()
    answer = http.api("GET", "/thing", token=token)
    assert answer.status == 503
    assert answer.json == {"code": 999, "message": answer.json["message"]}
    assert http.api("GET", "/thing", token=token).status == 200


def test_fail_next_count_status_headers(thing: FakeServer, http: Http) -> None:
    token = http.token()
    thing.fail_next(502, count=2, headers={"Retry-After": "0"})
    first = http.api("GET", "/thing", token=token)
    assert (first.status, first.headers["retry-after"]) == (502, "0")
    assert http.api("GET", "/", token=token).status == 502
    assert http.api("GET", "/thing", token=token).status == 200


def test_fault_with_path_waits_for_that_path(thing: FakeServer, http: Http) -> None:
    token = http.token()
    thing.fail_next(500, path="/other")
    assert http.api("GET", "/thing", token=token).status == 200
    assert http.api("GET", "/other", token=token).status == 500
    assert http.api("GET", "/other", token=token).status == 200


def test_fault_path_may_be_a_full_url(thing: FakeServer, http: Http) -> None:
    token = http.token()
    thing.fail_next(504, path=thing.base_url + "/other?x=1")
    assert http.api("GET", "/other", token=token).status == 504


def test_faults_without_path_spare_the_token_endpoint(thing: FakeServer, http: Http) -> None:
    thing.fail_next()
    assert http.token_answer().status == 200
    assert http.api("GET", "/thing").status == 503  # the token fetch above it was spared


def test_fail_the_token_endpoint(thing: FakeServer, http: Http) -> None:
    thing.fail_next(500, path="/oauth/token")
    assert http.token_answer().status == 500
    assert http.token_answer().status == 200


def test_drop_next(thing: FakeServer, http: Http) -> None:
    token = http.token()
    thing.drop_next()
    with pytest.raises((RemoteDisconnected, ConnectionResetError)):
        http.api("GET", "/thing", token=token)
    assert http.api("GET", "/thing", token=token).status == 200
    dropped = next(r for r in thing.requests if r.path == "/thing")
    assert dropped.status is None


def test_drop_on_a_keep_alive_connection(thing: FakeServer, http: Http) -> None:
    token = http.token()
    headers = {"Accept": http.accept(), "Authorization": f"Bearer {token}"}
    conn = http.connection()
    conn.request("GET", "/thing", headers=headers)
    assert conn.getresponse().read() == b'{"ok":true}'
    thing.drop_next()
    conn.request("GET", "/thing", headers=headers)
    with pytest.raises((RemoteDisconnected, ConnectionResetError)):
        conn.getresponse()
    conn.close()


def test_delay_next(thing: FakeServer, http: Http) -> None:
    token = http.token()
    thing.delay_next(0.5)
    start = time.monotonic()
    assert http.api("GET", "/thing", token=token).status == 200
    assert time.monotonic() - start >= 0.5
    start = time.monotonic()
    assert http.api("GET", "/thing", token=token).status == 200
    assert time.monotonic() - start < 0.5


def test_delay_holds_the_headers(thing: FakeServer, http: Http) -> None:
    token = http.token()
    thing.delay_next(1.0)
    with pytest.raises(TimeoutError):
        Http(thing, timeout=0.2).api("GET", "/thing", token=token)


def test_delay_combines_with_a_failure(thing: FakeServer, http: Http) -> None:
    token = http.token()
    thing.delay_next(0.2)
    thing.fail_next(503)
    start = time.monotonic()
    assert http.api("GET", "/thing", token=token).status == 503
    assert time.monotonic() - start >= 0.2


def test_malformed_next(thing: FakeServer, http: Http) -> None:
    token = http.token()
    thing.malformed_next(count=2)
    for _ in range(2):
        answer = http.api("GET", "/thing", token=token)
        assert answer.status == 200
        assert answer.headers["content-type"].startswith("application/hal+json")
        with pytest.raises(json.JSONDecodeError):
            _ = answer.json
    assert http.api("GET", "/thing", token=token).json == {"ok": True}


def test_clear_faults(thing: FakeServer, http: Http) -> None:
    token = http.token()
    thing.fail_next(count=5)
    thing.drop_next(count=5)
    thing.clear_faults()
    assert http.api("GET", "/thing", token=token).status == 200


def test_faults_are_journaled(thing: FakeServer, http: Http) -> None:
    token = http.token()
    thing.clear_requests()
    thing.fail_next(503)
    http.api("GET", "/thing", token=token)
    [entry] = thing.requests
    assert (entry.path, entry.status) == ("/thing", 503)


# --- respond_next: answers given byte for byte -------------------------------------------------


def test_respond_next_sends_the_bytes_given(thing: FakeServer, http: Http) -> None:
    token = http.token()
    thing.respond_next(b"\xff not json", status=202, headers={"X-Test": "1"})
    answer = http.api("GET", "/thing", token=token)
    assert (answer.status, answer.body) == (202, b"\xff not json")
    assert answer.headers["content-type"].startswith("application/hal+json")
    assert answer.headers["x-test"] == "1" and answer.headers["content-length"] == "10"
    thing.respond_next("é", headers={"Content-Type": "text/plain"}, path="/other")
    answer = http.api("GET", "/other", token=token)
    assert (answer.body, answer.headers["content-type"]) == ("é".encode(), "text/plain")
    assert http.api("GET", "/thing", token=token).json == {"ok": True}


def test_respond_next_repeats_and_may_be_chunked(thing: FakeServer, http: Http) -> None:
    token = http.token()
    thing.respond_next(b"ab", repeat=3)
    answer = http.api("GET", "/thing", token=token)
    assert (answer.body, answer.headers["content-length"]) == (b"ababab", "6")
    thing.respond_next(b"ab", repeat=3, chunked=True)
    answer = http.api("GET", "/thing", token=token)
    assert answer.body == b"ababab" and answer.headers["transfer-encoding"] == "chunked"
    assert "content-length" not in answer.headers


@pytest.mark.parametrize("chunked", [False, True])
def test_respond_next_cuts_the_body(thing: FakeServer, http: Http, chunked: bool) -> None:
    token = http.token()
    thing.respond_next(b"0123456789", repeat=2, cut_after=15, chunked=chunked)
    conn = http.connection()
    conn.request(
        "GET", "/thing", headers={"Accept": http.accept(), "Authorization": f"Bearer {token}"}
    )
    response = conn.getresponse()
    assert response.status == 200
    with pytest.raises(IncompleteRead) as caught:
        response.read()
    assert caught.value.partial == b"012345678901234"
    conn.close()
    assert http.api("GET", "/thing", token=token).status == 200


def test_respond_next_slow_body(thing: FakeServer, http: Http) -> None:
    token = http.token()
    thing.respond_next(b"{}", repeat=3, chunk_delay=0.2, path="/thing")
    start = time.monotonic()
    answer = http.api("GET", "/thing", token=token)
    assert answer.body == b"{}{}{}" and time.monotonic() - start >= 0.4


def test_respond_next_refuses_what_it_cannot_send(thing: FakeServer) -> None:
    with pytest.raises(ValueError):
        thing.respond_next(b"", status=101)
    with pytest.raises(ValueError):
        thing.respond_next(b"", headers={"Content-Length": "3"})
    with pytest.raises(ValueError):
        thing.respond_next(b"", repeat=0)
    with pytest.raises(ValueError):
        thing.respond_next(b"", chunk_delay=-1)
