"""Fleet mode with credentials providers (docs/guarantees.md): clients whose providers read the
same secret share one token through a real Redis; during a rotation the fleet holds one token
per secret in use; Redis never holds a secret."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from redis_server import RedisServer, started_redis, store_keys

import recurring_payments as rp
from recurring_payments.testing import FakeServer

APP = "fleet-rotating-app"
OLD = "fleet-old-secret-81d2"
NEW = "fleet-new-secret-c47e"


@pytest.fixture
def redis() -> Iterator[RedisServer]:
    """A real redis-server for the test (`redis_server.started_redis`). (Not in a conftest.py
    here: a second module named `conftest` would shadow tests/conftest.py.)"""
    yield from started_redis()


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer() as s:
        s.add_resource("/thing", {"ok": True, "_links": {"self": {"href": "/thing"}}})
        s.add_app(APP, OLD)
        yield s


class SecretFile:
    """A provider reading a mounted secret on each call (here, an attribute a test rewrites)."""

    def __init__(self, secret: str) -> None:
        self.secret = secret

    def __call__(self) -> rp.AppCredentials:
        return rp.AppCredentials(APP, self.secret)


def test_providers_reading_one_secret_share_one_token_and_one_per_secret_in_a_rotation(
    server: FakeServer, redis: RedisServer
) -> None:
    files = [SecretFile(OLD) for _ in range(3)]
    clients = [server.client(credentials=f, token_store=redis.url, retries=0) for f in files]
    try:
        for client in clients:
            client.get("/thing")
        assert len({c.token.jti for c in clients}) == 1
        assert len(server.token_requests) == 1
        assert len(store_keys(redis)) == 1
        # The secret is regenerated: processes started since read the new one and share one
        # token of their own; those running keep theirs (valid until it expires).
        server.add_app(APP, NEW)
        for _ in range(3):
            clients.append(server.client(credentials=SecretFile(NEW), token_store=redis.url))
        for client in clients:
            client.get("/thing")
        assert len({c.token.jti for c in clients[:3]}) == 1
        assert len({c.token.jti for c in clients[3:]}) == 1
        assert len(server.token_requests) == 2
        assert len(store_keys(redis)) == 2  # one token per secret in use
    finally:
        for client in clients:
            client.close()
    for key, value in redis.scan().items():
        for text in (APP, OLD, NEW):
            assert text.encode() not in key
            assert value is None or text.encode() not in value


def test_async_providers_share_the_sync_clients_token(
    server: FakeServer, redis: RedisServer
) -> None:
    async def read_secret() -> rp.AppCredentials:
        return rp.AppCredentials(APP, OLD)

    async def main() -> str:
        async with server.async_client(credentials=read_secret, token_store=redis.url) as a:
            await a.get("/thing")
            assert a.token is not None
            return a.token.jti

    with server.client(credentials=SecretFile(OLD), token_store=redis.url) as client:
        client.get("/thing")
        assert client.token is not None
        assert asyncio.run(main()) == client.token.jti
    assert len(server.token_requests) == 1


def test_identities_derived_with_a_store_share_one_connection_and_their_own_keys(
    server: FakeServer, redis: RedisServer
) -> None:
    tenants = [rp.AppCredentials(f"fleet-tenant-{n}", f"fleet-tenant-secret-{n}") for n in range(3)]
    for tenant in tenants:
        server.add_app(tenant.app_name, tenant.app_secret)
    with server.client(token_store=redis.url) as one, server.client(token_store=redis.url) as two:
        for tenant in tenants:
            one.with_options(credentials=tenant).authenticate()
            two.with_options(credentials=tenant).get("/thing")
        clients = int(redis.command("CLIENT", "LIST").count(b"\n"))
    assert len(server.token_requests) == len(tenants)  # the second client found them stored
    assert len(store_keys(redis)) == len(tenants)
    assert clients <= 3  # each original's connection serves its identities (and the scan's)
