"""Errors in public names: a bad call of a constructor, `from_env` or `with_options` names
`Client`/`AsyncClient` (never the shared base class), and a positional argument to a link says
that template variables are keyword arguments, naming them. Both faces."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import pytest
from conftest import api_requests

import recurring_payments as rp
from recurring_payments.testing import FakeServer

CLIENTS = [rp.Client, rp.AsyncClient]


@pytest.mark.parametrize("cls", CLIENTS, ids=lambda c: c.__name__)
def test_constructor_errors_name_the_public_class(cls: Any) -> None:
    name = cls.__name__
    with pytest.raises(TypeError) as caught:
        cls("https://api.example.com")
    assert str(caught.value) == (
        f"{name}.__init__() missing 2 required keyword-only arguments: 'credentials' and 'profile'"
    )
    with pytest.raises(TypeError, match=rf"^{name}\.__init__\(\) got an unexpected keyword"):
        cls("https://api.example.com", credentials=None, profile="p", verify_ssl=False)
    with pytest.raises(TypeError, match=rf"^{name}\.__init__\(\) takes 2 positional arguments"):
        cls("https://api.example.com", rp.AppCredentials("a", "b"))
    with pytest.raises(TypeError, match=rf"^{name}\.from_env\(\) takes from 1 to 2 positional"):
        cls.from_env("SHOP_", "extra")


@pytest.mark.parametrize("cls", CLIENTS, ids=lambda c: c.__name__)
def test_with_options_errors_name_the_public_class(server: FakeServer, cls: Any) -> None:
    client = cls(server.base_url, credentials=server.credentials, profile=server.profile)
    try:
        with pytest.raises(TypeError) as caught:
            client.with_options(verify=False)
        assert str(caught.value) == (
            f"{cls.__name__}.with_options() got an unexpected keyword argument 'verify'"
        )
        with pytest.raises(TypeError, match=rf"^{cls.__name__}\.with_options\(\) takes 1 "):
            client.with_options(5)
    finally:
        if cls is rp.Client:
            client.close()
        else:
            asyncio.run(client.aclose())
    assert server.requests == []


def test_the_shared_code_keeps_its_signature_and_help() -> None:
    for cls in CLIENTS:
        assert cls.__init__.__qualname__ == f"{cls.__name__}.__init__"
        assert cls.with_options.__doc__ and "total_timeout" in cls.with_options.__doc__
    assert inspect.signature(rp.Client) == inspect.signature(rp.AsyncClient)
    assert "credentials" in inspect.signature(rp.Client).parameters


GET_CREDITORS = "get_creditors takes template variables as keyword arguments: "


def test_a_positional_argument_to_a_link_names_its_variables(
    demo: FakeServer, demo_client: rp.Client
) -> None:
    root = demo_client.root()
    demo.clear_requests()
    with pytest.raises(TypeError) as caught:
        demo_client.get_creditors("democreditor")
    assert str(caught.value) == GET_CREDITORS + "get_creditors(reference=...)"
    with pytest.raises(TypeError) as caught:
        demo_client.get_creditors.get("democreditor")
    assert str(caught.value) == (
        "get_creditors.get takes template variables as keyword arguments: "
        "get_creditors.get(reference=...)"
    )
    with pytest.raises(TypeError) as caught:
        root.follow("get-creditors", "democreditor")
    assert str(caught.value) == (
        "follow takes template variables as keyword arguments: "
        "follow('get-creditors', reference=...)"
    )
    with pytest.raises(TypeError, match=r"search_mandates\(creditorReference=\.\.\., entity"):
        demo_client.search_mandates("democreditor")
    with pytest.raises(TypeError) as caught:
        demo_client.create_orders({"reference": "o-1"})
    assert str(caught.value) == (
        "create_orders takes no template variables: link 'create-orders' is not templated"
    )
    assert demo.requests == []  # nothing sent
    # A body stays positional.
    assert demo_client.create_orders.post({"reference": "o-1"}).status == 201


@pytest.mark.asyncio
async def test_async_a_positional_argument_to_a_link_names_its_variables(
    demo: FakeServer,
) -> None:
    async with demo.async_client() as client:
        with pytest.raises(TypeError) as caught:
            await client.get_creditors("democreditor")
        assert str(caught.value) == GET_CREDITORS + "get_creditors(reference=...)"
        with pytest.raises(TypeError, match=r"^get_creditors\.get takes template variables"):
            await client.get_creditors.get("democreditor")
        link = await client.get_creditors.link()
        root = await client.root()
        demo.clear_requests()
        with pytest.raises(TypeError) as caught:
            await link("democreditor")
        assert str(caught.value) == GET_CREDITORS + "get_creditors(reference=...)"
        with pytest.raises(TypeError, match=r"get_creditors\.get\(reference=\.\.\.\)$"):
            await link.get("democreditor")
        with pytest.raises(TypeError, match=r"follow\('get-creditors', reference=\.\.\.\)$"):
            await root.follow("get-creditors", "democreditor")
        assert api_requests(demo) == []
        created = await client.create_orders.post({"reference": "o-1"})
        assert created.status == 201
