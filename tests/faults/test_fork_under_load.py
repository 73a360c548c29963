"""Fork under load (issue 8): a parent whose client is busy in several threads forks children
(os.fork, and multiprocessing with the fork start method); each child completes requests with
the inherited client and exits 0, while the parent keeps working. Nothing is sent twice."""

from __future__ import annotations

import asyncio
import functools
import logging
import multiprocessing
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from fault_kit import assert_nothing_sent_twice, install_routes
from forking import fork_child, no_fork_warning, wait_child

import recurring_payments as rp
from recurring_payments.testing import FakeServer

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="fork semantics of Linux")

CHILD_REQUESTS = 10
# The clients the children inherit (multiprocessing's fork start method passes nothing else).
_inherited: dict[str, Any] = {}


@contextmanager
def busy(client: rp.Client, threads: int = 8) -> Iterator[list[int]]:
    """`threads` threads issue requests on `client` until the block ends; yields the list that
    receives each thread's count, then checks that none of them failed."""
    stop = threading.Event()
    done: list[int] = []
    errors: list[BaseException] = []

    def work() -> None:
        n = 0
        while not stop.is_set():
            try:
                assert client.get("/thing")["ok"] is True
                n += 1
            except BaseException as error:
                errors.append(error)
                return
        done.append(n)

    workers = [threading.Thread(target=work) for _ in range(threads)]
    for worker in workers:
        worker.start()
    try:
        time.sleep(0.2)  # the threads are mid-request when the forks happen
        yield done
    finally:
        stop.set()
        for worker in workers:
            worker.join(30)
    assert not errors, errors
    assert len(done) == threads and all(n > 0 for n in done)


def child_work(tag: str) -> int:
    """What each child does with the inherited clients: GETs and POSTs, sync and async."""
    client: rp.Client = _inherited["client"]
    aclient: rp.AsyncClient = _inherited["aclient"]
    for k in range(CHILD_REQUESTS):
        assert client.get("/thing")["ok"] is True
        ref = f"{tag}-{k}"
        assert client.post("/orders", {"ref": ref})["reference"] == ref
    assert asyncio.run(aclient.get("/thing"))["ok"] is True
    ref = f"{tag}-async"
    assert asyncio.run(aclient.post("/orders", {"ref": ref}))["reference"] == ref
    return 0


@pytest.fixture
def loaded() -> Iterator[FakeServer]:
    # No DEBUG records while forking (the session turns DEBUG on, see secret_watch.py): a
    # thread of the parent writing a record to pytest's log file holds that stream's buffer
    # lock at the fork, and the child's first record would wait for it forever. That is
    # Python's fork hazard with threads and buffered streams, not the client's.
    logging.disable(logging.INFO)
    # Telemetry off for the same reason: the suite's global OpenTelemetry SDK and its observers
    # (otel_kit.py, secret_watch.py) take locks on every span and measurement, and a parent
    # thread holding one at the fork leaves the child's first span waiting forever (seen once
    # in CI on 3.10). The SDK's locks are its own fork hazard, not the client's state.
    with FakeServer() as server:
        install_routes(server)
        client = server.client(telemetry=False)
        aclient = server.async_client(telemetry=False)
        _inherited.update(client=client, aclient=aclient)
        client.root()
        asyncio.run(aclient.root())  # runtime, pool and tokens exist before any fork
        try:
            yield server
        finally:
            logging.disable(logging.NOTSET)
            _inherited.clear()
            asyncio.run(aclient.aclose())
            client.close()


def _child_posts(server: FakeServer, prefix: str) -> list[str]:
    return sorted(
        r.json["ref"]
        for r in server.requests
        if r.method == "POST" and r.path == "/orders" and r.json["ref"].startswith(prefix)
    )


def test_os_fork_under_load(loaded: FakeServer) -> None:
    client = _inherited["client"]
    with busy(client):
        # Overlapping children: all forked before any is waited for.
        children = [fork_child(functools.partial(child_work, f"fork{i}")) for i in range(6)]
        assert [wait_child(pid, read) for pid, read in children] == [0] * 6
        assert client.get("/thing")["ok"] is True  # the parent, still under load
    for i in range(6):
        expected = sorted([f"fork{i}-{k}" for k in range(CHILD_REQUESTS)] + [f"fork{i}-async"])
        assert _child_posts(loaded, f"fork{i}-") == expected
    assert_nothing_sent_twice(loaded)
    assert asyncio.run(_inherited["aclient"].get("/thing"))["ok"] is True


def _pool_work(i: int) -> int:
    return child_work(f"pool{i}")


def test_multiprocessing_fork_under_load(loaded: FakeServer) -> None:
    context = multiprocessing.get_context("fork")
    with busy(_inherited["client"]):
        with no_fork_warning():
            processes = [context.Process(target=child_work, args=(f"mp{i}",)) for i in range(3)]
            for process in processes:
                process.start()
        for process in processes:
            process.join(30)
            if process.exitcode is None:  # hung: kill it, or multiprocessing waits at exit
                process.kill()
                process.join()
        assert [p.exitcode for p in processes] == [0, 0, 0]
        with no_fork_warning(), context.Pool(3) as pool:
            results = pool.map_async(_pool_work, range(6), chunksize=1).get(timeout=30)
            assert results == [0] * 6
    for i in range(3):
        assert len(_child_posts(loaded, f"mp{i}-")) == CHILD_REQUESTS + 1
    for i in range(6):
        assert len(_child_posts(loaded, f"pool{i}-")) == CHILD_REQUESTS + 1
    assert_nothing_sent_twice(loaded)
