"""What the wire does with hostile or old-fashioned bytes, at the socket level (a raw loopback
server writes every byte, tests/raw_http.py), sync and async:
- userinfo in a server's href or `Location` is never sent as Basic credentials, nor shown;
- `Content-Encoding: GZIP` is decoded (content codings ignore case, RFC 9110 §8.4.1);
- an obs-folded response header is unfolded (RFC 9112 §5.2), not a transport error;
- a POST/PATCH answered 301/302/303 was processed: any later failure of the call has
  `outcome_unknown == True` (docs/guarantees.md#outcome), a 401 that stays and a refused `Location`
  included."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import secret_watch
from fault_kit import Api
from raw_http import RawServer, Seen, response

import recurring_payments as rp
from recurring_payments.testing import FakeServer

pytestmark = pytest.mark.attack("money")
KINDS = ["sync", "async"]
PASSWORD = "Href-Pa55word-91c2"
HAL = [("Content-Type", "application/hal+json")]
TOKEN = {"access_token": "raw-token-0123456789", "token_type": "bearer", "expires_in": 960}


def api_answer(route: Callable[[Seen], bytes]) -> Callable[[Seen], bytes]:
    """A raw API: token requests get a token, the rest `route`."""

    def answer(seen: Seen) -> bytes:
        if seen.path == "/oauth/token":
            body = json.dumps({**TOKEN, "scope": "api", "jti": "j-1"}).encode()
            return response(200, body, [("Content-Type", "application/json")])
        return route(seen)

    return answer


def raw_client(raw: RawServer, kind: str, **settings: Any) -> Any:
    cls = rp.Client if kind == "sync" else rp.AsyncClient
    return cls(
        raw.url,
        credentials=rp.AppCredentials("raw-app", "raw-secret-0123456789"),
        profile="https://api.example.com/alps/v1",
        retries=0,
        **settings,
    )


class RawApi(Api):
    def __init__(self, raw: RawServer, kind: str, **settings: Any) -> None:
        self.kind = kind
        self.client = raw_client(raw, kind, **settings)


@pytest.fixture(autouse=True)
def watch_password() -> None:
    secret_watch.WATCH.secret(PASSWORD)


@pytest.fixture
def elsewhere() -> Iterator[RawServer]:
    doc = json.dumps({"there": True}).encode()
    with RawServer(lambda seen: response(404, doc, HAL)) as raw:
        yield raw


@pytest.mark.parametrize("kind", KINDS)
def test_userinfo_in_a_link_is_neither_sent_nor_shown(
    elsewhere: RawServer, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("DEBUG", logger="recurring_payments")
    href = elsewhere.url.replace("http://", f"http://u:{PASSWORD}@") + "/checkout"
    with FakeServer() as server:
        server.add_resource("/order", {"_links": {"pay": {"href": href}}})
        api = Api(server, kind)
        try:
            order = api.get("/order")
            with pytest.raises(rp.NotFoundError) as caught:
                api._run(order.links["pay"]())
        finally:
            api.close()
    (seen,) = elsewhere.seen
    assert seen.path == "/checkout"
    assert "authorization" not in seen.headers  # no Basic from the server's URL
    for text in (str(caught.value), repr(caught.value), caught.value.url, caplog.text):
        assert PASSWORD not in str(text)


@pytest.mark.parametrize("kind", KINDS)
def test_userinfo_in_a_location_is_neither_sent_nor_shown(
    elsewhere: RawServer, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("DEBUG", logger="recurring_payments")
    target = elsewhere.url.replace("http://", f"http://u:{PASSWORD}@") + "/moved-here"
    with FakeServer() as server:
        server.route("GET", "/moved", lambda request: (302, None, {"Location": target}))
        api = Api(server, kind)
        try:
            with pytest.raises(rp.NotFoundError) as caught:
                api.get("/moved")
        finally:
            api.close()
    (seen,) = elsewhere.seen
    assert seen.path == "/moved-here" and "authorization" not in seen.headers
    for text in (str(caught.value), repr(caught.value), caught.value.url, caplog.text):
        assert PASSWORD not in str(text)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("coding", ["GZIP", "Gzip", "x-gzip", " gzip"])
def test_a_gzip_body_is_decoded_whatever_the_spelling(kind: str, coding: str) -> None:
    doc = {"compressed": True, "_links": {"self": {"href": "/doc"}}}
    body = gzip.compress(json.dumps(doc).encode())
    answer = api_answer(lambda seen: response(200, body, [*HAL, ("Content-Encoding", coding)]))
    with RawServer(answer) as raw:
        api = RawApi(raw, kind)
        try:
            res = api.get("/doc")
        finally:
            api.close()
    assert res["compressed"] is True
    assert "content-encoding" not in res.headers


@pytest.mark.parametrize("kind", KINDS)
def test_a_corrupt_gzip_body_is_a_transport_error(kind: str) -> None:
    answer = api_answer(
        lambda seen: response(200, b"not gzip", [*HAL, ("Content-Encoding", "GZIP")])
    )
    with RawServer(answer) as raw:
        api = RawApi(raw, kind)
        try:
            with pytest.raises(rp.TransportError, match="gzip"):
                api.get("/doc")
        finally:
            api.close()


@pytest.mark.parametrize("kind", KINDS)
def test_a_gzip_bomb_stops_at_max_response_size(kind: str) -> None:
    body = gzip.compress(b" " * (4 << 20))
    answer = api_answer(lambda seen: response(200, body, [*HAL, ("Content-Encoding", "GZIP")]))
    with RawServer(answer) as raw:
        api = RawApi(raw, kind, max_response_size=1 << 20)
        try:
            with pytest.raises(rp.ProtocolError, match="max_response_size"):
                api.get("/doc")
        finally:
            api.close()


@pytest.mark.parametrize("kind", KINDS)
def test_an_obs_folded_header_is_unfolded(kind: str) -> None:
    body = json.dumps({"ok": True}).encode()
    folded = (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/hal+json\r\n"
        b"X-Folded: first part\r\n  second part\r\n"
        b"Content-Length: " + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n" + body
    )
    with RawServer(api_answer(lambda seen: folded)) as raw:
        api = RawApi(raw, kind)
        try:
            res = api.get("/doc")
        finally:
            api.close()
    assert res["ok"] is True
    assert res.headers["x-folded"].split() == ["first", "part", "second", "part"]


def redirected_write(status: int, location: str, then: Callable[[Seen], bytes]) -> RawServer:
    def route(seen: Seen) -> bytes:
        if seen.method in ("POST", "PATCH"):
            return response(status, b"", [("Location", location)])
        return then(seen)

    return RawServer(api_answer(route))


def write(api: Api, method: str) -> Any:
    body = {"ref": "r-1"}
    return api.post("/orders", body) if method == "POST" else api.patch("/orders", body)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("method", ["POST", "PATCH"])
@pytest.mark.parametrize("status", [301, 302, 303])
def test_a_401_that_stays_after_a_processed_write_has_an_unknown_outcome(
    kind: str, method: str, status: int
) -> None:
    refused = json.dumps({"code": 401, "message": "expired"}).encode()
    with redirected_write(status, "/landing", lambda seen: response(401, refused, HAL)) as raw:
        api = RawApi(raw, kind)
        try:
            with pytest.raises(rp.AuthenticationError) as caught:
                write(api, method)
        finally:
            api.close()
    assert (caught.value.method, caught.value.status) == ("GET", 401)
    assert caught.value.outcome_unknown is True
    writes = [s for s in raw.seen if s.method == method and s.path == "/orders"]
    assert len(writes) == 1  # processed once, never sent again


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("method", ["POST", "PATCH"])
def test_a_refused_location_after_a_processed_write_has_an_unknown_outcome(
    kind: str, method: str
) -> None:
    with redirected_write(303, "http://api.example.com/landing", lambda s: b"") as raw:
        api = RawApi(raw, kind)
        try:
            with pytest.raises(rp.ConfigurationError, match="plain http") as caught:
                write(api, method)
        finally:
            api.close()
    assert caught.value.outcome_unknown is True
    assert [s.method for s in raw.seen if s.path != "/oauth/token"] == [method]


@pytest.mark.parametrize("kind", KINDS)
def test_a_refused_location_after_a_get_stays_a_known_outcome(kind: str) -> None:
    def route(seen: Seen) -> bytes:
        return response(302, b"", [("Location", "http://api.example.com/landing")])

    with RawServer(api_answer(route)) as raw:
        api = RawApi(raw, kind)
        try:
            with pytest.raises(rp.ConfigurationError, match="plain http") as caught:
                api.get("/moved")
        finally:
            api.close()
    assert caught.value.outcome_unknown is False


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    ("answer", "error"),
    [
        (response(200, b"<html>moved</html>", [("Content-Type", "text/html")]), rp.ProtocolError),
        (response(200, b'{"cut', HAL), rp.ProtocolError),
        (response(500, b"", HAL), rp.ServerError),
    ],
    ids=["html", "cut-json", "500"],
)
def test_a_bad_answer_after_a_processed_write_has_an_unknown_outcome(
    kind: str, answer: bytes, error: type[rp.Error]
) -> None:
    with redirected_write(303, "/landing", lambda seen: answer) as raw:
        api = RawApi(raw, kind)
        try:
            with pytest.raises(error) as caught:
                write(api, "POST")
        finally:
            api.close()
    assert type(caught.value) is error and caught.value.outcome_unknown is True
