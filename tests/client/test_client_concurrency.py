"""Threads, the GIL and fork: a Client shared by a Django/Flask process
(docs/guarantees.md#threads-and-fork)."""

from __future__ import annotations

import _thread
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from conftest import api_requests
from forking import run_in_child

import recurring_payments as rp
from recurring_payments.testing import FakeServer


def test_sixteen_threads_with_an_expiry_in_the_middle(server: FakeServer) -> None:
    with server.client() as client:
        client.root()
        errors: list[BaseException] = []

        def work(i: int) -> None:
            try:
                for _ in range(25):
                    assert client.get("/").status == 200
                    if i == 0 and not expired.is_set():
                        server.expire_tokens()
                        expired.set()
            except BaseException as e:  # collected and asserted below
                errors.append(e)

        expired = threading.Event()
        with ThreadPoolExecutor(16) as pool:
            list(pool.map(work, range(16)))
        assert errors == []
        assert len(server.token_requests) == 2  # the first, and one per expiry


def test_first_calls_from_many_threads_share_one_token_request(server: FakeServer) -> None:
    with server.client() as client:
        barrier = threading.Barrier(16)

        def first_call(_: int) -> int:
            barrier.wait()
            return client.get("/").status or 0

        with ThreadPoolExecutor(16) as pool:
            assert set(pool.map(first_call, range(16))) == {200}
        assert len(server.token_requests) == 1


def test_the_gil_is_released_while_waiting(server: FakeServer, client: rp.Client) -> None:
    client.root()
    server.delay_next(0.5, path="/")
    ticks = 0
    done = threading.Event()

    def slow() -> None:
        client.get("/")
        done.set()

    thread = threading.Thread(target=slow)
    thread.start()
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    thread.join()
    assert ticks > 100  # Python kept running during the half second the request waited


@pytest.mark.skipif(sys.platform != "linux", reason="fork semantics of Linux")
def test_client_used_before_fork_works_in_the_child(server: FakeServer, client: rp.Client) -> None:
    client.root()  # runtime, pool and token now exist in the parent
    assert run_in_child(lambda: 0 if client.get("/").status == 200 else 2, timeout=10) == 0
    assert client.get("/").status == 200  # and the parent still works
    assert len(api_requests(server)) >= 3


@pytest.mark.usefixtures("ctrl_c")
def test_ctrl_c_interrupts_a_slow_request(server: FakeServer, client: rp.Client) -> None:
    client.authenticate()
    server.delay_next(5.0, path="/")
    timer = threading.Timer(0.3, _thread.interrupt_main)
    timer.start()
    start = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            client.root()
    finally:
        timer.cancel()
    assert time.monotonic() - start < 2.0  # the request was abandoned, not waited for
    assert client.root().status == 200  # and the client still works
