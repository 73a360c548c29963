"""The sync client drives its I/O on the calling thread: each thread has its own runtime and
its own connections, which live as long as the thread (docs/guarantees.md#threads-and-fork)."""

from __future__ import annotations

import sys
import threading
import time
from urllib.parse import urlsplit

import pytest
from forking import run_in_child
from raw_http import CuttingProxy

import recurring_payments as rp
from recurring_payments.testing import FakeServer

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc/net/tcp")


def open_connections(server: FakeServer) -> int:
    """Established client sockets to the server's port (the client's side of each connection)."""
    return established_to(urlsplit(server.base_url).port)


def established_to(port: int | None) -> int:
    """Established connections to ``port`` on this host, from any process (a forked child
    cannot ask the parent's sandbox for its URL)."""
    count = 0
    with open("/proc/net/tcp") as table:
        next(table)
        for line in table:
            fields = line.split()
            remote_port = int(fields[2].split(":")[1], 16)
            if remote_port == port and fields[3] == "01":  # 01: ESTABLISHED
                count += 1
    return count


def test_threads_sharing_a_client_each_reuse_their_own_connection(
    server: FakeServer, client: rp.Client
) -> None:
    client.root()  # the main thread's connection
    assert open_connections(server) == 1
    threads = 6
    done = threading.Barrier(threads + 1)
    counted = threading.Event()
    statuses: list[int] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(20):
                statuses.append(client.get("/").status or 0)
        except BaseException as e:  # collected and asserted below
            errors.append(e)
        done.wait()
        counted.wait(10)  # stay alive (with the connection) until counted

    pool = [threading.Thread(target=work) for _ in range(threads)]
    for t in pool:
        t.start()
    done.wait()
    try:
        # 120 requests, one keep-alive connection per thread (plus the main thread's).
        assert open_connections(server) == threads + 1
    finally:
        counted.set()
        for t in pool:
            t.join()
    assert errors == []
    assert statuses == [200] * (threads * 20)


def test_a_thread_that_exits_closes_its_connections_and_others_keep_working(
    server: FakeServer, client: rp.Client
) -> None:
    client.root()
    for _ in range(3):  # threads come and go, as in a server's thread pool
        t = threading.Thread(target=lambda: client.get("/"))
        t.start()
        t.join()
        # Its runtime and pool are dropped at exit: no connection is left behind. (join()
        # returns when Python is done with the thread, a moment before the OS thread ends.)
        deadline = time.monotonic() + 5
        while open_connections(server) > 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert open_connections(server) == 1
    results: list[int] = []
    t = threading.Thread(target=lambda: results.append(client.get("/").status or 0))
    t.start()
    t.join()
    assert results == [200]
    assert client.get("/").status == 200
    assert len(server.token_requests) == 1  # the token is the client's, not the thread's


def test_the_async_client_does_not_use_the_threads_connections(server: FakeServer) -> None:
    import asyncio

    with server.client() as client:
        client.root()

        async def follow() -> int:
            async with server.async_client() as aclient:
                return (await aclient.get("/")).status or 0

        # asyncio.run on this thread: the async client's connection is the shared pool's, so
        # it works although this thread's own runtime is idle while the loop runs.
        assert asyncio.run(follow()) == 200
        assert client.get("/").status == 200


def test_fork_child_leaves_the_inherited_runtime_alone(
    server: FakeServer, client: rp.Client
) -> None:
    client.root()  # this thread's runtime and connection now exist, and the child inherits them

    def in_child() -> int:
        ok = [client.get("/").status == 200]  # a new runtime and pool on this thread
        t = threading.Thread(target=lambda: ok.append(client.get("/").status == 200))
        t.start()
        t.join()  # that thread's runtime is dropped at its exit, in the child
        return 0 if ok == [True, True] else 2

    assert run_in_child(in_child, timeout=10) == 0
    # The parent's connection was not touched by the child: the same one still serves.
    assert client.get("/").status == 200
    assert open_connections(server) == 1


def test_a_grandchild_of_a_fork_builds_its_own_runtime_too(
    server: FakeServer, client: rp.Client
) -> None:
    # The core caches the pid (no getpid per request) and a fork handler clears it: the
    # child, then its own child, must each see their own process and open their own
    # connection. With a stale pid each would drive the runtime and pool it was forked with,
    # and send on the socket its parent shares.
    client.root()
    port = urlsplit(server.base_url).port
    assert established_to(port) == 1

    def in_grandchild() -> int:
        return 0 if client.get("/").status == 200 and established_to(port) == 3 else 2

    def in_child() -> int:
        if client.get("/").status != 200 or established_to(port) != 2:
            return 2
        run_in_child(in_grandchild, timeout=10)
        return 0 if client.get("/").status == 200 else 3

    assert run_in_child(in_child, timeout=20) == 0
    assert client.get("/").status == 200


def test_a_connection_closed_by_the_server_while_idle_is_not_reused(server: FakeServer) -> None:
    # The thread's connections are not polled between its requests: the close must still be
    # seen before the next request picks one (retries=0: a dead pick would be an error).
    proxy = CuttingProxy(urlsplit(server.base_url).port or 0)
    try:
        settings = server._client_settings({"retries": 0})
        with rp.Client(f"http://127.0.0.1:{proxy.port}", **settings) as client:
            assert client.get("/").status == 200
            for _ in range(5):
                proxy.cut()
                time.sleep(0.05)  # the FIN has arrived while the thread was away
                assert client.get("/").status == 200
    finally:
        proxy.close()
