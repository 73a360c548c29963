"""The request rules of every API endpoint, checked with a plain HTTP client."""

from __future__ import annotations

import pytest
from sandbox_http import Http

from recurring_payments.testing import FakeServer


def error(answer: object, status: int, code: int) -> None:
    assert answer.status == status, answer  # type: ignore[attr-defined]
    body = answer.json  # type: ignore[attr-defined]
    assert set(body) == {"code", "message"}
    assert body["code"] == code
    assert body["message"]


def test_entry_point(rp_server: FakeServer, http: Http) -> None:
    answer = http.api("GET", "/")
    assert answer.status == 200
    assert answer.headers["content-type"] == (
        f'application/hal+json; profile="{rp_server.profile}";charset=UTF-8'
    )
    links = answer.json["_links"]
    assert links["self"] == {"href": rp_server.base_url + "/"}
    assert links["profile"] == {"href": rp_server.profile}
    assert rp_server.profile == rp_server.base_url + "/alps/v1"
    assert rp_server.rel_namespace == rp_server.base_url + "/alps#"


@pytest.mark.parametrize(
    "accept",
    [
        'application/hal+json; profile="{p}"',
        'application/hal+json;profile="{p}"',
        "application/hal+json; profile={p}",
        'application/hal+json; charset=UTF-8; profile="{p}"',
        'application/hal+json ; profile = "{p}" ; charset=utf-8',
        'APPLICATION/HAL+JSON; PROFILE="{p}"',
        'text/html, application/hal+json; profile="{p}"; q=0.9',
        'application/hal+json; profile="https://other/profile {p}"',
    ],
)
def test_accept_variants(rp_server: FakeServer, http: Http, accept: str) -> None:
    answer = http.api("GET", "/", headers={"Accept": accept.format(p=rp_server.profile)})
    assert answer.status == 200


@pytest.mark.parametrize(
    "accept",
    [
        None,
        "",
        "*/*",
        "application/json",
        "application/hal+json",
        'application/hal+json; profile="{p}/v2"',
        'application/hal+json; profile="https://api.example.com/alps/v1"',
        'application/hal+json; profile="{p}"; q=0',
        'application/json; profile="{p}"',
        'application/hal+json; profile="{p}',
    ],
)
def test_unacceptable_is_406(rp_server: FakeServer, http: Http, accept: str | None) -> None:
    value = None if accept is None else accept.format(p=rp_server.profile)
    answer = http.api("GET", "/", headers={"Accept": value})  # type: ignore[dict-item]
    error(answer, 406, 906)


def test_bearer_is_required(http: Http) -> None:
    answer = http.request("GET", "/", headers={"Accept": http.accept()})
    error(answer, 401, 903)
    assert answer.headers["www-authenticate"].startswith("Bearer")


@pytest.mark.parametrize("authorization", ["Bearer nope", "Basic abc", "Bearer", "bearer  "])
def test_bad_bearer_is_401(http: Http, authorization: str) -> None:
    answer = http.request(
        "GET", "/", headers={"Accept": http.accept(), "Authorization": authorization}
    )
    error(answer, 401, 903)
    assert answer.headers["www-authenticate"].startswith("Bearer ")
    assert 'error="invalid' in answer.headers["www-authenticate"]


def test_scheme_is_case_insensitive(http: Http) -> None:
    token = http.token()
    answer = http.request(
        "GET", "/", headers={"Accept": http.accept(), "Authorization": f"bearer {token}"}
    )
    assert answer.status == 200


def test_expiry_by_virtual_clock(rp_server: FakeServer, http: Http) -> None:
    token = http.token()
    rp_server.advance_clock(959)
    assert http.api("GET", "/", token=token).status == 200
    rp_server.advance_clock(1)
    answer = http.api("GET", "/", token=token)
    error(answer, 401, 903)
    assert 'error="invalid_token"' in answer.headers["www-authenticate"]
    assert "expired" in answer.json["message"]


def test_expire_tokens(rp_server: FakeServer, http: Http) -> None:
    token = http.token()
    rp_server.expire_tokens()
    error(http.api("GET", "/", token=token), 401, 903)
    fresh = http.token()
    assert fresh != token
    assert http.api("GET", "/", token=fresh).status == 200


def test_short_ttl() -> None:
    with FakeServer(token_ttl=1.5) as server:
        http = Http(server)
        answer = http.token_answer()
        assert answer.json["expires_in"] == 2
        token = answer.json["access_token"]
        server.advance_clock(1.6)
        assert http.api("GET", "/", token=token).status == 401


@pytest.mark.parametrize("method", ["PUT", "DELETE", "HEAD", "OPTIONS", "TRACE"])
def test_other_methods_are_405(http: Http, method: str) -> None:
    answer = http.api(method, "/")
    assert answer.status == 405
    assert answer.headers["allow"] == "GET, POST, PATCH"
    if method != "HEAD":
        error(answer, 405, 905)


