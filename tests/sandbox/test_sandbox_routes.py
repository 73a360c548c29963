"""Route handlers, the request journal, and concurrency."""

from __future__ import annotations

import asyncio
import json
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from sandbox_http import Http

from recurring_payments.testing import FakeServer


def test_journal_records_everything(rp_server: FakeServer, http: Http) -> None:
    rp_server.route("POST", "/things", lambda request: (201, {"id": 1}))
    token = http.token()
    rp_server.clear_requests()
    http.api("GET", "/?a=1&b=x%20y&a=2", token=token, headers={"X-Custom": "yes"})
    http.api("POST", "/things", {"name": "n", "n": [1, 2]}, token=token)
    get, post = rp_server.requests
    assert (get.method, get.path, get.status) == ("GET", "/", 200)
    assert get.query == {"a": "1", "b": "x y"}
    assert get.query_list == [("a", "1"), ("b", "x y"), ("a", "2")]
    assert get.query_string == "a=1&b=x%20y&a=2"
    assert get.headers["x-custom"] == "yes"
    assert get.headers["authorization"] == f"Bearer {token}"
    assert get.headers["accept"] == http.accept()
    assert get.body == b""
    assert get.json is None
    assert get.error is None
    assert (post.method, post.path, post.status) == ("POST", "/things", 201)
    assert post.headers["content-type"] == "application/json"
    assert post.json == {"name": "n", "n": [1, 2]}
    assert json.loads(post.body) == post.json
    assert post.time >= get.time
    assert "POST /things -> 201" in repr(post)
    rp_server.clear_requests()
    assert rp_server.requests == []


def test_journal_limit() -> None:
    with FakeServer(journal_limit=3) as server:
        http = Http(server)
        token = http.token()
        for i in range(5):
            http.api("GET", f"/?i={i}", token=token)
        assert [r.query["i"] for r in server.requests] == ["2", "3", "4"]


def test_handler_gets_the_request(rp_server: FakeServer, http: Http) -> None:
    seen: list[Any] = []

    def handler(request: Any) -> Any:
        seen.append(request)
        return (
            201,
            {"id": request.path_params["id"], "got": request.json},
            {"Location": f"{rp_server.base_url}/things/{request.path_params['id']}"},
        )

    rp_server.route("POST", "/things/{id}/items", handler)
    answer = http.api("POST", "/things/a%20b/items?x=1", {"k": "v"})
    assert answer.status == 201
    assert answer.headers["location"] == f"{rp_server.base_url}/things/a b"
    assert answer.headers["content-type"].startswith("application/hal+json; profile=")
    assert answer.json == {"id": "a b", "got": {"k": "v"}}
    [request] = seen
    assert (request.method, request.path) == ("POST", "/things/a%20b/items")
    assert request.path_params == {"id": "a b"}
    assert request.query == {"x": "1"}
    assert request.headers["content-type"] == "application/json"
    assert request.body == b'{"k": "v"}'


@pytest.mark.parametrize(
    ("result", "status", "body"),
    [
        ({"a": 1}, 200, b'{"a":1}'),
        ([1, "x"], 200, b'[1,"x"]'),
        ((202, {"a": 1}), 202, b'{"a":1}'),
        ((200, {"a": 1}, None), 200, b'{"a":1}'),
        (None, 204, b""),
        ((201, None, {"Location": "/x"}), 201, b""),
    ],
)
def test_handler_results(
    rp_server: FakeServer, http: Http, result: Any, status: int, body: bytes
) -> None:
    rp_server.route("GET", "/r", lambda request: result)
    answer = http.api("GET", "/r")
    assert (answer.status, answer.body) == (status, body)


def test_handler_that_raises_is_a_500_with_traceback(rp_server: FakeServer, http: Http) -> None:
    def broken(request: Any) -> Any:
        raise ValueError("no such thing")

    rp_server.route("GET", "/broken", broken)
    answer = http.api("GET", "/broken")
    assert answer.status == 500
    assert answer.json == {"code": 900, "message": "handler raised ValueError: no such thing"}
    entry = rp_server.requests[-1]
    assert entry.status == 500
    assert "Traceback (most recent call last)" in entry.error
    assert "in broken" in entry.error
    assert "ValueError: no such thing" in entry.error
    assert http.api("GET", "/").status == 200


