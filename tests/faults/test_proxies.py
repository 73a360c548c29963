"""Proxies as a setting (docs/guides/tls-and-proxies.md#proxies), sync and async, against real
loopback proxies (tests/raw_http.py): `proxy=` carries every request, token requests included, with
its Basic credentials, which appear nowhere else; `trust_env=False` ignores the environment;
`NO_PROXY` applies to environment proxies only, and `NO_PROXY=*` bypasses them for IP literals too.
A proxy that refuses, hangs or answers 407 gives a typed error and never a second POST."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import pytest
import secret_watch
from fault_kit import Api, assert_nothing_sent_twice, install_routes, unique_body
from raw_http import AuthRequiredProxy, ForwardingProxy, HangingProxy, closed_port

import recurring_payments as rp
from recurring_payments.testing import FakeServer

pytestmark = pytest.mark.attack("secrets")
KINDS = ["sync", "async"]
USER, PASSWORD = "proxy-user", "Proxy-Pa55word-7f3a"
ENVIRONMENT = ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "REQUEST_METHOD"]


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    secret_watch.WATCH.basic(USER, PASSWORD)


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer() as server:
        install_routes(server)
        yield server


@pytest.fixture
def proxy() -> Iterator[ForwardingProxy]:
    with ForwardingProxy() as proxy:
        yield proxy


def with_credentials(url: str) -> str:
    return url.replace("http://", f"http://{USER}:{PASSWORD}@")


def expected_basic() -> str:
    return "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()


def assert_not_shown(*texts: Any) -> None:
    for text in texts:
        assert PASSWORD not in str(text) and expected_basic()[6:] not in str(text)


@pytest.mark.parametrize("kind", KINDS)
def test_every_request_goes_through_the_proxy_with_its_credentials(
    server: FakeServer, proxy: ForwardingProxy, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("DEBUG", logger="recurring_payments")
    api = Api(server, kind, proxy=with_credentials(proxy.url))
    try:
        body = unique_body()
        assert api.post("/orders", body)["reference"] == body["ref"]
        assert api.get("/thing")["ok"] is True
        assert_not_shown(repr(api.client), caplog.text)
    finally:
        api.close()
    targets = [(s.method, s.target) for s in proxy.seen]
    assert targets == [
        ("POST", f"{server.base_url}/oauth/token"),  # the token request too
        ("POST", f"{server.base_url}/orders"),
        ("GET", f"{server.base_url}/thing"),
    ]
    assert all(s.headers.get("proxy-authorization") == expected_basic() for s in proxy.seen)
    # The proxy's credentials are the proxy's: the API never sees them.
    assert all("proxy-authorization" not in {n.lower() for n in r.headers} for r in server.requests)
    assert_nothing_sent_twice(server)


def test_https_goes_through_a_connect_tunnel_with_the_credentials(
    proxy: ForwardingProxy,
) -> None:
    with FakeServer(tls=True) as tls_server:
        tls_server.add_resource("/thing", {"ok": True})
        with tls_server.client(proxy=with_credentials(proxy.url)) as client:
            assert client.get("/thing")["ok"] is True
    assert proxy.seen and all(s.method == "CONNECT" for s in proxy.seen)
    assert proxy.seen[0].headers.get("proxy-authorization") == expected_basic()


@pytest.mark.parametrize("kind", KINDS)
def test_the_setting_ignores_no_proxy_and_trust_env(
    server: FakeServer, proxy: ForwardingProxy, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    api = Api(server, kind, proxy=proxy.url, trust_env=False)
    try:
        assert api.get("/thing")["ok"] is True
    finally:
        api.close()
    assert [s.method for s in proxy.seen] == ["POST", "GET"]


@pytest.mark.parametrize("kind", KINDS)
def test_environment_proxies_are_used_unless_trust_env_is_false(
    server: FakeServer, proxy: ForwardingProxy, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    monkeypatch.setenv("ALL_PROXY", proxy.url)
    api = Api(server, kind, trust_env=False)
    try:
        assert api.get("/thing")["ok"] is True
    finally:
        api.close()
    assert proxy.seen == []
    api = Api(server, kind)  # trust_env=True: the environment's proxy
    try:
        assert api.get("/thing")["ok"] is True
    finally:
        api.close()
    assert [s.method for s in proxy.seen] == ["POST", "GET"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("no_proxy", ["*", " * ", "example.com, *"])
def test_no_proxy_star_bypasses_environment_proxies_for_ip_literals(
    server: FakeServer,
    proxy: ForwardingProxy,
    kind: str,
    no_proxy: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The token request's Basic credentials would cross the proxy in clear otherwise.
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    monkeypatch.setenv("NO_PROXY", no_proxy)
    api = Api(server, kind)
    try:
        assert api.get("/thing")["ok"] is True
    finally:
        api.close()
    assert proxy.seen == []


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    "value",
    [f"socks5://{USER}:{PASSWORD}@127.0.0.1:1", "socks5h://127.0.0.1:1", "not a url"],
    ids=["socks5-with-password", "socks5h", "not-a-url"],
)
def test_an_environment_proxy_that_is_not_http_is_skipped(
    server: FakeServer, kind: str, value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Skipped as if unset (docs/guides/tls-and-proxies.md): the requests go directly, and the
    # variable's password appears nowhere.
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.setenv(name, value)
    api = Api(server, kind)
    try:
        assert api.get("/thing")["ok"] is True
        assert_not_shown(repr(api.client))
    finally:
        api.close()
    assert [entry.method for entry in server.requests] == ["POST", "GET"]


def test_clients_with_other_proxies_do_not_share_connections(server: FakeServer) -> None:
    with ForwardingProxy() as first, ForwardingProxy() as second:
        with server.client(proxy=first.url) as a, server.client(proxy=second.url) as b:
            assert a.get("/thing")["ok"] and b.get("/thing")["ok"]
            assert a.get("/thing")["ok"] and b.get("/thing")["ok"]
        with server.client(trust_env=False) as direct:
            assert direct.get("/thing")["ok"]
    assert [s.method for s in first.seen] == ["POST", "GET", "GET"]
    assert [s.method for s in second.seen] == ["POST", "GET", "GET"]


@pytest.mark.parametrize("kind", KINDS)
def test_a_proxy_that_refuses_connections_is_a_transport_error(
    server: FakeServer, kind: str
) -> None:
    api = Api(server, kind, proxy=with_credentials(f"http://127.0.0.1:{closed_port()}"))
    try:
        with pytest.raises(rp.TransportError) as caught:
            api.post("/orders", unique_body())
    finally:
        api.close()
    err = caught.value
    assert type(err) is rp.TransportError and err.outcome_unknown is False
    assert_not_shown(err, repr(err), err.url)
    assert server.requests == []


@pytest.mark.parametrize("kind", KINDS)
def test_a_proxy_that_hangs_is_a_timeout_and_the_post_is_not_sent_again(
    server: FakeServer, kind: str
) -> None:
    with HangingProxy() as hanging:
        api = Api(server, kind, proxy=with_credentials(hanging.url), timeout=0.5, retries=2)
        try:
            with pytest.raises(rp.TimeoutError) as caught:
                api.post("/orders", unique_body())
        finally:
            api.close()
    assert_not_shown(caught.value, repr(caught.value))
    # The token request hung at the proxy: a POST that may have been written is never resent.
    assert [s.method for s in hanging.seen] == ["POST"]
    assert caught.value.outcome_unknown is False  # a token request, not the caller's POST
    assert server.requests == []


@pytest.mark.parametrize("kind", KINDS)
def test_a_proxy_answering_407_is_a_client_error_sent_once(server: FakeServer, kind: str) -> None:
    with AuthRequiredProxy() as refusing:
        api = Api(server, kind, proxy=refusing.url)
        try:
            with pytest.raises(rp.ClientError) as caught:
                api.post("/orders", unique_body())
        finally:
            api.close()
    assert caught.value.status == 407
    assert [s.method for s in refusing.seen] == ["POST"]  # the token request, once
    assert server.requests == []


def test_a_407_to_a_connect_is_a_transport_error(server: FakeServer) -> None:
    with AuthRequiredProxy() as refusing, FakeServer(tls=True) as tls_server:
        with tls_server.client(proxy=with_credentials(refusing.url), retries=0) as client:
            with pytest.raises(rp.TransportError) as caught:
                client.get("/thing")
    assert_not_shown(caught.value)
    assert [s.method for s in refusing.seen] == ["CONNECT"]


@pytest.mark.parametrize(
    "bad",
    [
        f"socks5://{USER}:{PASSWORD}@127.0.0.1:1080",
        f"http://{USER}:{PASSWORD}@127.0.0.1:3128/path",
        f"http://{USER}:{PASSWORD}@:3128",
        f"{USER}:{PASSWORD}@127.0.0.1:3128",
        f"http://{USER}:{PASSWORD}@127.0.0.1:3128\r\n",
        b"http://127.0.0.1:3128",
        3128,
    ],
)
def test_a_malformed_proxy_is_a_configuration_error_quoting_no_password(
    server: FakeServer, bad: Any
) -> None:
    with pytest.raises(rp.ConfigurationError) as caught:
        server.client(proxy=bad)
    assert "proxy" in str(caught.value)
    assert_not_shown(caught.value, repr(caught.value))


def test_trust_env_must_be_a_bool(server: FakeServer) -> None:
    with pytest.raises(rp.ConfigurationError, match="trust_env"):
        server.client(trust_env="false")


def test_from_env_reads_the_proxy(
    server: FakeServer, proxy: ForwardingProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in {
        "BASE_URL": server.base_url,
        "PROFILE": server.profile,
        "APP_NAME": server.credentials.app_name,
        "APP_SECRET": server.credentials.app_secret,
        "PROXY": with_credentials(proxy.url),
    }.items():
        monkeypatch.setenv("RPX_" + name, value)
    with rp.Client.from_env(prefix="RPX_") as client:
        assert client.get("/thing")["ok"] is True
        assert_not_shown(repr(client))
    assert [s.method for s in proxy.seen] == ["POST", "GET"]
    assert proxy.seen[0].headers.get("proxy-authorization") == expected_basic()
