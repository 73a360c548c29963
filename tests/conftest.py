"""Shared fixtures: every test talks to a sandbox server on loopback, never to the network."""

from __future__ import annotations

import asyncio
import base64
import signal
from collections.abc import Iterator
from typing import Any

import pytest
from sandbox_http import Http

import recurring_payments as rp
from recurring_payments.testing import FakeServer

# DEBUG logging for the whole run, and no secret or token in any log, error or repr (issue 8).
pytest_plugins = ["secret_watch", "attack_report"]


@pytest.fixture
def ctrl_c() -> Iterator[None]:
    """Python's own SIGINT handler for the test: a process started in the background by a
    shell without job control inherits SIGINT ignored, and then `_thread.interrupt_main()`
    (the tests' Ctrl-C) does nothing."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer() as s:
        yield s


@pytest.fixture
def demo() -> Iterator[FakeServer]:
    with FakeServer(demo=True) as s:
        yield s


@pytest.fixture
def client(server: FakeServer) -> Iterator[rp.Client]:
    with server.client() as c:
        yield c


@pytest.fixture
def aclient(server: FakeServer) -> Iterator[rp.AsyncClient]:
    client = server.async_client()
    yield client
    asyncio.run(client.aclose())


@pytest.fixture
def demo_client(demo: FakeServer) -> Iterator[rp.Client]:
    with demo.client() as c:
        yield c


def header(entry: Any, name: str) -> str | None:
    """A header of a journal entry, by case-insensitive name."""
    for key, value in dict(entry.headers).items():
        if key.lower() == name.lower():
            return str(value)
    return None


def api_requests(server: FakeServer, method: str | None = None) -> list[Any]:
    """Journal entries other than token requests."""
    return [
        r
        for r in server.requests
        if r.path != "/oauth/token" and (method is None or r.method == method)
    ]


@pytest.fixture
def http(rp_server: FakeServer) -> Http:
    """A plain urllib client of the sandbox (checks the server independently of ours)."""
    return Http(rp_server)


def basic_pairs(server: FakeServer) -> list[str]:
    """The Basic credentials (``user:secret``) of each token request the sandbox received, in
    order."""
    pairs = []
    for entry in server.token_requests:
        value = header(entry, "Authorization") or ""
        pairs.append(base64.b64decode(value.split()[1]).decode())
    return pairs
