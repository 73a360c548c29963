"""Fleet mode (docs/guides/fleets.md): one token for many clients and processes through a real
Redis."""

from __future__ import annotations

import asyncio
import logging
import math
import multiprocessing
import os
import threading
import time
from collections.abc import Iterator
from typing import Any

import fleet_worker
import otel_kit
import pytest
from opentelemetry import trace as otel_trace
from opentelemetry.trace import StatusCode
from redis_server import RedisServer, free_port, started_redis, store_keys

import recurring_payments as rp
from recurring_payments.testing import FakeServer

# Tokens of 2 s renewed 0.5 s early: a renewal every 1.5 s.
TTL = 2.0
LEEWAY = 0.5
PERIOD = TTL - LEEWAY


@pytest.fixture
def redis() -> Iterator[RedisServer]:
    """A real redis-server for the test (`redis_server.started_redis`). (Not in a conftest.py
    here: a second module named `conftest` would shadow tests/conftest.py.)"""
    yield from started_redis()


def test_clients_in_one_process_share_one_token(server: FakeServer, redis: RedisServer) -> None:
    with server.client(token_store=redis.url) as a, server.client(token_store=redis.url) as b:
        a.root()
        b.root()
        assert a.token is not None and b.token is not None
        assert a.token.jti == b.token.jti
    assert len(server.token_requests) == 1
    # The same two clients without the store: a token each.
    server.clear_requests()
    with server.client() as a, server.client() as b:
        a.root()
        b.root()
    assert len(server.token_requests) == 2


def test_the_async_client_shares_the_token(server: FakeServer, redis: RedisServer) -> None:
    async def main() -> str:
        async with server.async_client(token_store=redis.url) as aclient:
            await aclient.root()
            token = aclient.token
            assert token is not None
            return token.jti

    with server.client(token_store=redis.url) as client:
        client.root()
        assert client.token is not None
        assert asyncio.run(main()) == client.token.jti
    assert len(server.token_requests) == 1


def test_redis_holds_no_identity_and_no_usable_token(
    server: FakeServer, redis: RedisServer
) -> None:
    admin = ("creditor-acme", "admin-login", "admin-password-123")
    server.add_admin(*admin)
    with server.client(token_store=redis.url) as client:
        client.root()
    with server.client(
        credentials=rp.AdminCredentials(*admin), token_store=redis.url
    ) as admin_client:
        admin_client.root()
    entries = redis.scan()
    assert len(store_keys(redis)) == 2
    issued = server._native.issued_tokens()
    assert len(issued) == 2
    forbidden = [
        server.credentials.app_name,
        server.credentials.app_secret,
        *admin,
        *issued,
        server.base_url.split("//")[1],
    ]
    for key, value in entries.items():
        assert key.startswith(b"recurring_payments:token:")
        assert len(key.split(b":")[2]) == 64
        for text in forbidden:
            assert text.encode() not in key
            assert value is None or text.encode() not in value


@pytest.mark.timeout(180)
def test_eight_processes_share_one_renewal_per_expiry(redis: RedisServer) -> None:
    def fleet(token_store: str | None) -> tuple[int, list[dict[str, Any]]]:
        with FakeServer(token_ttl=TTL) as server:
            settings = {
                "base_url": server.base_url,
                "credentials": server.credentials,
                "profile": server.profile,
                "token_leeway": LEEWAY,
                "token_store": token_store,
            }
            context = multiprocessing.get_context("spawn")
            with context.Pool(8) as pool:
                start_at = time.time() + 3.0  # every process imported and waiting by then
                jobs = [
                    pool.apply_async(fleet_worker.run, (settings, start_at, 4 * PERIOD, 2))
                    for _ in range(8)
                ]
                reports: list[dict[str, Any]] = [job.get(timeout=90) for job in jobs]
            assert all(not r["failures"] for r in reports), [r["failures"] for r in reports]
            assert all(r["latencies"] for r in reports)
            return len(server.token_requests), reports

    shared, reports = fleet(redis.url)
    window = max(r["ended"] for r in reports) - min(r["began"] for r in reports)
    assert shared <= math.ceil(window / PERIOD) + 1, (shared, window)
    alone, reports = fleet(None)
    # Each process renews on its own: at least once per renewal period it ran through.
    shortest = min(r["ended"] - r["began"] for r in reports)
    assert alone >= 8 * math.floor(shortest / PERIOD), (alone, shortest)


