"""The token endpoint, checked with a plain HTTP client."""

from __future__ import annotations

import uuid

import pytest
from sandbox_http import FORM, Http, basic

from recurring_payments.testing import FakeServer


def test_app_token(http: Http) -> None:
    answer = http.token_answer()
    assert answer.status == 200
    assert answer.headers["content-type"] == "application/json;charset=UTF-8"
    assert answer.headers["cache-control"] == "no-store"
    body = answer.json
    assert set(body) == {"access_token", "token_type", "expires_in", "scope", "jti"}
    assert 0 < len(body["access_token"]) <= 500
    assert body["token_type"] == "bearer"
    assert body["expires_in"] == 960
    assert body["scope"] == "api"
    assert str(uuid.UUID(body["jti"])) == body["jti"]


def test_admin_token_and_scope_must_match_the_kind(rp_server: FakeServer, http: Http) -> None:
    rp_server.add_admin("democreditor", "alice", "pa:ss")
    admin = {"user": "democreditor#alice", "password": "pa:ss"}
    answer = http.token_answer("api_admin", **admin)
    assert answer.status == 200
    assert answer.json["scope"] == "api_admin"
    refused = http.token_answer("api", **admin)
    assert refused.status == 400
    assert refused.json["error"] == "invalid_scope"
    refused = http.token_answer("api_admin")
    assert (refused.status, refused.json["error"]) == (400, "invalid_scope")


def test_same_token_while_valid_and_expires_in_reset(rp_server: FakeServer, http: Http) -> None:
    first = http.token_answer().json
    rp_server.advance_clock(500)
    second = http.token_answer().json
    assert second["access_token"] == first["access_token"]
    assert second["jti"] == first["jti"]
    assert second["expires_in"] == 960
    # The reset lifetime counts from the second request: 500 + 900 is still valid.
    rp_server.advance_clock(900)
    assert http.api("GET", "/", token=second["access_token"]).status == 200
    rp_server.advance_clock(61)
    assert http.api("GET", "/", token=second["access_token"]).status == 401
    third = http.token_answer().json
    assert third["access_token"] != first["access_token"]
    assert third["jti"] != first["jti"]


def test_apps_get_their_own_tokens(rp_server: FakeServer, http: Http) -> None:
    rp_server.add_app("other", "secret")
    assert http.token(user="other", password="secret") != http.token()


@pytest.mark.parametrize(
    ("headers", "error"),
    [
        ({"Accept": None}, "invalid_request"),
        ({"Accept": "application/hal+json"}, "invalid_request"),
        ({"Accept": "*/*"}, "invalid_request"),
        ({"Content-Type": None}, "invalid_request"),
        ({"Content-Type": "application/json"}, "invalid_request"),
    ],
)
def test_headers_are_required(http: Http, headers: dict[str, str], error: str) -> None:
    answer = http.token_answer(headers=headers)
    assert answer.status == 400
    assert answer.json == {"error": error, "error_description": answer.json["error_description"]}
    assert answer.json["error_description"]


def test_header_parameters_are_allowed(http: Http) -> None:
    answer = http.token_answer(
        headers={
            "Accept": "text/plain;q=0.5, application/json; charset=UTF-8",
            "Content-Type": f"{FORM}; charset=UTF-8",
        }
    )
    assert answer.status == 200


@pytest.mark.parametrize(
    "authorization",
    [
        None,
        "Bearer abc",
        "Basic !!!not-base64",
        "Basic " + "bm9jb2xvbg==",  # "nocolon"
        basic("sandbox-app", "wrong"),
        basic("nobody", "x"),
        basic("democreditor#alice", "x"),
    ],
)
def test_bad_credentials_are_401(http: Http, authorization: str | None) -> None:
    answer = http.token_answer(headers={"Authorization": authorization})  # type: ignore[dict-item]
    assert answer.status == 401
    assert answer.json["error"] == "invalid_client"
    assert answer.headers["www-authenticate"].startswith("Basic")


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (b"scope=api", "invalid_request"),
        (b"grant_type=password&scope=api", "unsupported_grant_type"),
        (b"grant_type=client_credentials", "invalid_request"),
        (b"grant_type=client_credentials&scope=everything", "invalid_scope"),
        (b"grant_type=client_credentials&scope=api&scope=api", "invalid_request"),
    ],
)
def test_bad_grants_are_400(http: Http, body: bytes, error: str) -> None:
    answer = http.token_answer(body=body)
    assert (answer.status, answer.json["error"]) == (400, error)


def test_form_encoding_is_decoded(http: Http) -> None:
    answer = http.token_answer(body=b"scope=%61pi&grant_type=client%5Fcredentials&extra=1")
    assert answer.status == 200


def test_only_post(http: Http) -> None:
    answer = http.request("GET", "/oauth/token", headers={"Accept": "application/json"})
    assert answer.status == 405
    assert answer.headers["allow"] == "POST"
    assert answer.json["error"] == "invalid_request"


def test_token_requests_journal(rp_server: FakeServer, http: Http) -> None:
    http.token()
    http.api("GET", "/")  # fetches a second token (same one) before the request
    tokens = rp_server.token_requests
    assert [r.path for r in tokens] == ["/oauth/token", "/oauth/token"]
    assert tokens[0].body == b"grant_type=client_credentials&scope=api"
    assert tokens[0].headers["authorization"].startswith("Basic ")
    assert tokens[0].json is None
    assert [r.status for r in rp_server.requests] == [200, 200, 200]
