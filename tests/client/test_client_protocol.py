"""The protocol as the client speaks it: headers, token lifecycle, origin policy
(docs/concepts.md#tokens)."""

from __future__ import annotations

import base64
import json
import platform
import time

import pytest
from conftest import api_requests, header

import recurring_payments as rp
from recurring_payments.testing import FakeServer


def test_token_request_follows_the_spec(server: FakeServer, client: rp.Client) -> None:
    client.root()
    (token_request,) = server.token_requests
    assert token_request.method == "POST"
    assert header(token_request, "accept") == "application/json"
    assert header(token_request, "content-type") == "application/x-www-form-urlencoded"
    creds = server.credentials
    expected = base64.b64encode(f"{creds.app_name}:{creds.app_secret}".encode()).decode()
    assert header(token_request, "authorization") == f"Basic {expected}"
    body = bytes(token_request.body).decode()
    assert sorted(body.split("&")) == ["grant_type=client_credentials", "scope=api"]


def test_api_requests_carry_accept_bearer_and_user_agent(
    server: FakeServer, client: rp.Client
) -> None:
    client.root()
    (get,) = api_requests(server)
    assert header(get, "accept") == f'application/hal+json; profile="{server.profile}"'
    assert (header(get, "authorization") or "").startswith("Bearer ")
    agent = header(get, "user-agent") or ""
    assert agent.startswith(f"recurring-payments/{rp.__version__} ")
    assert f"python/{platform.python_version()}" in agent


def test_admin_credentials_get_scope_api_admin(server: FakeServer) -> None:
    server.add_admin("democreditor", "boss", "pa55")
    creds = rp.AdminCredentials("democreditor", "boss", "pa55")
    with rp.Client(server.base_url, credentials=creds, profile=server.profile) as client:
        token = client.authenticate()
    assert token.scope == "api_admin"
    expected = base64.b64encode(b"democreditor#boss:pa55").decode()
    assert header(server.token_requests[-1], "authorization") == f"Basic {expected}"


def test_one_token_for_many_requests(server: FakeServer, client: rp.Client) -> None:
    for _ in range(20):
        client.get("/")
    assert len(server.token_requests) == 1
    assert len(api_requests(server)) == 20
    token = client.token
    assert token is not None and token.scope == "api" and token.token_type == "bearer"
    assert 0 < token.expires_in <= 960
    assert "Bearer" not in repr(token) and len(repr(token)) < 120


def test_expired_token_is_renewed_with_one_replay(server: FakeServer, client: rp.Client) -> None:
    client.root()
    before = client.token
    server.expire_tokens()
    server.clear_requests()
    resource = client.get("/")
    assert resource.status == 200
    journal = [(r.method, r.path) for r in server.requests]
    assert journal == [("GET", "/"), ("POST", "/oauth/token"), ("GET", "/")]
    assert client.token is not None and client.token != before


def test_token_is_refreshed_before_it_runs_out() -> None:
    # The leeway is capped at half the lifetime: a 2 s token is fetched again after 1 s,
    # before sending, so the server never has to answer 401.
    with FakeServer(token_ttl=2.0) as server, server.client(token_leeway=30.0) as client:
        client.root()
        client.get("/")
        assert len(server.token_requests) == 1
        time.sleep(1.1)
        server.clear_requests()
        client.get("/")
        assert [(r.method, r.path) for r in server.requests] == [
            ("POST", "/oauth/token"),
            ("GET", "/"),
        ]


def test_second_401_raises_authentication_error(server: FakeServer, client: rp.Client) -> None:
    server.route("GET", "/always-401", lambda request: (401, {"code": 401, "message": "no"}))
    with pytest.raises(rp.AuthenticationError) as caught:
        client.get("/always-401")
    assert caught.value.status == 401
    assert len(api_requests(server)) == 2  # the request and its single replay
    assert len(server.token_requests) == 2


def test_refused_credentials(server: FakeServer) -> None:
    creds = rp.AppCredentials(server.credentials.app_name, "wrong-secret-123")
    with rp.Client(server.base_url, credentials=creds, profile=server.profile) as client:
        with pytest.raises(rp.AuthenticationError) as caught:
            client.get("/")
    err = caught.value
    assert err.status in (400, 401)
    assert err.error is not None
    assert "wrong-secret-123" not in str(err) and "wrong-secret-123" not in repr(err)
    assert len(server.token_requests) == 1
    assert api_requests(server) == []


