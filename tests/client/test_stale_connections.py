"""A keep-alive connection that its server closed while it sat idle carries no request: each
reused HTTP/1 connection is peeked before the first byte of a request is written on it, and a
request refused there goes out once, on another connection, whatever its method and with
``retries=0`` (docs/guarantees.md#connections)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
from fault_kit import Api, install_routes, unique_body
from raw_http import CuttingProxy

from recurring_payments.testing import FakeServer

KINDS = ["sync", "async"]


@pytest.fixture
def proxy(server: FakeServer) -> Iterator[CuttingProxy]:
    install_routes(server)
    proxy = CuttingProxy(urlsplit(server.base_url).port or 0)
    try:
        yield proxy
    finally:
        proxy.close()


def api(server: FakeServer, proxy: CuttingProxy, kind: str) -> Api:
    """Either face through the proxy, with `retries=0`: a dead connection would be an error."""
    return Api(server, kind, base=f"http://127.0.0.1:{proxy.port}", retries=0)


def writes(server: FakeServer) -> list[Any]:
    return [r for r in server.requests if r.method == "POST" and r.path == "/orders"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("pause", [0.0, 0.02], ids=["at once", "after 20 ms"])
def test_a_get_after_the_server_closed_the_idle_connection_succeeds(
    server: FakeServer, proxy: CuttingProxy, kind: str, pause: float
) -> None:
    # At once: the close races the next request (on the async face the connection's task may
    # not have run yet); after 20 ms: it has arrived (on the sync face nothing has read it).
    client = api(server, proxy, kind)
    try:
        statuses = [client.get("/thing").status]
        for _ in range(40):
            proxy.cut()
            time.sleep(pause)
            statuses.append(client.get("/thing").status)
    finally:
        client.close()
    assert statuses == [200] * 41


@pytest.mark.parametrize("kind", KINDS)
def test_a_post_on_a_closed_idle_connection_is_sent_once_on_a_new_one(
    server: FakeServer, proxy: CuttingProxy, kind: str
) -> None:
    client = api(server, proxy, kind)
    try:
        client.get("/thing")
        made = []
        for _ in range(10):
            proxy.cut()
            time.sleep(0.02)
            made.append(client.post("/orders", unique_body()).status)
    finally:
        client.close()
    assert made == [201] * 10
    bodies = [r.json["ref"] for r in writes(server)]
    assert len(bodies) == 10 and len(set(bodies)) == 10  # each sent once


def test_under_load_the_async_face_never_sends_on_a_closed_idle_connection(
    server: FakeServer, proxy: CuttingProxy
) -> None:
    # The shared runtime busy with other requests runs the closed connection's task late: the
    # pool may hand that connection out first.
    async def scenario() -> list[int]:
        busy = server.async_client()
        client = api(server, proxy, "async").client
        await client.get("/thing")
        done = False

        async def load() -> None:
            while not done:
                await busy.get("/thing")

        loaders = [asyncio.ensure_future(load()) for _ in range(32)]
        statuses = []
        try:
            for _ in range(100):
                await asyncio.to_thread(proxy.cut)
                statuses.append((await client.get("/thing")).status)
        finally:
            done = True
            await asyncio.gather(*loaders)
            await client.aclose()
            await busy.aclose()
        return statuses

    assert asyncio.run(scenario()) == [200] * 100


def test_every_idle_connection_closed_at_once_costs_no_request(
    server: FakeServer, proxy: CuttingProxy
) -> None:
    # A server restart under load: the pool's 24 idle connections all closed; 24 requests at
    # once each pass over the stale ones they are handed, and none fails (retries=0).
    async def scenario() -> list[int]:
        busy = server.async_client()
        client = api(server, proxy, "async").client
        done = False

        async def load() -> None:
            while not done:
                await busy.get("/thing")

        loaders = [asyncio.ensure_future(load()) for _ in range(32)]
        statuses: list[int] = []
        try:
            for _ in range(5):
                await asyncio.gather(*(client.get("/thing") for _ in range(24)))
                await asyncio.to_thread(proxy.cut)
                replies = await asyncio.gather(*(client.get("/thing") for _ in range(24)))
                statuses += [reply.status for reply in replies]
        finally:
            done = True
            await asyncio.gather(*loaders)
            await client.aclose()
            await busy.aclose()
        return statuses

    assert asyncio.run(scenario()) == [200] * 120
