"""Fault injection on authentication and origins, sync and async (issue 8): the token endpoint
down or answering garbage, 401 storms, links and redirects to other origins. Each: the exact
error class, the client working afterwards, no POST or PATCH sent twice."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from conftest import header
from fault_kit import (
    Api,
    assert_nothing_sent_twice,
    assert_still_works,
    install_routes,
    unique_body,
)

import recurring_payments as rp
from recurring_payments.testing import FakeServer

KINDS = ["sync", "async"]
TOKEN = "/oauth/token"
JSON = {"Content-Type": "application/json"}


@pytest.fixture
def target() -> Iterator[FakeServer]:
    with FakeServer() as server:
        install_routes(server)
        yield server


def _token_answer(body: bytes) -> Callable[[FakeServer], None]:
    return lambda server: server.respond_next(body, headers=JSON, path=TOKEN)


TOKEN_FAULTS: dict[str, tuple[Callable[[FakeServer], None], type[rp.Error]]] = {
    "dropped": (lambda s: s.drop_next(path=TOKEN), rp.TransportError),
    "down (503 storm)": (lambda s: s.fail_next(503, count=20, path=TOKEN), rp.ServerError),
    "slow": (lambda s: s.delay_next(3.0, path=TOKEN), rp.TimeoutError),
    "cut short": (
        lambda s: s.respond_next(b'{"access_token": "', headers=JSON, cut_after=5, path=TOKEN),
        rp.TransportError,
    ),
    "garbage": (_token_answer(b"<html>garbage</html>"), rp.ProtocolError),
    "invalid UTF-8": (_token_answer(b'{"access_token": "\xff"}'), rp.ProtocolError),
    "not an object": (_token_answer(b'["access_token"]'), rp.ProtocolError),
    "no access_token": (
        _token_answer(b'{"token_type": "bearer", "expires_in": 960}'),
        rp.ProtocolError,
    ),
    "access_token not a string": (
        _token_answer(b'{"access_token": 7, "token_type": "bearer", "expires_in": 960}'),
        rp.ProtocolError,
    ),
    "not a bearer token": (
        _token_answer(b'{"access_token": "abc", "token_type": "mac", "expires_in": 960}'),
        rp.ProtocolError,
    ),
    "no expires_in": (
        _token_answer(b'{"access_token": "abc", "token_type": "bearer"}'),
        rp.ProtocolError,
    ),
    "80 MiB": (
        lambda s: s.respond_next(b"x" * 65536, repeat=1280, headers=JSON, path=TOKEN),
        rp.ProtocolError,
    ),
    "credentials refused (401)": (lambda s: s.fail_next(401, path=TOKEN), rp.AuthenticationError),
    "request refused (400)": (lambda s: s.fail_next(400, path=TOKEN), rp.AuthenticationError),
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("fault", list(TOKEN_FAULTS))
@pytest.mark.parametrize("method", ["GET", "POST"])
def test_token_endpoint_fault(target: FakeServer, kind: str, fault: str, method: str) -> None:
    arm, error = TOKEN_FAULTS[fault]
    api = Api(target, kind, retries=2, timeout=1.0)
    try:
        arm(target)
        with pytest.raises(rp.Error) as caught:
            if method == "GET":
                api.get("/thing")
            else:
                api.post("/orders", unique_body())
        assert type(caught.value) is error, repr(caught.value)
        assert "POST" in str(caught.value) and TOKEN in str(caught.value)
        # The API request was never sent without a token, and the token request not retried.
        assert [r.path for r in target.requests] == [TOKEN]
        assert api.client.token is None
        target.clear_faults()
        assert_still_works(target, api)
        assert len(target.token_requests) == 2
    finally:
        api.close()


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("method", ["GET", "POST", "PATCH"])
def test_401_storm(target: FakeServer, kind: str, method: str) -> None:
    api = Api(target, kind, retries=2)
    try:
        api.root()
        target.clear_requests()
        target.fail_next(401, count=100)
        with pytest.raises(rp.AuthenticationError) as caught:
            if method == "GET":
                api.get("/thing")
            elif method == "POST":
                api.post("/orders", unique_body())
            else:
                api.patch("/orders/1", unique_body())
        assert caught.value.status == 401
        # The token is dropped, one new token request, one replay, then the error.
        seen = [(r.method, r.path, r.status) for r in target.requests]
        assert seen == [
            (method, seen[0][1], 401),
            ("POST", TOKEN, 200),
            (method, seen[0][1], 401),
        ]
        target.clear_faults()
        assert_still_works(target, api)
    finally:
        api.close()


@pytest.mark.parametrize("kind", KINDS)
def test_401_for_a_replaced_token_is_replayed_without_a_token_request(
    target: FakeServer, kind: str
) -> None:
    api = Api(target, kind)
    try:
        api.root()
        target.expire_tokens()
        target.clear_requests()
        body = unique_body()
        assert api.post("/orders", body)["reference"] == body["ref"]
        assert [(r.method, r.path, r.status) for r in target.requests] == [
            ("POST", "/orders", 401),
            ("POST", TOKEN, 200),
            ("POST", "/orders", 201),
        ]
        assert_nothing_sent_twice(target)
    finally:
        api.close()


# --- other origins ------------------------------------------------------------------------------


@pytest.fixture
def elsewhere() -> Iterator[FakeServer]:
    with FakeServer() as server:
        yield server


@pytest.mark.attack("origin")
@pytest.mark.parametrize("kind", KINDS)
def test_links_to_another_origin(target: FakeServer, elsewhere: FakeServer, kind: str) -> None:
    checkout = f"{elsewhere.base_url}/checkout/1"
    target.add_resource(
        "/order", {"_links": {"self": {"href": "/order"}, "user-approval": {"href": checkout}}}
    )
    api = Api(target, kind)
    try:
        # The other origin answers (faults apply before its checks): no credentials went there.
        elsewhere.respond_next(b'{"paid": false}', path="/checkout/1")
        assert api.get(checkout)["paid"] is False
        # A 401 from elsewhere is a plain 4xx (no credentials were refused): no token request,
        # no replay.
        tokens = len(target.token_requests)
        elsewhere.fail_next(401, path="/checkout/1")
        with pytest.raises(rp.ClientError) as caught:
            api.post(checkout, unique_body())
        assert type(caught.value) is rp.ClientError and caught.value.status == 401
        elsewhere.fail_next(503, count=5, path="/checkout/1")
        with pytest.raises(rp.ServerError):
            api.patch(checkout, unique_body())
        assert len(target.token_requests) == tokens
        assert [r.method for r in elsewhere.requests] == ["GET", "POST", "PATCH"]
        assert all(header(r, "authorization") is None for r in elsewhere.requests)
        assert_nothing_sent_twice(elsewhere)
        assert_still_works(target, api)
    finally:
        api.close()


@pytest.mark.attack("origin")
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_redirects_to_another_origin(
    target: FakeServer, elsewhere: FakeServer, kind: str, status: int
) -> None:
    landing = f"{elsewhere.base_url}/landing"
    target.route("GET", "/moved", lambda request: (status, None, {"Location": landing}))
    target.route("POST", "/moved", lambda request: (status, None, {"Location": landing}))
    api = Api(target, kind)
    try:
        elsewhere.respond_next(b'{"landed": true}', count=2, path="/landing")
        assert api.get("/moved")["landed"] is True
        assert api.post("/moved", unique_body())["landed"] is True
        assert all(header(r, "authorization") is None for r in elsewhere.requests)
        assert len(elsewhere.requests) == 2
        assert_nothing_sent_twice(target)
        assert_nothing_sent_twice(elsewhere)
        assert_still_works(target, api)
    finally:
        api.close()
