"""A link's template is parsed once and kept with the link: each call still expands its own
values and runs every check (docs/guarantees.md#template-values), the same link object called
again and again, with good values and bad ones, copied, re-pointed at another href, or read
from a resource that travelled."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import api_requests

import recurring_payments as rp
from recurring_payments.testing import FakeServer


@pytest.fixture(params=[False, True], ids=["untraced", "traced"])
def client(server: FakeServer, request: pytest.FixtureRequest) -> Iterator[rp.Client]:
    """Both ways a sync link call runs: in the native call alone (no span to record), and
    through the link's Python method with a span (the tests' SDK records them)."""
    with server.client(telemetry=request.param) as client:
        yield client


@pytest.fixture
def orders(server: FakeServer) -> FakeServer:
    """Entry-point links to templated order URLs (one malformed); every order route answers."""
    server.add_link("cancel-order", "/orders/{id}/cancel", templated=True)
    server.add_link("creditor-orders", "/creditors/{ref}/orders{?page}", templated=True)
    server.add_link("broken-order", "/orders/{id", templated=True)
    for path in ("/orders/{id}/cancel", "/creditors/{ref}/orders"):
        server.route("GET", path, lambda request: {"path": full_path(request)})
    return server


def full_path(request: Any) -> str:
    """The path and query a request was sent to."""
    query = request.query_string
    return f"{request.path}?{query}" if query else str(request.path)


# (variables, what the request's path and query are): one link, called with each in turn.
GOOD: list[tuple[dict[str, Any], str]] = [
    ({"id": "a-1"}, "/orders/a-1/cancel"),
    ({"id": 7}, "/orders/7/cancel"),
    ({"id": "é x/y"}, "/orders/%C3%A9%20x%2Fy/cancel"),
    ({"id": "a-1"}, "/orders/a-1/cancel"),
]

# (variables, the error, its message): refused before anything is sent, on a link whose
# template was parsed by earlier calls.
BAD: list[tuple[dict[str, Any], type[Exception], str]] = [
    ({"id": ".."}, rp.TemplateError, "variable 'id' is '..'"),
    ({"id": None}, TypeError, "variable 'id' is None"),
    ({}, TypeError, "variable 'id' is missing"),
    ({"id": "x", "ref": "y"}, TypeError, r"unexpected variable\(s\) 'ref'; it declares id"),
    ({"id": object()}, TypeError, "URI template values must be"),
]


def sent_paths(server: FakeServer) -> list[str]:
    return [full_path(r) for r in api_requests(server) if r.path != "/"]


def test_one_link_expands_the_values_of_each_call(orders: FakeServer, client: rp.Client) -> None:
    link = client.root().links["cancel-order"]
    orders.clear_requests()
    for variables, path in GOOD:
        assert link(**variables)["path"] == path
        for bad, error, message in BAD:
            with pytest.raises(error, match=message):
                link(**bad)
    assert sent_paths(orders) == [path for _, path in GOOD]


@pytest.mark.asyncio
async def test_one_async_link_expands_the_values_of_each_call(
    orders: FakeServer, aclient: rp.AsyncClient
) -> None:
    link = await aclient.cancel_order.link()
    orders.clear_requests()
    for variables, path in GOOD:
        assert (await link(**variables))["path"] == path
        for bad, error, message in BAD:
            with pytest.raises(error, match=message):
                await link(**bad)
    assert sent_paths(orders) == [path for _, path in GOOD]


def test_a_malformed_template_fails_on_every_call(orders: FakeServer, client: rp.Client) -> None:
    link = client.root().links["broken-order"]
    orders.clear_requests()
    for _ in range(3):
        with pytest.raises(rp.TemplateError, match="unclosed '\\{'"):
            link(id="a")
        # A value that cannot be converted is reported first, as before the template is read.
        with pytest.raises(TypeError, match="URI template values must be"):
            link(id=object())
    assert orders.requests == []


@pytest.mark.asyncio
async def test_a_malformed_async_template_fails_on_every_call(
    orders: FakeServer, aclient: rp.AsyncClient
) -> None:
    link = (await aclient.root()).links["broken-order"]
    orders.clear_requests()
    for _ in range(3):
        with pytest.raises(rp.TemplateError, match="unclosed '\\{'"):
            await link(id="a")
    assert orders.requests == []


def test_a_link_given_another_href_is_called_at_it(orders: FakeServer, client: rp.Client) -> None:
    link = client.root().links["cancel-order"]
    assert link(id="a")["path"] == "/orders/a/cancel"
    assert link.variables == ["id"]
    link.href = link.href.replace("/orders/{id}/cancel", "/creditors/{ref}/orders{?page}")
    assert link.variables == ["ref", "page"]
    assert link(ref="r", page=2)["path"] == "/creditors/r/orders?page=2"
    with pytest.raises(TypeError, match="unexpected variable"):
        link(id="a")
    link.href = link.href.replace("/creditors/{ref}/orders{?page}", "/orders/{id")
    with pytest.raises(rp.TemplateError, match="unclosed '\\{'"):
        link(id="a")
    with pytest.raises(rp.TemplateError, match="unclosed '\\{'"):
        _ = link.variables
    link.href = link.href.replace("/orders/{id", "/creditors/x/orders")
    link.templated = False
    assert link.variables == []
    assert link()["path"] == "/creditors/x/orders"
    with pytest.raises(TypeError, match="not a template"):
        link(id="a")


@pytest.mark.asyncio
async def test_an_async_link_given_another_href_is_called_at_it(
    orders: FakeServer, aclient: rp.AsyncClient
) -> None:
    link = (await aclient.root()).links["cancel-order"]
    assert (await link(id="a"))["path"] == "/orders/a/cancel"
    assert link.variables == ["id"]
    link.href = link.href.replace("/orders/{id}/cancel", "/creditors/{ref}/orders{?page}")
    assert link.variables == ["ref", "page"]
    assert (await link.get(ref="r", page=2))["path"] == "/creditors/r/orders?page=2"
    with pytest.raises(TypeError, match="unexpected variable"):
        await link(id="a")
    link.href = link.href.replace("/creditors/{ref}/orders{?page}", "/orders/{id")
    with pytest.raises(rp.TemplateError, match="unclosed '\\{'"):
        await link(id="a")
    with pytest.raises(rp.TemplateError, match="unclosed '\\{'"):
        _ = link.variables
    link.href = link.href.replace("/orders/{id", "/creditors/x/orders")
    link.templated = False
    assert link.variables == []
    assert (await link())["path"] == "/creditors/x/orders"
    with pytest.raises(TypeError, match="not a template"):
        await link(id="a")


def test_a_copied_link_expands_its_own_values(orders: FakeServer, client: rp.Client) -> None:
    link = client.root().links["creditor-orders"]
    assert link(ref="a")["path"] == "/creditors/a/orders"
    twin = copy.copy(link)
    assert twin(ref="b", page=3)["path"] == "/creditors/b/orders?page=3"
    with pytest.raises(rp.TemplateError, match="variable 'ref'"):
        twin(ref=".")
    assert link(ref="c")["path"] == "/creditors/c/orders"


@pytest.mark.parametrize("travel", [pickle.loads, copy.deepcopy])
def test_the_links_of_a_resource_that_travelled_expand_their_own_values(
    orders: FakeServer, client: rp.Client, travel: Any
) -> None:
    root = client.root()
    assert root.cancel_order(id="a")["path"] == "/orders/a/cancel"
    travelled = travel(pickle.dumps(root)) if travel is pickle.loads else travel(root)
    attached = client.attach(travelled)
    assert attached.cancel_order(id="b")["path"] == "/orders/b/cancel"
    with pytest.raises(TypeError, match="variable 'id' is missing"):
        attached.cancel_order()
    assert root.cancel_order(id="c")["path"] == "/orders/c/cancel"