def test_known_path_wrong_method_is_405_with_its_allow(rp_server: FakeServer, http: Http) -> None:
    rp_server.add_resource("/things/1", {"id": 1})
    answer = http.api("POST", "/things/1", {"x": 1})
    error(answer, 405, 905)
    assert answer.headers["allow"] == "GET"
    assert http.api("PATCH", "/", {"x": 1}).headers["allow"] == "GET"


def test_unknown_path_is_404(http: Http) -> None:
    error(http.api("GET", "/nothing/here"), 404, 902)


@pytest.mark.parametrize(
    ("method", "headers"),
    [
        ("GET", {"Accept": "application/hal+json"}),  # no token, no profile
        ("GET", {}),
        ("POST", {"Accept": "application/json", "Content-Type": "text/plain"}),
        ("PATCH", {"Authorization": "Bearer nope", "Content-Type": "application/json"}),
        ("DELETE", {}),
    ],
)
def test_a_path_served_for_no_method_is_404_whatever_the_headers(
    http: Http, method: str, headers: dict[str, str]
) -> None:
    error(http.request(method, "/nothing", b"x", headers), 404, 902)
    # The token request of a client given a base URL with one segment too many.
    error(http.request("POST", "/v1/oauth/token", b"grant_type=client_credentials"), 404, 902)


def test_a_served_path_checks_the_token_before_its_methods(
    rp_server: FakeServer, http: Http
) -> None:
    rp_server.add_resource("/things/1", {"id": 1})
    answer = http.request("POST", "/things/1", headers={"Accept": http.accept()})
    error(answer, 401, 903)


@pytest.fixture
def echo(rp_server: FakeServer) -> FakeServer:
    rp_server.route("POST", "/echo", lambda request: (201, {"got": request.json}))
    rp_server.route("PATCH", "/echo", lambda request: {"got": request.json})
    return rp_server


@pytest.mark.parametrize(
    ("method", "content_type"),
    [
        ("POST", "text/plain"),
        ("POST", "application/merge-patch+json"),
        ("POST", "application/hal+json"),
        ("POST", None),
        ("PATCH", "application/json"),
        ("PATCH", None),
        ("PATCH", "application/merge-patch+jsonx"),
    ],
)
def test_wrong_body_type_is_415(
    echo: FakeServer, http: Http, method: str, content_type: str | None
) -> None:
    answer = http.api(method, "/echo", b'{"a": 1}', content_type=content_type)
    error(answer, 415, 907)


def test_body_types(echo: FakeServer, http: Http) -> None:
    answer = http.api("POST", "/echo", b'{"a": 1}', content_type="application/json; charset=utf-8")
    assert (answer.status, answer.json) == (201, {"got": {"a": 1}})
    answer = http.api("PATCH", "/echo", b'{"a": null}', content_type="application/merge-patch+json")
    assert (answer.status, answer.json) == (200, {"got": {"a": None}})
    # A POST without a body needs no Content-Type.
    answer = http.api("POST", "/echo")
    assert (answer.status, answer.json) == (201, {"got": None})


@pytest.mark.parametrize("body", [b"{", b"nope", b"\xff\xfe", b'{"a": 1} trailing'])
def test_malformed_json_is_400(echo: FakeServer, http: Http, body: bytes) -> None:
    error(http.api("POST", "/echo", body, content_type="application/json"), 400, 908)
    error(http.api("PATCH", "/echo", body, content_type="application/merge-patch+json"), 400, 908)


def test_empty_patch_is_400(echo: FakeServer, http: Http) -> None:
    error(http.api("PATCH", "/echo", b"", content_type="application/merge-patch+json"), 400, 908)


def test_deep_json_does_not_crash(echo: FakeServer, http: Http) -> None:
    body = b"[" * 100_000 + b"]" * 100_000
    error(http.api("POST", "/echo", body, content_type="application/json"), 400, 908)
    assert http.api("GET", "/").status == 200


def test_body_too_large_is_413(echo: FakeServer, http: Http) -> None:
    body = b" " * (8 * 1024 * 1024 + 1)
    error(http.api("POST", "/echo", body, content_type="application/json"), 413, 909)


def test_garbage_does_not_hang_or_crash(rp_server: FakeServer, http: Http) -> None:
    import socket

    host, port = rp_server.base_url.removeprefix("http://").split(":")
    for garbage in [b"\x00\x01\x02 nonsense\r\n\r\n", b"GET / HTTP/1.1\r\nHost: x\r\nBad\r\n\r\n"]:
        with socket.create_connection((host, int(port)), timeout=5) as sock:
            sock.sendall(garbage)
            reply = sock.recv(4096)
            assert reply == b"" or reply.startswith(b"HTTP/1.1 4")
    assert http.api("GET", "/").status == 200
