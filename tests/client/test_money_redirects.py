"""Redirects never cause a replay (docs/guarantees.md#outcome), sync and async: the client follows
redirects hop by hop; a 401 replays only the hop that carried our token; a POST or PATCH answered by
a redirect is never sent again, whatever the later hops answer."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from conftest import header
from fault_kit import Api, assert_nothing_sent_twice, unique_body

import recurring_payments as rp
from recurring_payments.testing import FakeServer

pytestmark = pytest.mark.attack("money")
KINDS = ["sync", "async"]
LANDING = {"landed": True, "_links": {"self": {"href": "/landing"}}}


@pytest.fixture
def api_server() -> Iterator[FakeServer]:
    with FakeServer() as server:
        server.add_resource("/landing", LANDING)
        yield server


@pytest.fixture
def elsewhere() -> Iterator[FakeServer]:
    with FakeServer() as server:
        yield server


def sent(server: FakeServer, method: str, path: str) -> list[Any]:
    return [r for r in server.requests if r.method == method and r.path == path]


def call(api: Api, method: str, path: str, body: Any) -> Any:
    return api.post(path, body) if method == "POST" else api.patch(path, body)


def redirect_to(server: FakeServer, method: str, path: str, status: int, location: str) -> None:
    server.route(method, path, lambda request: (status, None, {"Location": location}))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("method", ["POST", "PATCH"])
@pytest.mark.parametrize("status", [301, 302, 303])
def test_a_401_after_a_processed_write_replays_only_the_get(
    api_server: FakeServer, kind: str, method: str, status: int
) -> None:
    redirect_to(api_server, method, "/orders", status, "/landing")
    api_server.fail_next(401, path="/landing")  # the token "expired" between the two hops
    api = Api(api_server, kind)
    try:
        body = unique_body()
        assert call(api, method, "/orders", body)["landed"] is True
        assert len(sent(api_server, method, "/orders")) == 1
        assert [r.status for r in sent(api_server, "GET", "/landing")] == [401, 200]
        assert len(api_server.token_requests) == 2  # the first token, then its renewal
        assert_nothing_sent_twice(api_server)
    finally:
        api.close()


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("method", ["POST", "PATCH"])
@pytest.mark.parametrize("status", [301, 302, 303])
def test_a_target_that_keeps_refusing_is_an_authentication_error_of_that_hop(
    api_server: FakeServer, kind: str, method: str, status: int
) -> None:
    redirect_to(api_server, method, "/orders", status, "/landing")
    api_server.fail_next(401, count=5, path="/landing")
    api = Api(api_server, kind)
    try:
        with pytest.raises(rp.AuthenticationError) as caught:
            call(api, method, "/orders", unique_body())
        err = caught.value
        assert (err.method, err.status, err.outcome_unknown) == ("GET", 401, True)
        assert (err.url or "").endswith("/landing")
        assert len(sent(api_server, method, "/orders")) == 1
        assert len(sent(api_server, "GET", "/landing")) == 2  # the hop, replayed once
    finally:
        api.close()


@pytest.mark.parametrize("kind", KINDS)
def test_a_307_through_another_origin_and_back_neither_drops_the_token_nor_replays(
    api_server: FakeServer, elsewhere: FakeServer, kind: str
) -> None:
    back = f"{api_server.base_url}/final"
    redirect_to(api_server, "POST", "/orders", 307, f"{elsewhere.base_url}/bounce")
    # Another origin is not our API: it answers whatever it likes (here, a 307 back).
    elsewhere.respond_next(b"", status=307, headers={"Location": back}, path="/bounce")
    api_server.route("POST", "/final", lambda request: (201, {"created": True}))
    api = Api(api_server, kind)
    try:
        api.root()
        jti = api.client.token.jti
        with pytest.raises(rp.AuthenticationError) as caught:
            api.post("/orders", unique_body())
        # The chain left our origin: the hop back carried no token, and its 401 is not about
        # ours, so the token stays and nothing is sent again through the third party.
        assert (caught.value.url or "").endswith("/final")
        assert api.client.token.jti == jti
        assert len(api_server.token_requests) == 1
        assert len(sent(elsewhere, "POST", "/bounce")) == 1
        assert len(sent(api_server, "POST", "/orders")) == 1
        final = sent(api_server, "POST", "/final")
        assert len(final) == 1 and header(final[0], "authorization") is None
        assert all(header(r, "authorization") is None for r in elsewhere.requests)
    finally:
        api.close()


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("status", [307, 308])
def test_a_307_within_the_origin_resends_as_asked_and_replays_only_that_hop(
    api_server: FakeServer, kind: str, status: int
) -> None:
    redirect_to(api_server, "POST", "/orders", status, "/orders-v2")
    api_server.route("POST", "/orders-v2", lambda request: (201, {"ref": request.json["ref"]}))
    api_server.fail_next(401, path="/orders-v2")
    api = Api(api_server, kind)
    try:
        body = unique_body()
        assert api.post("/orders", body)["ref"] == body["ref"]
        assert len(sent(api_server, "POST", "/orders")) == 1
        moved = sent(api_server, "POST", "/orders-v2")
        assert [r.status for r in moved] == [401, 201]
        assert all((header(r, "authorization") or "").startswith("Bearer ") for r in moved)
        assert_nothing_sent_twice(api_server)
    finally:
        api.close()


@pytest.mark.parametrize("kind", KINDS)
def test_a_303_turns_the_write_into_a_get_without_its_body_or_precondition(
    api_server: FakeServer, kind: str
) -> None:
    redirect_to(api_server, "PATCH", "/orders/1", 303, "/landing")
    api = Api(api_server, kind)
    try:
        api._run(api.client.patch("/orders/1", {"x": 1}, if_match='"v1"'))
        (landing,) = sent(api_server, "GET", "/landing")
        assert landing.body == b""
        assert header(landing, "content-type") is None and header(landing, "if-match") is None
        (patch,) = sent(api_server, "PATCH", "/orders/1")
        assert header(patch, "if-match") == '"v1"'
    finally:
        api.close()


@pytest.mark.parametrize("kind", KINDS)
def test_a_redirect_loop_stops_after_ten_hops_without_resending(
    api_server: FakeServer, kind: str
) -> None:
    redirect_to(api_server, "POST", "/orders", 303, "/loop")
    redirect_to(api_server, "GET", "/loop", 302, "/loop")
    api = Api(api_server, kind)
    try:
        with pytest.raises(rp.TransportError, match="more than 10 redirects") as caught:
            api.post("/orders", unique_body())
        # The POST was processed (303) but the call got no answer: not safe to send again.
        assert caught.value.outcome_unknown is True
        assert len(sent(api_server, "POST", "/orders")) == 1
        assert len(sent(api_server, "GET", "/loop")) == 10
    finally:
        api.close()


@pytest.mark.parametrize("kind", KINDS)
def test_a_get_redirected_to_another_origin_is_not_replayed_on_its_401(
    api_server: FakeServer, elsewhere: FakeServer, kind: str
) -> None:
    redirect_to(api_server, "GET", "/moved", 302, f"{elsewhere.base_url}/private")
    elsewhere.respond_next(b'{"error": "who are you"}', status=401, path="/private")
    api = Api(api_server, kind)
    try:
        with pytest.raises(rp.ClientError) as caught:
            api.get("/moved")
        assert caught.value.status == 401
        assert len(api_server.token_requests) == 1
        assert len(elsewhere.requests) == 1
    finally:
        api.close()
