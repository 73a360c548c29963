"""Errors and faults: each typed error, its fields, and the client still working afterwards."""

from __future__ import annotations

import asyncio
import builtins

import pytest
from conftest import api_requests

import recurring_payments as rp
from recurring_payments.testing import FakeServer


def test_not_found_carries_the_api_error_body(server: FakeServer, client: rp.Client) -> None:
    with pytest.raises(rp.NotFoundError) as caught:
        client.get("/nowhere")
    err = caught.value
    assert err.status == 404 and err.method == "GET" and err.url.endswith("/nowhere")
    assert isinstance(err.code, int) and err.message
    assert err.json == {"code": err.code, "message": err.message}
    assert "GET" in str(err) and "/nowhere" in str(err)
    assert "Bearer" not in str(err) and "authorization" not in err.headers


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_base_url_the_sandbox_serves_nothing_at_is_a_404(server: FakeServer, kind: str) -> None:
    # One segment too many: the token request goes to /v1/oauth/token. The answer names the
    # real cause, not the headers a token request sends (it was a 406 asking for HAL).
    settings = {"credentials": server.credentials, "profile": server.profile}
    if kind == "sync":
        with rp.Client(server.base_url + "/v1", **settings) as client:
            with pytest.raises(rp.NotFoundError) as caught:
                client.root()
    else:

        async def root() -> None:
            async with rp.AsyncClient(server.base_url + "/v1", **settings) as client:
                await client.root()

        with pytest.raises(rp.NotFoundError) as caught:
            asyncio.run(root())
    err = caught.value
    assert (err.status, err.method, err.code) == (404, "POST", 902)
    assert err.url == server.base_url + "/v1/oauth/token"
    assert "HTTP 404" in str(err) and "no resource at /v1/oauth/token" in str(err)
    assert [r.path for r in server.requests] == ["/v1/oauth/token"]


def test_client_and_server_errors(server: FakeServer, client: rp.Client) -> None:
    server.route("POST", "/bad", lambda request: (400, {"code": 901, "message": "duplicate"}))
    with pytest.raises(rp.ClientError) as caught:
        client.post("/bad", {"a": 1})
    assert (caught.value.status, caught.value.code, caught.value.message) == (400, 901, "duplicate")
    server.route("GET", "/boom", lambda request: (500, {"code": 1, "message": "internal"}))
    with pytest.raises(rp.ServerError):
        client.get("/boom")
    assert client.get("/").status == 200


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_long_error_body_is_kept_whole(server: FakeServer, kind: str) -> None:
    # A validation error listing many fields: it was cut at 64 KiB, and with it `.json`,
    # `.code` and `.message`.
    problems = [{"field": f"items[{i}].amount", "error": "must be positive"} for i in range(2000)]
    body = {"code": 4711, "message": "mandate rejected", "problems": problems}
    server.route("POST", "/mandates", lambda request: (422, body))
    if kind == "sync":
        with server.client() as client, pytest.raises(rp.ClientError) as caught:
            client.post("/mandates", {})
    else:

        async def post() -> None:
            async with server.async_client() as client:
                await client.post("/mandates", {})

        with pytest.raises(rp.ClientError) as caught:
            asyncio.run(post())
    err = caught.value
    assert len(err.body) > 100_000 and err.json == body
    assert (err.code, err.message) == (4711, "mandate rejected")


def test_get_is_retried_on_503(server: FakeServer) -> None:
    with server.client(retries=2) as client:
        client.root()
        server.clear_requests()
        server.fail_next(status=503, count=2, path="/")
        assert client.get("/").status == 200
        assert len(api_requests(server, "GET")) == 3


def test_get_gives_up_after_the_retries(server: FakeServer) -> None:
    with server.client(retries=1) as client:
        client.root()
        server.clear_requests()
        server.fail_next(status=502, count=5, path="/")
        with pytest.raises(rp.ServerError) as caught:
            client.get("/")
        assert caught.value.status == 502
        assert len(api_requests(server, "GET")) == 2


def test_post_is_never_retried_after_503(server: FakeServer, client: rp.Client) -> None:
    server.route("POST", "/orders", lambda request: (201, {"id": 1}))
    client.root()
    server.fail_next(status=503, count=1, path="/orders")
    with pytest.raises(rp.ServerError):
        client.post("/orders", {"reference": "once"})
    assert len(api_requests(server, "POST")) == 1


def test_post_is_never_retried_after_a_dropped_connection(
    server: FakeServer, client: rp.Client
) -> None:
    server.route("POST", "/orders", lambda request: (201, {"id": 1}))
    client.root()
    server.drop_next(count=1, path="/orders")
    with pytest.raises(rp.TransportError):
        client.post("/orders", {"reference": "once"})
    assert len(api_requests(server, "POST")) == 1
    assert client.post("/orders", {"reference": "twice"}).status == 201


def test_get_is_retried_after_a_dropped_connection(server: FakeServer, client: rp.Client) -> None:
    client.root()
    server.clear_requests()
    server.drop_next(count=1, path="/")
    assert client.get("/").status == 200
    assert len(api_requests(server, "GET")) == 2


def test_timeout(server: FakeServer) -> None:
    with server.client(timeout=0.3, retries=0) as client:
        client.root()
        server.delay_next(2.0, path="/")
        with pytest.raises(rp.TimeoutError) as caught:
            client.get("/")
        assert isinstance(caught.value, builtins.TimeoutError)
        assert isinstance(caught.value, rp.TransportError)
        assert client.get("/").status == 200


def test_malformed_json_is_a_protocol_error(server: FakeServer, client: rp.Client) -> None:
    client.root()
    server.malformed_next(path="/")
    with pytest.raises(rp.ProtocolError, match="JSON"):
        client.get("/")
    assert client.get("/").status == 200


def test_oversized_body_is_a_protocol_error(server: FakeServer) -> None:
    server.add_resource("/big", {"blob": "x" * 200_000})
    with server.client(max_response_size=100_000) as client:
        with pytest.raises(rp.ProtocolError, match="max_response_size"):
            client.get("/big")
        assert client.get("/").status == 200


def test_too_deeply_nested_body_is_a_protocol_error(server: FakeServer, client: rp.Client) -> None:
    server.route("GET", "/deep", lambda request: {"nest": _nested(100)})
    assert client.get("/deep")["nest"]
    deep: dict = {}
    server.route("GET", "/deeper", lambda request: {"nest": _nested(400)})
    with pytest.raises(rp.ProtocolError):
        client.get("/deeper")
    assert client.get("/").status == 200
    assert deep == {}


def _nested(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


def test_request_body_that_is_not_json_serialisable(client: rp.Client) -> None:
    with pytest.raises(TypeError):
        client.post("/orders", {"when": object()})
    with pytest.raises(ValueError):
        client.post("/orders", {"amount": float("nan")})


def test_decimal_amounts_are_sent_exactly(server: FakeServer, client: rp.Client) -> None:
    from decimal import Decimal

    server.route("POST", "/payments", lambda request: (201, {"ok": True}))
    client.post("/payments", {"amount": Decimal("10.10"), "n": 3})
    (post,) = api_requests(server, "POST")
    assert bytes(post.body) == b'{"amount":10.10,"n":3}'