@pytest.mark.parametrize(
    "result",
    [
        (1, 2, 3, 4),
        ("200", {}),
        (99, {}),
        (600, {}),
        (200, {"x": float("nan")}),
        (200, {"x": object()}),
        (200, {}, {"Bad Header": "x"}),
        (200, {}, {"X": "line\nbreak"}),
        (200, {}, ["not", "a", "mapping"]),
    ],
)
def test_bad_handler_results_are_500(rp_server: FakeServer, http: Http, result: Any) -> None:
    rp_server.route("GET", "/bad", lambda request: result)
    answer = http.api("GET", "/bad")
    assert (answer.status, answer.json["code"]) == (500, 900)
    assert rp_server.requests[-1].error


def test_rules_are_checked_before_the_handler(rp_server: FakeServer, http: Http) -> None:
    calls: list[Any] = []
    rp_server.route("POST", "/h", lambda request: calls.append(request))
    assert http.request("POST", "/h", b"{}", {"Accept": http.accept()}).status == 401
    assert http.api("POST", "/h", b"{}", content_type="text/plain").status == 415
    assert http.api("POST", "/h", b"{", content_type="application/json").status == 400
    assert calls == []


def test_latest_registration_wins(rp_server: FakeServer, http: Http) -> None:
    rp_server.route("GET", "/things/{id}", lambda request: {"from": "route"})
    rp_server.add_resource("/things/1", {"from": "resource"})
    assert http.api("GET", "/things/1").json == {"from": "resource"}
    assert http.api("GET", "/things/2").json == {"from": "route"}
    rp_server.route("GET", "/things/{id}", lambda request: {"from": "new route"})
    assert http.api("GET", "/things/1").json == {"from": "new route"}


def test_entry_point_can_be_overridden(rp_server: FakeServer, http: Http) -> None:
    rp_server.route("GET", "/", lambda request: {"_links": {}})
    assert http.api("GET", "/").json == {"_links": {}}


def test_handler_may_use_the_server(rp_server: FakeServer, http: Http) -> None:
    # No lock is held while a handler runs, so it can read the journal and add routes.
    def handler(request: Any) -> Any:
        rp_server.add_resource("/made", {"n": len(rp_server.requests)})
        return {"ok": True}

    rp_server.route("POST", "/make", handler)
    assert http.api("POST", "/make").status == 200
    assert http.api("GET", "/made").json == {"n": 2}


def test_100_concurrent_requests(rp_server: FakeServer, http: Http) -> None:
    rp_server.add_resource("/static", {"ok": True})

    def slow(request: Any) -> Any:
        time.sleep(0.01)
        return {"i": request.query["i"]}

    rp_server.route("GET", "/slow", slow)
    token = http.token()

    def one(i: int) -> tuple[int, Any]:
        path = "/static" if i % 2 else f"/slow?i={i}"
        answer = http.api("GET", path, token=token)
        return answer.status, answer.json

    with ThreadPoolExecutor(max_workers=100) as pool:
        results = list(pool.map(one, range(100)))
    assert [status for status, _ in results] == [200] * 100
    assert [body for i, (_, body) in enumerate(results) if i % 2 == 0] == [
        {"i": str(i)} for i in range(0, 100, 2)
    ]
    assert len([r for r in rp_server.requests if r.path in ("/static", "/slow")]) == 100


def test_async_handler(rp_server: FakeServer, http: Http) -> None:
    async def handler(request: Any) -> Any:
        await asyncio.sleep(0)
        return 201, {"async": True}

    rp_server.route("POST", "/async", handler)
    answer = http.api("POST", "/async")
    assert (answer.status, answer.json) == (201, {"async": True})


def test_handler_cannot_break_the_framing(rp_server: FakeServer, http: Http) -> None:
    headers = {"Content-Length": "1000", "Transfer-Encoding": "chunked", "X-Kept": "1"}
    rp_server.route("GET", "/framing", lambda request: (200, {"a": 1}, headers))
    answer = http.api("GET", "/framing")
    assert (answer.status, answer.body, answer.headers["x-kept"]) == (200, b'{"a":1}', "1")
    assert answer.headers["content-length"] == "7"