def test_redis_killed_and_restarted(redis: RedisServer, caplog: pytest.LogCaptureFixture) -> None:
    with FakeServer(token_ttl=TTL) as server:
        with server.client(token_store=redis.url, token_leeway=LEEWAY) as client:
            client.root()
            assert len(store_keys(redis)) == 1
            redis.stop()
            with caplog.at_level(logging.DEBUG, logger="recurring_payments"):
                for _ in range(3):  # three renewals without Redis: requests go on
                    time.sleep(PERIOD)
                    client.root(refresh=True)
            warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
            assert len(warnings) == 1, [r.getMessage() for r in warnings]
            assert "token store unavailable" in warnings[0].getMessage()
            assert redis.url not in warnings[0].getMessage()
            redis.start()
            assert store_keys(redis) == {}
            time.sleep(PERIOD)
            client.root(refresh=True)  # the next renewal uses the store again
            assert len(store_keys(redis)) == 1


def leave_a_dead_holder(server: FakeServer, redis: RedisServer, lock_ms: int) -> None:
    """No stored token, and a renewal lock for `lock_ms` that nobody will release: a process
    took it and died (its lock lives on for that process's `timeout`)."""
    with server.client(token_store=redis.url) as first:
        first.root()
    (key,) = store_keys(redis)
    redis.command("DEL", key)
    redis.command("SET", key + b":lock", "dead-holder", "PX", lock_ms)
    server.clear_requests()


def test_a_dead_lock_holder_is_taken_over(server: FakeServer, redis: RedisServer) -> None:
    leave_a_dead_holder(server, redis, lock_ms=1500)
    with server.client(token_store=redis.url, timeout=1.5) as second:
        started = time.monotonic()
        second.root()
        waited = time.monotonic() - started
    assert len(server.token_requests) == 1
    assert waited >= 0.5  # it waited for the holder, then took over
    assert len(store_keys(redis)) == 1


def test_a_dead_holder_is_taken_over_by_one_client_of_many(
    server: FakeServer, redis: RedisServer
) -> None:
    # Each waiter gave up `timeout` after it began waiting and fetched on its own: the many
    # waiters of a dead holder all fetched a few ms after its lock expired (2 to 6 token
    # requests). Clients of one process with a store are fleet members like processes.
    leave_a_dead_holder(server, redis, lock_ms=1500)
    clients = [server.client(token_store=redis.url, timeout=1.5) for _ in range(6)]
    errors: list[BaseException] = []

    def call(client: rp.Client) -> None:
        try:
            client.root()
        except BaseException as err:  # reported below, on the test's thread
            errors.append(err)

    threads = [threading.Thread(target=call, args=(c,)) for c in clients]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=30)
        assert errors == []
        assert len(server.token_requests) == 1
        assert len({c.token.jti for c in clients if c.token}) == 1
    finally:
        for c in clients:
            c.close()


def test_a_dead_holder_never_fails_a_call_whose_deadline_comes_first(
    server: FakeServer, redis: RedisServer
) -> None:
    # The defaults: a lock lives for `timeout` (30 s), longer than a call (total_timeout 25 s,
    # here 2 s). The call waited for the lock until its deadline and failed (TimeoutError).
    # It gives the store half of its time, then fetches its own token.
    leave_a_dead_holder(server, redis, lock_ms=30_000)
    with server.client(token_store=redis.url, total_timeout=2.0) as second:
        started = time.monotonic()
        assert second.root().status == 200
        waited = time.monotonic() - started
    assert 0.9 <= waited < 1.9
    assert len(server.token_requests) == 1
    assert len(store_keys(redis)) == 1  # stored for the fleet all the same


def test_a_401_removes_the_stored_token_only_if_it_is_still_the_one(
    server: FakeServer, redis: RedisServer
) -> None:
    with server.client(token_store=redis.url) as a, server.client(token_store=redis.url) as b:
        a.root()
        b.root()
        assert len(server.token_requests) == 1
        server.expire_tokens()
        a.root(refresh=True)  # 401: removes the stored token, renews, stores the new one
        b.root(refresh=True)  # 401 for the old token: the stored one is a successor, kept
        assert a.token is not None and b.token is not None
        assert a.token.jti == b.token.jti
    assert len(server.token_requests) == 2


