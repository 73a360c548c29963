"""pytest plugin (entry point ``pytest11``): fixtures for testing code that uses the API."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ._async_client import AsyncClient
from ._client import Client
from .testing import FakeServer


@pytest.fixture
def rp_server() -> Iterator[FakeServer]:
    """A started :class:`~recurring_payments.testing.FakeServer`, stopped after the test."""
    with FakeServer() as server:
        yield server


@pytest.fixture
def rp_client(rp_server: FakeServer) -> Iterator[Client]:
    """A :class:`recurring_payments.Client` wired to ``rp_server``, closed after the test."""
    with rp_server.client() as client:
        yield client


@pytest.fixture
def rp_demo_server() -> Iterator[FakeServer]:
    """A started ``FakeServer(demo=True)``: the API's relations with a demo creditor
    (``democreditor``), its mandates and orders; stopped after the test.

    To test your app's views against it, point the app's settings at it for the test: the
    ``RECURRING_PAYMENTS_*`` variables that ``Client.from_env()`` reads (``monkeypatch.setenv``,
    with ``base_url``, ``profile`` and ``credentials``), or your framework's settings; then
    forget the app's shared client after the test (docs/guides/testing.md)::

        def test_checkout(rp_demo_server):
            client = rp_demo_server.client()
            order = client.create_orders.post({"reference": "o-1", "started": True})
            assert order.status == 201
    """
    with FakeServer(demo=True) as server:
        yield server


@pytest.fixture
def rp_demo_client(rp_demo_server: FakeServer) -> Iterator[Client]:
    """A :class:`recurring_payments.Client` wired to ``rp_demo_server``, closed after the test."""
    with rp_demo_server.client() as client:
        yield client


@pytest.fixture
def rp_async_client(rp_server: FakeServer) -> Iterator[AsyncClient]:
    """A :class:`recurring_payments.AsyncClient` wired to ``rp_server``, closed after the test.

    It is a plain fixture (the client binds to no event loop), so any asyncio test runner can
    use it: pytest-asyncio (``@pytest.mark.asyncio``) or anyio (``@pytest.mark.anyio`` with
    the ``asyncio`` backend; the client does not run on trio)::

        @pytest.mark.asyncio
        async def test_thing(rp_server, rp_async_client):
            rp_server.add_link("get-thing", "/things/{id}", templated=True)
            rp_server.add_resource("/things/1", {"id": 1})
            thing = await rp_async_client.get_thing(id=1)
    """
    client = rp_server.async_client()
    try:
        yield client
    finally:
        client._close()  # what aclose() does, without needing a loop at teardown
