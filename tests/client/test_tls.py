"""TLS against the sandbox in HTTPS mode (a CA made up at start): certificate checking by each
`verify` setting, `SSL_CERT_FILE`, and no plaintext fallback or downgrade."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
import serve_process
from conftest import api_requests, header

import recurring_payments as rp
from recurring_payments.testing import FakeServer

DOC = {"_links": {"self": {"href": "/things/1"}}, "id": 1, "amount": 12.5}


@pytest.fixture
def tls_server() -> Iterator[FakeServer]:
    with FakeServer(tls=True) as server:
        server.add_resource("/things/1", DOC)
        yield server


def assert_no_secret(text: str, server: FakeServer) -> None:
    assert server.credentials.app_secret not in text
    assert "Basic " not in text and "Bearer " not in text


def test_the_sandbox_serves_https_with_its_own_ca(tls_server: FakeServer) -> None:
    assert tls_server.base_url.startswith("https://127.0.0.1:")
    ca = Path(tls_server.ca_path)
    assert ca.read_text().startswith("-----BEGIN CERTIFICATE-----")
    tls_server.stop()
    assert not ca.exists()  # removed on stop
    with pytest.raises(RuntimeError):
        _ = tls_server.ca_path
    with FakeServer() as plain, pytest.raises(RuntimeError, match="tls=True"):
        _ = plain.ca_path


def test_verify_true_refuses_a_certificate_from_an_unknown_ca(tls_server: FakeServer) -> None:
    with tls_server.client(verify=True) as client, pytest.raises(rp.TransportError) as caught:
        client.get("/things/1")
    message = str(caught.value)
    assert tls_server.base_url in message
    assert "certificate" in message.lower()
    assert_no_secret(message, tls_server)
    # Nothing reached the server's HTTP layer: the handshake failed first.
    assert tls_server.requests == []


def test_verify_with_the_ca_path_accepts_it(tls_server: FakeServer) -> None:
    with tls_server.client(verify=tls_server.ca_path) as client:
        assert client.get("/things/1").to_dict() == DOC
        assert client.get("/things/1")["amount"] == 12.5
    assert len(tls_server.token_requests) == 1
    (first, second) = api_requests(tls_server)
    assert header(first, "authorization") == header(second, "authorization")
    assert (header(first, "authorization") or "").startswith("Bearer ")


def test_verify_false_accepts_it(tls_server: FakeServer) -> None:
    with tls_server.client(verify=False) as client:
        assert client.get("/things/1")["id"] == 1


def test_a_ca_bundle_of_another_ca_is_refused(tls_server: FakeServer) -> None:
    with FakeServer(tls=True) as other, tls_server.client(verify=other.ca_path) as client:
        with pytest.raises(rp.TransportError):
            client.get("/things/1")


CHILD = """
import os, sys
import recurring_payments as rp
credentials = rp.AppCredentials(os.environ["RP_APP"], os.environ["RP_SECRET"])
with rp.Client(sys.argv[1], credentials=credentials, profile=sys.argv[2]) as client:
    try:
        print(client.get("/things/1")["id"])
    except rp.TransportError as exc:
        print("TransportError", exc)
"""


def run_child(server: FakeServer, ssl_cert_file: str | None) -> str:
    """Run CHILD with verify=True (the default) in a fresh process: the system trust store is
    read at the process's first certificate check."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SSL_CERT_")}
    env["RP_APP"] = server.credentials.app_name
    env["RP_SECRET"] = server.credentials.app_secret
    if ssl_cert_file is not None:
        env["SSL_CERT_FILE"] = ssl_cert_file
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(CHILD), server.base_url, server.profile],
        env=env,
        capture_output=True,
        text=True,
        timeout=50,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_ssl_cert_file_is_honoured_with_verify_true(tls_server: FakeServer) -> None:
    assert run_child(tls_server, tls_server.ca_path) == "1"
    refused = run_child(tls_server, None)
    assert refused.startswith("TransportError") and tls_server.base_url in refused


def test_the_system_roots_are_read_only_when_a_certificate_is_checked(
    tls_server: FakeServer,
) -> None:
    # With no system roots at all (SSL_CERT_FILE naming no file), a client of plain http
    # still builds and works: the roots are read at the first handshake, which then fails.
    with FakeServer() as plain:
        plain.add_resource("/things/1", DOC)
        assert run_child(plain, "/nonexistent/ca.pem") == "1"
    refused = run_child(tls_server, "/nonexistent/ca.pem")
    assert refused.startswith("TransportError") and tls_server.base_url in refused
    assert tls_server.requests == []


def test_https_to_a_plain_http_port_fails_and_never_falls_back(server: FakeServer) -> None:
    server.add_resource("/things/1", DOC)
    https_url = server.base_url.replace("http://", "https://")
    with rp.Client(https_url, credentials=server.credentials, profile=server.profile) as client:
        with pytest.raises(rp.TransportError) as caught:
            client.get("/things/1")
    assert https_url in str(caught.value)
    assert server.requests == []  # not a byte of plain HTTP was understood as a request


def test_plain_http_to_the_tls_port_is_not_served(tls_server: FakeServer) -> None:
    http_url = tls_server.base_url.replace("https://", "http://")
    settings = {"profile": tls_server.profile, "retries": 0}
    with rp.Client(http_url, credentials=tls_server.credentials, **settings) as client:
        with pytest.raises(rp.TransportError):
            client.get("/things/1")
    assert tls_server.requests == []


def test_a_redirect_from_https_down_to_http_is_refused(
    tls_server: FakeServer, server: FakeServer
) -> None:
    server.add_resource("/things/1", DOC)
    target = f"{server.base_url}/things/1"
    tls_server.route("GET", "/moved", lambda request: (302, None, {"Location": target}))
    with tls_server.client() as client, pytest.raises(rp.TransportError) as caught:
        client.get("/moved")
    assert "https to plain http" in str(caught.value)
    assert server.requests == []


def test_an_https_client_refuses_plain_http_links_to_remote_hosts(
    tls_server: FakeServer,
) -> None:
    tls_server.add_resource("/away", {"_links": {"next": {"href": "http://api.example.com/x"}}})
    with tls_server.client() as client:
        away = client.get("/away")
        with pytest.raises(rp.ConfigurationError, match="plain http"):
            away.links["next"]()


@pytest.mark.asyncio
async def test_async_client_checks_certificates_too(tls_server: FakeServer) -> None:
    async with tls_server.async_client(verify=True) as client:
        with pytest.raises(rp.TransportError) as caught:
            await client.get("/things/1")
    assert tls_server.base_url in str(caught.value)
    assert_no_secret(str(caught.value), tls_server)
    async with tls_server.async_client() as client:  # verify=ca_path
        assert (await client.get("/things/1")).to_dict() == DOC
    async with tls_server.async_client(verify=False) as client:
        assert (await client.get("/things/1"))["id"] == 1


def test_serve_tls_prints_the_ca_for_ssl_cert_file() -> None:
    process, settings = serve_process.start("--tls")
    try:
        assert settings["RECURRING_PAYMENTS_BASE_URL"].startswith("https://127.0.0.1:")
        assert Path(settings["SSL_CERT_FILE"]).read_text().startswith("-----BEGIN CERTIFICATE")
    finally:
        serve_process.stop(process)
    assert process.returncode == 0
    assert not Path(settings["SSL_CERT_FILE"]).exists()
