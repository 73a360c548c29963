"""The sandbox's strong ETags and If-Match on PATCH (docs/guides/errors.md#conditional-updates),
checked with plain HTTP, independently of our client."""

from __future__ import annotations

import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from sandbox_http import Answer, Http

from recurring_payments.testing import FakeServer, SandboxRequest

STRONG = re.compile(r'^"[\x21\x23-\x7e]+"$')


@pytest.fixture
def demo() -> Iterator[FakeServer]:
    with FakeServer(demo=True) as server:
        yield server


@pytest.fixture
def dhttp(demo: FakeServer) -> Http:
    return Http(demo)


def etag(answer: Answer) -> str:
    tag = answer.headers.get("etag")
    assert tag is not None, f"no ETag on {answer.status}: {answer.headers}"
    assert STRONG.match(tag), tag  # quoted, not W/
    return tag


def error(answer: Answer, status: int, code: int) -> None:
    assert answer.status == status, answer
    assert answer.json["code"] == code and answer.json["message"], answer.json
    assert "etag" not in answer.headers


class Orders:
    """A demo order seen through plain HTTP."""

    def __init__(self, server: FakeServer, http: Http):
        self.server = server
        self.http = http
        self.token = http.token()

    def create(self, reference: str, headers: dict[str, str] | None = None) -> Answer:
        return self.http.api(
            "POST", "/orders", {"reference": reference}, token=self.token, headers=headers
        )

    def path(self, created: Answer) -> str:
        return created.headers["location"].removeprefix(self.server.base_url)

    def get(self, path: str, headers: dict[str, str] | None = None) -> Answer:
        return self.http.api("GET", path, token=self.token, headers=headers)

    def patch(self, path: str, body: dict[str, Any], if_match: str | None) -> Answer:
        headers = {"If-Match": if_match} if if_match is not None else None
        return self.http.api("PATCH", path, body, token=self.token, headers=headers)


@pytest.fixture
def orders(demo: FakeServer, dhttp: Http) -> Orders:
    return Orders(demo, dhttp)


# -- ETags on every resource served --------------------------------------------------------


def test_static_resources_and_the_entry_point_carry_stable_strong_etags(
    rp_server: FakeServer, http: Http
) -> None:
    rp_server.add_resource("/things/1", {"id": 1, "_links": {"self": {"href": "/things/1"}}})
    token = http.token()
    first = http.api("GET", "/things/1", token=token)
    assert first.status == 200
    assert etag(first) == etag(http.api("GET", "/things/1", token=token))
    root = http.api("GET", "/", token=token)
    assert etag(root) == etag(http.api("GET", "/", token=token)) != etag(first)

    # Equal representations, equal tags; a changed representation, a new tag.
    rp_server.add_resource("/things/copy", {"id": 1, "_links": {"self": {"href": "/things/1"}}})
    assert etag(http.api("GET", "/things/copy", token=token)) == etag(first)
    rp_server.add_resource("/things/1", {"id": 2, "_links": {"self": {"href": "/things/1"}}})
    assert etag(http.api("GET", "/things/1", token=token)) != etag(first)
    rp_server.add_link("get-thing", "/things/{id}", templated=True)
    assert etag(http.api("GET", "/", token=token)) != etag(root)


def test_route_answers_carry_etags_unless_the_handler_sets_one(
    rp_server: FakeServer, http: Http
) -> None:
    rp_server.route("POST", "/things", lambda request: (201, {"id": 7}, {"Location": "/things/7"}))
    rp_server.route("GET", "/things/{id}", lambda request: {"id": int(request.path_params["id"])})
    rp_server.route("GET", "/own", lambda request: (200, {"v": 1}, {"ETag": '"v1"'}))
    rp_server.route("GET", "/gone", lambda request: (404, {"code": 1, "message": "no"}))
    rp_server.route("POST", "/nothing", lambda request: None)
    token = http.token()
    created = http.api("POST", "/things", {}, token=token)
    assert created.status == 201
    assert etag(created) == etag(http.api("GET", "/things/7", token=token))
    assert etag(http.api("GET", "/things/8", token=token)) != etag(created)
    assert http.api("GET", "/own", token=token).headers["etag"] == '"v1"'
    assert "etag" not in http.api("GET", "/gone", token=token).headers
    nothing = http.api("POST", "/nothing", token=token)
    assert nothing.status == 204 and "etag" not in nothing.headers