def test_no_bearer_to_another_origin() -> None:
    with FakeServer() as api, FakeServer() as other:
        other.add_resource("/page", {"x": 1, "_links": {"self": {"href": "/page"}}})
        api.add_resource("/pointer", {"_links": {"checkout": {"href": f"{other.base_url}/page"}}})
        with api.client() as client:
            pointer = client.get("/pointer")
            with pytest.raises(rp.ClientError) as caught:
                pointer.checkout()
        assert caught.value.status in (401, 406)  # it has its own profile and tokens
        (seen,) = other.requests
        assert header(seen, "authorization") is None
        assert len(api.token_requests) == 1  # no replay for another origin


def test_plain_http_to_a_remote_host_is_refused(server: FakeServer) -> None:
    with pytest.raises(rp.ConfigurationError):
        rp.Client("http://api.example.com", credentials=server.credentials, profile="p")
    client = rp.Client(
        "http://api.example.com", credentials=server.credentials, profile="p", allow_http=True
    )
    client.close()
    with server.client() as client, pytest.raises(rp.ConfigurationError):
        client.get("http://api.example.com/x")


@pytest.mark.parametrize(
    "kwargs",
    [{"timeout": 0}, {"connect_timeout": -1}, {"retries": -1}, {"max_response_size": 0}],
)
def test_bad_settings_are_configuration_errors(server: FakeServer, kwargs: dict) -> None:
    with pytest.raises(rp.ConfigurationError):
        rp.Client(server.base_url, credentials=server.credentials, profile=server.profile, **kwargs)


def test_bad_base_url(server: FakeServer) -> None:
    for url in ["not a url", "/relative", "ftp://h/"]:
        with pytest.raises(rp.ConfigurationError):
            rp.Client(url, credentials=server.credentials, profile="p")


def test_from_env(server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RP_TEST_BASE_URL", server.base_url)
    monkeypatch.setenv("RP_TEST_PROFILE", server.profile)
    monkeypatch.setenv("RP_TEST_APP_NAME", server.credentials.app_name)
    monkeypatch.setenv("RP_TEST_APP_SECRET", server.credentials.app_secret)
    with rp.Client.from_env(prefix="RP_TEST_") as client:
        assert client.root().status == 200
    monkeypatch.delenv("RP_TEST_APP_SECRET")
    with pytest.raises(rp.ConfigurationError, match="RP_TEST_APP_SECRET"):
        rp.Client.from_env(prefix="RP_TEST_")


def test_closed_client_refuses_requests(server: FakeServer) -> None:
    client = server.client()
    client.close()
    with pytest.raises(RuntimeError):
        client.get("/")


def test_resources_stay_readable_after_close(server: FakeServer) -> None:
    server.add_resource("/things/1", {"id": 1, "_links": {"self": {"href": "/things/1"}}})
    client = server.client()
    thing = client.get("/things/1")
    client.close()
    assert thing.url == server.base_url + "/things/1"
    assert "/things/1" in repr(thing) and "/things/1" in thing._repr_html_()
    assert thing.to_dict()["id"] == 1
    with pytest.raises(RuntimeError, match="closed"):
        thing.fetch()


def test_credentials_are_masked() -> None:
    app = rp.AppCredentials("shop-app", "s3cr3t")
    admin = rp.AdminCredentials("democreditor", "boss", "pa55")
    assert repr(app) == "AppCredentials(app_name='shop-app', app_secret='***')"
    assert "pa55" not in repr(admin) and "pa55" not in str(admin)
    assert app.app_secret == "s3cr3t" and admin.password == "pa55"
    with pytest.raises(AttributeError):
        app.app_name = "x"  # type: ignore[misc]


@pytest.mark.parametrize("framing", ["content-length", "chunked", "one small chunk"])
def test_a_body_arrives_whole_however_it_is_cut(
    server: FakeServer, client: rp.Client, framing: str
) -> None:
    """The transport keeps a body of one chunk as it is and gathers longer ones in one buffer
    sized by Content-Length (or grown, without one): the document read is the one sent."""
    size = 40 if framing == "one small chunk" else 3_000
    doc = {f"field{i:05d}": f"value {i} " * 10 for i in range(size)}
    doc["_links"] = {"self": {"href": "/big"}}
    if framing == "content-length":
        server.add_resource("/big", doc)
    else:
        server.respond_next(json.dumps(doc), path="/big", chunked=framing == "chunked")
    big = client.get("/big")
    assert big.to_dict() == doc and big["field00039"] == "value 39 " * 10
    assert len(big) == size and big.url == server.base_url + "/big"