def test_a_store_on_a_closed_port(server: FakeServer, caplog: pytest.LogCaptureFixture) -> None:
    closed = f"redis://127.0.0.1:{free_port()}/0"
    with caplog.at_level(logging.DEBUG, logger="recurring_payments"):
        with server.client(token_store=closed) as client:
            for _ in range(3):
                client.root(refresh=True)
            client.authenticate()
    assert len(server.token_requests) == 2  # the first request's, then authenticate()'s
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_opens_its_own_connection(server: FakeServer, redis: RedisServer) -> None:
    from forking import run_in_child

    with server.client(token_store=redis.url) as client:
        client.root()

        def child() -> int:
            client.authenticate()  # a new token, stored through the child's own connection
            return 0

        assert run_in_child(child) == 0
        client.root(refresh=True)
    assert len(server.token_requests) == 2
    assert len(store_keys(redis)) == 1


@pytest.mark.parametrize(
    "value", ["http://127.0.0.1:6379", "127.0.0.1:6379", "redis:// host", 6379]
)
def test_token_store_is_checked(server: FakeServer, value: Any) -> None:
    with pytest.raises(rp.ConfigurationError, match="token_store") as caught:
        server.client(token_store=value)
    assert "6379" not in str(caught.value)


def test_a_password_in_the_url_is_never_shown(server: FakeServer) -> None:
    url = f"redis://:redis-pass-word-1@127.0.0.1:{free_port()}/0"
    with server.client(token_store=url) as client:
        client.root()
        assert "redis-pass-word-1" not in repr(client)
    with pytest.raises(rp.ConfigurationError) as caught:
        server.client(token_store="redis://:redis-pass-word-1@[bad/0")
    assert "redis-pass-word-1" not in str(caught.value)


def test_from_env_reads_token_store(
    server: FakeServer, redis: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    prefix = "FLEET_TEST_"
    env = {
        "BASE_URL": server.base_url,
        "PROFILE": server.profile,
        "APP_NAME": server.credentials.app_name,
        "APP_SECRET": server.credentials.app_secret,
        "TOKEN_STORE": redis.url,
    }
    for name, value in env.items():
        monkeypatch.setenv(prefix + name, value)
    with rp.Client.from_env(prefix=prefix) as client:
        client.root()
    assert len(store_keys(redis)) == 1
    monkeypatch.setenv(prefix + "TOKEN_STORE", "memcached://127.0.0.1:1")
    with pytest.raises(rp.ConfigurationError, match="token_store"):
        rp.Client.from_env(prefix=prefix)
    assert os.environ[prefix + "TOKEN_STORE"].startswith("memcached")


def _store_spans(exporter: Any) -> list[Any]:
    return [s for s in exporter.get_finished_spans() if s.name == "recurring_payments.token_store"]


def test_the_store_shows_as_spans(server: FakeServer, redis: RedisServer) -> None:
    # docs/guides/fleets.md: with telemetry, every command to the store is a span of its own, child
    # of
    # the caller's span, beside the token request's HTTP span.
    tracer = otel_trace.get_tracer("tests")
    with otel_kit.capture() as exporter, server.client(token_store=redis.url) as client:
        with tracer.start_as_current_span("caller") as caller:
            client.root()
    spans = _store_spans(exporter)
    ops = [s.attributes["db.operation.name"] for s in spans]
    assert "get" in ops and "set" in ops, ops
    parent = caller.get_span_context().span_id
    for span in spans:
        assert span.parent is not None and span.parent.span_id == parent
        assert "error.type" not in span.attributes
        assert span.status.status_code != StatusCode.ERROR
        assert span.start_time <= span.end_time


def test_a_failing_store_shows_as_error_spans(server: FakeServer) -> None:
    closed = f"redis://127.0.0.1:{free_port()}/0"
    with otel_kit.capture() as exporter, server.client(token_store=closed) as client:
        client.root()
    spans = _store_spans(exporter)
    assert spans, "no token_store span for a store on a closed port"
    assert all(s.attributes.get("error.type") for s in spans)
    assert all(s.status.status_code == StatusCode.ERROR for s in spans)
    assert closed not in repr([dict(s.attributes) for s in spans])


def test_the_async_client_records_store_spans(server: FakeServer, redis: RedisServer) -> None:
    async def main() -> None:
        async with server.async_client(token_store=redis.url) as client:
            await client.root()

    with otel_kit.capture() as exporter:
        asyncio.run(main())
    ops = [s.attributes["db.operation.name"] for s in _store_spans(exporter)]
    assert "get" in ops, ops
