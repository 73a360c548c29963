"""Connection pools are released with the last client that uses them (issue 12, item 8): 150
clients created and closed with distinct settings used to leave two pools each behind."""

from __future__ import annotations

import asyncio
import gc
import os

import pytest

from recurring_payments.testing import FakeServer


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc")
def test_clients_with_distinct_settings_do_not_leak_connections(server: FakeServer) -> None:
    def one(i: int) -> None:
        with server.client(connect_timeout=5.0 + i / 1000) as client:
            client.root()
        aclient = server.async_client(connect_timeout=5.0 + i / 1000)
        asyncio.run(aclient.root())
        asyncio.run(aclient.aclose())

    for i in range(5):  # warm up: the runtime, the loop's own sockets
        one(i)
    gc.collect()
    before = open_fds()
    for i in range(5, 155):
        one(i)
    gc.collect()
    # Without the release: two connections (sync and async pool) per client, +300 sockets.
    assert open_fds() - before < 20
