"""Edges of the sync client: redirects, content types, logging without secrets."""

from __future__ import annotations

import logging

import pytest
from conftest import api_requests, header

import recurring_payments as rp
from recurring_payments.testing import FakeServer


def test_redirect_to_another_origin_drops_the_bearer(server: FakeServer, client: rp.Client) -> None:
    with FakeServer() as other:
        target = f"{other.base_url}/landing"
        server.route("GET", "/moved", lambda request: (302, None, {"Location": target}))
        with pytest.raises(rp.ClientError):
            client.get("/moved")  # the other server refuses a request without its token
        (seen,) = other.requests
        assert seen.path == "/landing"
        assert header(seen, "authorization") is None
        assert len(server.token_requests) == 1  # a 401 from elsewhere is not replayed


def test_redirect_within_the_origin_keeps_the_bearer(server: FakeServer, client: rp.Client) -> None:
    server.add_resource("/new", {"moved": True, "_links": {"self": {"href": "/new"}}})
    server.route("GET", "/old", lambda request: (301, None, {"Location": "/new"}))
    assert client.get("/old")["moved"] is True
    new = [r for r in api_requests(server) if r.path == "/new"]
    assert new and (header(new[0], "authorization") or "").startswith("Bearer ")


def test_json_that_is_not_an_object(server: FakeServer, client: rp.Client) -> None:
    server.route("GET", "/list", lambda request: [1, 2, 3])
    with pytest.raises(rp.ProtocolError, match="not a JSON object") as caught:
        client.get("/list")
    assert caught.value.method == "GET" and (caught.value.url or "").endswith("/list")


def test_a_content_type_that_is_not_json(server: FakeServer, client: rp.Client) -> None:
    server.route(
        "GET", "/html", lambda request: (200, "<html>hello</html>", {"Content-Type": "text/html"})
    )
    with pytest.raises(rp.ProtocolError, match="text/html") as caught:
        client.get("/html")
    assert "hello" in str(caught.value)  # the start of the body is quoted


@pytest.mark.parametrize("value", ["application/json, text/html", "application/hal+json; x"])
def test_a_content_type_that_is_not_one_media_type_is_quoted(
    server: FakeServer, client: rp.Client, value: str
) -> None:
    # Before: "got no content type", though the header was there.
    server.respond_next(b"{}", headers={"Content-Type": value}, path="/odd")
    with pytest.raises(rp.ProtocolError) as caught:
        client.get("/odd")
    assert f"not a media type: {value!r}".replace("'", '"') in str(caught.value)
    assert caught.value.headers["content-type"] == value


def test_bad_hal_shapes_are_protocol_errors(server: FakeServer, client: rp.Client) -> None:
    bad = {
        "/links-list": {"_links": []},
        "/no-href": {"_links": {"self": {"title": "x"}}},
        "/templated-str": {"_links": {"x": {"href": "/{a}", "templated": "yes"}}},
        "/embedded-scalar": {"_embedded": {"items": [1]}},
    }
    for path, document in bad.items():
        server.route("GET", path, lambda request, d=document: d)
        with pytest.raises(rp.ProtocolError):
            client.get(path)
    assert client.get("/").status == 200


def test_one_debug_line_per_request_and_no_secret(
    server: FakeServer, caplog: pytest.LogCaptureFixture
) -> None:
    secret = server.credentials.app_secret
    with caplog.at_level(logging.DEBUG, logger="recurring_payments"), server.client() as client:
        client.get("/")
        token = client.token
    lines = [r for r in caplog.records if r.name == "recurring_payments"]
    assert [r.getMessage().split()[0] for r in lines] == ["POST", "GET"]
    get = lines[1].getMessage()
    assert get.startswith(f"GET {server.base_url}/ -> 200 in ") and get.endswith("(attempt 1)")
    text = " ".join(r.getMessage() for r in caplog.records)
    assert secret not in text and "Basic" not in text and "Bearer" not in text
    assert token is not None and token.jti not in repr(client)


def test_retries_are_logged_with_their_attempt_number(
    server: FakeServer, caplog: pytest.LogCaptureFixture
) -> None:
    with server.client(retries=2) as client:
        client.root()
        server.fail_next(status=503, count=1, path="/")
        with caplog.at_level(logging.DEBUG, logger="recurring_payments"):
            caplog.clear()  # DEBUG may be on for the whole run (tests/secret_watch.py)
            client.get("/")
    messages = [r.getMessage() for r in caplog.records]
    assert " -> 503 in " in messages[0] and " -> 200 in " in messages[1]
    assert "(attempt 1)" in messages[0] and "(attempt 2)" in messages[1]