def test_errors_of_the_sandbox_have_no_etag(http: Http) -> None:
    error(http.api("GET", "/nowhere"), 404, 902)
    error(http.api("GET", "/", token="not-a-token"), 401, 903)


def test_demo_resources_carry_etags(orders: Orders) -> None:
    creditor = orders.get("/creditors/democreditor")
    assert creditor.status == 200 and etag(creditor)
    page = orders.get("/mandates?creditorReference=democreditor&size=5")
    assert page.status == 200 and etag(page) != etag(creditor)
    assert etag(orders.get("/mandates?creditorReference=democreditor&size=5")) == etag(page)


def test_an_order_keeps_its_etag_until_patched(orders: Orders) -> None:
    created = orders.create("o-1")
    assert created.status == 201
    path = orders.path(created)
    # The 201 describes the order: a GET, by id or by reference, serves the same bytes.
    assert etag(orders.get(path)) == etag(created)
    assert etag(orders.get("/orders?reference=o-1")) == etag(created)

    patched = orders.patch(path, {"started": True}, None)
    assert patched.status == 200 and patched.json["started"] is True
    assert etag(patched) != etag(created)
    assert etag(orders.get(path)) == etag(patched)
    # A patch that changes nothing keeps the representation, hence the tag.
    assert etag(orders.patch(path, {"started": True}, None)) == etag(patched)


# -- If-Match on PATCH ---------------------------------------------------------------------


def test_a_stale_etag_is_412_911_and_changes_nothing(orders: Orders) -> None:
    created = orders.create("o-1")
    path = orders.path(created)
    current = orders.patch(path, {"started": True}, etag(created))
    assert current.status == 200

    stale = orders.patch(path, {"started": False, "note": "lost update"}, etag(created))
    error(stale, 412, 911)
    assert "precondition failed" in stale.json["message"]
    again = orders.get(path)
    assert again.body == current.body and etag(again) == etag(current)
    assert again.json["started"] is True and "note" not in again.json


def test_the_current_etag_applies_the_patch(orders: Orders) -> None:
    path = orders.path(orders.create("o-1"))
    tag = etag(orders.get(path))
    patched = orders.patch(path, {"note": "first"}, tag)
    assert patched.status == 200 and patched.json["note"] == "first"
    new_tag = etag(patched)
    assert new_tag != tag and etag(orders.get(path)) == new_tag
    assert orders.patch(path, {"note": "second"}, new_tag).json["note"] == "second"


def test_star_matches_an_existing_order_only(orders: Orders) -> None:
    path = orders.path(orders.create("o-1"))
    assert orders.patch(path, {"note": "x"}, "*").status == 200
    error(orders.patch("/orders/no-such-order", {"note": "x"}, "*"), 412, 911)
    error(orders.patch("/orders/no-such-order", {"note": "x"}, '"abc"'), 412, 911)
    # Without If-Match a missing order is still a 404.
    error(orders.patch("/orders/no-such-order", {"note": "x"}, None), 404, 902)


def test_a_list_matches_when_any_tag_does(orders: Orders) -> None:
    path = orders.path(orders.create("o-1"))
    tag = etag(orders.get(path))
    error(orders.patch(path, {"note": "x"}, '"a", "b,c"'), 412, 911)
    patched = orders.patch(path, {"note": "x"}, f'"a", {tag}, "b"')
    assert patched.status == 200 and patched.json["note"] == "x"


def test_a_weak_tag_never_matches(orders: Orders) -> None:
    path = orders.path(orders.create("o-1"))
    tag = etag(orders.get(path))
    error(orders.patch(path, {"note": "x"}, f"W/{tag}"), 412, 911)
    error(orders.patch(path, {"note": "x"}, f"W/{tag}, W/{tag}"), 412, 911)
    assert "note" not in orders.get(path).json


@pytest.mark.parametrize("value", ["", "abc", '"unterminated', '"a" "b"', '*, "a"'])
def test_a_malformed_if_match_matches_nothing(orders: Orders, value: str) -> None:
    path = orders.path(orders.create("o-1"))
    before = orders.get(path)
    error(orders.patch(path, {"note": "x"}, value), 412, 911)
    assert orders.get(path).body == before.body


