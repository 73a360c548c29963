"""Fleet mode over TLS (docs/guides/fleets.md): ``rediss://`` against a real
``redis-server`` that listens with TLS only, its certificate from a throw-away CA.

The store's certificate check uses the system's roots as rustls-native-certs loads them, and
redis loads them on every new connection: ``SSL_CERT_FILE`` set in this process before the
client connects is honoured, so no child process is needed to trust the test's CA."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import otel_kit
import pytest
from redis_server import (
    CertificateAuthority,
    RedisServer,
    TlsFiles,
    in_ci,
    store_keys,
    tls_missing_reason,
)

import recurring_payments as rp
from recurring_payments.testing import FakeServer

PASSWORD = "redis-tls-pass-42"
# Each store command's bound (the client's connect_timeout): a fallback never waits much longer.
OP_TIMEOUT = 1.0
# Generous: a request that fell back waits for one store command at most, a hang for ever.
FALLBACK_BOUND = 5 * OP_TIMEOUT


@pytest.fixture(autouse=True, scope="module")
def api_roots_first() -> None:
    """The API's connection pool is built before these tests point SSL_CERT_FILE at their CAs.
    (The API's roots for `verify=True` are read once per process, at its first certificate
    check: these tests make none to the API, which they reach over plain http.)"""
    with FakeServer() as api, api.client() as client:
        client.root()


@pytest.fixture
def authority(tmp_path: Path) -> CertificateAuthority:
    """The CA the test's Redis servers get their certificates from. Without redis-server or
    openssl the test skips with the reason, except under CI=true, where it fails."""
    reason = tls_missing_reason()
    if reason is not None:
        if in_ci():
            pytest.fail(f"TLS fleet tests need Redis and openssl under CI: {reason}")
        pytest.skip(reason)
    return CertificateAuthority(tmp_path, "fleet-test-ca")


@contextmanager
def running(tls: TlsFiles | None, password: str | None = None) -> Iterator[RedisServer]:
    server = RedisServer(tls=tls, password=password).start()
    try:
        yield server
    finally:
        server.close()


def trust(monkeypatch: pytest.MonkeyPatch, ca: Path) -> None:
    """Make ``ca`` the only root the store trusts (SSL_CERT_FILE replaces the system's)."""
    monkeypatch.setenv("SSL_CERT_FILE", str(ca))
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


def assert_fell_back(
    server: FakeServer, redis: RedisServer, url: str, caplog: pytest.LogCaptureFixture
) -> list[str]:
    """Two clients on ``url``, which the store cannot use: each request succeeds with the
    client's own token (two token requests), within the op timeout; Redis stays empty. Returns
    the WARNINGs, checked to hold neither the URL nor its password."""
    with caplog.at_level(logging.DEBUG, logger="recurring_payments"):
        for _ in range(2):
            with server.client(token_store=url, connect_timeout=OP_TIMEOUT) as client:
                started = time.monotonic()
                client.root()
                assert time.monotonic() - started < FALLBACK_BOUND
    assert len(server.token_requests) == 2
    assert redis.scan() == {}  # read over TLS for a TLS server
    warnings = warnings_of(caplog)
    assert len(warnings) == 2, warnings  # one per client
    for record in caplog.records:
        text = record.getMessage()
        assert PASSWORD not in text and url not in text, text
    return warnings


def test_rediss_with_a_trusted_ca_shares_one_token(
    server: FakeServer,
    authority: CertificateAuthority,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The server listens with TLS only and asks for a password: the store works only over a
    # verified TLS connection that sent AUTH.
    trust(monkeypatch, authority.cert)

    async def main(url: str) -> str:
        async with server.async_client(token_store=url) as aclient:
            await aclient.root()
            assert aclient.token is not None
            return aclient.token.jti

    with running(authority.issue("redis"), PASSWORD) as redis:
        assert redis.url.startswith("rediss://")
        with caplog.at_level(logging.DEBUG, logger="recurring_payments"):
            with (
                server.client(token_store=redis.url) as a,
                server.client(token_store=redis.url) as b,
            ):
                a.root()
                b.root()
                assert a.token is not None and b.token is not None
                assert a.token.jti == b.token.jti
                assert asyncio.run(main(redis.url)) == a.token.jti
        assert len(server.token_requests) == 1
        assert warnings_of(caplog) == []
        ((key, sealed),) = store_keys(redis).items()
        assert key.startswith(b"recurring_payments:token:")
        assert sealed is not None
        for token in server._native.issued_tokens():
            assert token.encode() not in sealed


def test_rediss_refuses_a_certificate_from_another_ca(
    server: FakeServer,
    authority: CertificateAuthority,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The client trusts another CA (of the same shape): the handshake must fail, so nothing
    # reaches Redis. With verification off the clients would share one token and store it.
    trust(monkeypatch, CertificateAuthority(tmp_path, "another-ca").cert)
    with running(authority.issue("redis"), PASSWORD) as redis, otel_kit.capture() as exporter:
        warnings = assert_fell_back(server, redis, redis.url, caplog)
    for message in warnings:
        assert "token store unavailable" in message
        assert "TLS handshake failed" in message and "UnknownIssuer" in message, message
    spans = [s for s in exporter.get_finished_spans() if s.name == "recurring_payments.token_store"]
    assert spans and all(s.attributes.get("error.type") == "tls" for s in spans)


def test_rediss_refuses_a_certificate_for_another_name(
    server: FakeServer,
    authority: CertificateAuthority,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # A trusted CA, but the certificate names another host than 127.0.0.1.
    trust(monkeypatch, authority.cert)
    with running(authority.issue("elsewhere", san="DNS:redis.invalid"), PASSWORD) as redis:
        warnings = assert_fell_back(server, redis, redis.url, caplog)
    for message in warnings:
        assert "TLS handshake failed" in message and "not valid for name" in message, message


def test_ssl_cert_file_is_read_for_each_new_connection(
    server: FakeServer,
    authority: CertificateAuthority,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # fleets.md: the roots are read again for each new connection to Redis, so a CA bundle
    # set (or rotated) after a refusal is used by the same client's next connection.
    trust(monkeypatch, CertificateAuthority(tmp_path, "another-ca").cert)
    with running(authority.issue("redis"), PASSWORD) as redis:
        with server.client(token_store=redis.url, connect_timeout=OP_TIMEOUT) as client:
            client.root()
            assert redis.scan() == {}
            trust(monkeypatch, authority.cert)
            client.authenticate()  # a renewal: a new connection, which stores the token
            assert len(store_keys(redis)) == 1


def test_rediss_to_a_plain_port_falls_back_within_the_op_timeout(
    server: FakeServer,
    authority: CertificateAuthority,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # A plain Redis waits for the end of a command line that the TLS hello never sends: the
    # store command times out. Were rediss:// sent in plain text, this Redis would store.
    trust(monkeypatch, authority.cert)
    with running(None, PASSWORD) as plain:
        url = f"rediss://:{PASSWORD}@127.0.0.1:{plain.port}/0"
        warnings = assert_fell_back(server, plain, url, caplog)
    for message in warnings:
        assert "token store unavailable" in message and "timed out" in message, message


def test_redis_scheme_to_a_tls_port_falls_back(
    server: FakeServer,
    authority: CertificateAuthority,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The TLS port drops a client that does not start a handshake.
    trust(monkeypatch, authority.cert)
    with running(authority.issue("redis"), PASSWORD) as redis:
        url = f"redis://:{PASSWORD}@127.0.0.1:{redis.port}/0"
        warnings = assert_fell_back(server, redis, url, caplog)
    for message in warnings:
        assert "token store unavailable" in message and "connection" in message, message


def test_certificate_checks_cannot_be_turned_off(server: FakeServer) -> None:
    # redis's `#insecure` would skip the checks; the library refuses it when built.
    url = f"rediss://:{PASSWORD}@127.0.0.1:6380/0#insecure"
    with pytest.raises(rp.ConfigurationError, match="#insecure") as caught:
        server.client(token_store=url)
    assert PASSWORD not in str(caught.value)
