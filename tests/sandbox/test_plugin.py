"""The pytest plugin's fixtures, as a user's test suite gets them from `pip install`."""

from __future__ import annotations

import pytest

import recurring_payments as rp
from recurring_payments.testing import FakeServer


def test_rp_client_is_wired_to_rp_server(rp_server: FakeServer, rp_client: rp.Client) -> None:
    rp_server.add_resource("/things/1", {"id": 1, "_links": {"self": {"href": "/things/1"}}})
    thing = rp_client.get("/things/1")
    assert thing["id"] == 1 and thing.url == f"{rp_server.base_url}/things/1"
    assert len(rp_server.token_requests) == 1


@pytest.mark.asyncio
async def test_rp_async_client_is_wired_to_rp_server(
    rp_server: FakeServer, rp_async_client: rp.AsyncClient
) -> None:
    rp_server.add_link("get-thing", "/things/{id}", templated=True)
    rp_server.add_resource("/things/1", {"id": 1, "_links": {"self": {"href": "/things/1"}}})
    thing = await rp_async_client.get_thing(id=1)
    assert isinstance(thing, rp.AsyncResource)
    assert thing["id"] == 1 and thing.url == f"{rp_server.base_url}/things/1"
    assert len(rp_server.token_requests) == 1


def test_rp_demo_client_is_wired_to_the_demo_server(
    rp_demo_server: FakeServer, rp_demo_client: rp.Client
) -> None:
    assert rp_demo_server.demo and rp_demo_server.running
    creditor = rp_demo_client.get_creditors(reference="democreditor")
    assert creditor["name"] == "Demo Creditor SAS"
    order = rp_demo_client.create_orders.post({"reference": "o-1", "started": True})
    assert order.url is not None and order.url.startswith(rp_demo_server.base_url)
    assert len(rp_demo_server.token_requests) == 1


def test_the_demo_and_the_empty_server_are_two_servers(
    rp_server: FakeServer, rp_demo_server: FakeServer
) -> None:
    assert rp_server.base_url != rp_demo_server.base_url
    assert not rp_server.demo and rp_demo_server.demo