def test_one_of_concurrent_patches_with_the_same_etag_wins(orders: Orders) -> None:
    path = orders.path(orders.create("o-1"))
    tag = etag(orders.get(path))
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda n: orders.patch(path, {"n": n}, tag), range(8)))
    statuses = sorted(a.status for a in answers)
    assert statuses == [200] + [412] * 7
    (winner,) = (a for a in answers if a.status == 200)
    assert orders.get(path).json["n"] == winner.json["n"]


def test_get_and_post_ignore_if_match(orders: Orders) -> None:
    created = orders.create("o-1", headers={"If-Match": '"no-such-tag"'})
    assert created.status == 201
    got = orders.get(orders.path(created), headers={"If-Match": '"no-such-tag"'})
    assert got.status == 200 and etag(got) == etag(created)


def test_route_handlers_see_if_match_and_answer_what_they_like(
    rp_server: FakeServer, http: Http
) -> None:
    seen: list[str | None] = []

    def patch_thing(request: SandboxRequest) -> Any:
        seen.append(request.headers.get("if-match"))
        if request.headers.get("if-match") not in (None, '"v1"'):
            return 412, {"code": 1, "message": "stale"}
        return {"id": 1, **request.json}

    rp_server.route("PATCH", "/things/1", patch_thing)
    token = http.token()
    assert http.api("PATCH", "/things/1", {"a": 1}, token=token).status == 200
    stale = http.api("PATCH", "/things/1", {"a": 2}, token=token, headers={"If-Match": '"v0"'})
    assert stale.status == 412 and stale.json["code"] == 1
    # The sandbox does not judge a route's If-Match: the handler does.
    unjudged = http.api("PATCH", "/things/1", {"a": 3}, token=token, headers={"If-Match": '"v1"'})
    assert unjudged.status == 200 and etag(unjudged)
    assert seen == [None, '"v0"', '"v1"']


# -- faults the client's tests rely on -----------------------------------------------------


def test_fail_next_429_with_retry_after(http: Http) -> None:
    token = http.token()
    http.server.fail_next(429, headers={"Retry-After": "1"})
    answer = http.api("GET", "/", token=token)
    error(answer, 429, 999)
    assert answer.headers["retry-after"] == "1"
    assert http.api("GET", "/", token=token).status == 200


def test_fail_next_412(http: Http) -> None:
    http.server.fail_next(412, path="/things/1")
    error(http.api("PATCH", "/things/1", {"a": 1}), 412, 999)


@pytest.mark.parametrize("method", ["POST", "PATCH"])
def test_respond_next_answers_a_write_with_a_redirect(
    demo: FakeServer, orders: Orders, method: str
) -> None:
    path = "/orders" if method == "POST" else orders.path(orders.create("o-0"))
    demo.clear_requests()
    demo.respond_next(b"{}", status=302, headers={"Location": "/x"}, path=demo.base_url + path)
    answer = orders.http.api(method, path, {"note": "n"}, token=orders.token)
    assert answer.status == 302 and answer.headers["location"] == "/x"
    assert "etag" not in answer.headers
    # Answered by the fault, not processed: no order was created or patched.
    assert [(r.method, r.path, r.status) for r in demo.requests] == [(method, path, 302)]
    if method == "PATCH":
        assert "note" not in orders.get(path).json
    else:
        page = orders.get("/orders?creditorReference=democreditor")
        assert page.json["_embedded"]["orders"] == []


def test_a_zero_token_ttl_announces_expires_in_0() -> None:
    with FakeServer(token_ttl=0) as server:
        http = Http(server)
        answer = http.token_answer()
        assert answer.status == 200 and answer.json["expires_in"] == 0
        token = answer.json["access_token"]
        # Taken by the API (the requests that waited for it may use it) until expired by hand;
        # asking again while it is taken gives the same token.
        assert http.api("GET", "/", token=token).status == 200
        server.advance_clock(3600)
        assert http.api("GET", "/", token=token).status == 200
        assert http.token() == token
        server.expire_tokens()
        error(http.api("GET", "/", token=token), 401, 903)
        assert http.token() != token
