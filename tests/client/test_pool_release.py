"""Connection pools are released with the last client that uses them (issue 12, item 8): 150
clients created and closed with distinct settings used to leave two pools each behind."""

from __future__ import annotations

import asyncio
import gc
import os
import time

import pytest

import recurring_payments as rp
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


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc")
def test_aclose_lets_connections_go_while_an_error_is_kept(server: FakeServer) -> None:
    # A kept error (an errors list, the REPL's last exception) holds the frames of its call,
    # which name the native client; an async call's frames are also in a cycle with their
    # future, which only the GC breaks. `aclose()` must let the connections go regardless (the
    # soak saw 256 still open 5 s after it). Settings of its own: a pool no other client uses.
    def once(connect_timeout: float) -> Exception:
        async def run() -> None:
            async with server.async_client(connect_timeout=connect_timeout) as aclient:
                await aclient.root()
                server.fail_next(500)
                await aclient.get("/")

        with pytest.raises(rp.ServerError) as failed:
            asyncio.run(run())
        return failed.value

    once(7.0)  # warm up: the runtime's threads, the loop's own sockets
    gc.collect()
    before = open_fds()
    kept = once(7.25)
    # The pool's connections are closed by the runtime's workers: soon, not at once.
    deadline = time.monotonic() + 2.0
    while open_fds() > before and time.monotonic() < deadline:
        time.sleep(0.02)
    assert open_fds() <= before, kept


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc")
def test_close_lets_this_threads_connections_go(server: FakeServer) -> None:
    # A sync client's connections are its thread's, driven only while that thread waits on a
    # request: `close()` closes them, rather than the thread's next new pool (or its exit),
    # with the last error kept too.
    with server.client(connect_timeout=7.5) as client:
        client.root()
        server.fail_next(500)
        with pytest.raises(rp.ServerError) as failed:
            client.get("/")
        in_use = open_fds()  # its connection, and the in-process sandbox's end of it
    assert open_fds() < in_use, failed.value
