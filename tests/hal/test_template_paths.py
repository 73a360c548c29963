"""Values that cannot change the path (docs/guarantees.md#template-values): a template variable's
value never changes the structure of the URL, whichever entry point expands it
(client.get/post/patch with a template, a link's call, get, post, patch and expand,
rp.expand_uri_template)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from conftest import api_requests

import recurring_payments as rp
from recurring_payments.testing import FakeServer


@pytest.fixture
def orders(server: FakeServer) -> FakeServer:
    """Entry-point links to templated order URLs; every order route answers."""
    server.add_link("cancel-order", "/orders/{id}/cancel", templated=True)
    server.add_link("creditor-orders", "/creditors/{ref}/orders", templated=True)
    for method in ("GET", "POST", "PATCH"):
        for path in ("/orders", "/cancel", "/orders/{id}/cancel", "/creditors/{ref}/orders"):
            server.route(method, path, lambda request: {"path": request.path})
    return server


DOTS = [".", "..", "%2e%2E", ".%2e"]


LINKS = {"/orders/{id}/cancel": "cancel-order", "/creditors/{ref}/orders": "creditor-orders"}


def entry_points(client: rp.Client, template: str, name: str) -> list[Callable[[Any], Any]]:
    """Every way a user expands ``template``, as ``f(value)``; through a link of the entry
    point too when it has one with that template."""
    link = client.root().links[LINKS.get(template, "self")]
    return [
        lambda v: client.get(template, **{name: v}),
        lambda v: client.post(template, {"amount": 1}, **{name: v}),
        lambda v: client.patch(template, {"amount": 1}, **{name: v}),
        lambda v: rp.expand_uri_template(template, {name: v}),
        *(
            [
                lambda v: link(**{name: v}),
                lambda v: link.get(**{name: v}),
                lambda v: link.post({"amount": 1}, **{name: v}),
                lambda v: link.patch({"amount": 1}, **{name: v}),
                lambda v: link.expand(**{name: v}),
            ]
            if template in LINKS
            else []
        ),
    ]


@pytest.mark.parametrize(
    ("template", "name"),
    [
        ("/creditors/{ref}/orders", "ref"),
        ("/orders/{id}/cancel", "id"),
        ("/orders{/id}/cancel", "id"),
        ("/orders/{+id}/cancel", "id"),
    ],
)
def test_a_dot_value_in_the_path_is_refused_before_sending(
    orders: FakeServer, client: rp.Client, template: str, name: str
) -> None:
    client.root()
    orders.clear_requests()
    dots = DOTS if "+" in template else DOTS[:2]  # `{v}` encodes `%`: `%2e` is harmless there
    for send in entry_points(client, template, name):
        for value in dots:
            with pytest.raises(rp.TemplateError, match=f"variable '{name}'") as caught:
                send(value)
            assert isinstance(caught.value, ValueError) and isinstance(caught.value, rp.Error)
            assert template in str(caught.value)  # the link's template is absolute
    assert orders.requests == []  # nothing sent, not even a token request


def test_a_dot_value_is_named_in_the_message(orders: FakeServer, client: rp.Client) -> None:
    with pytest.raises(rp.TemplateError) as caught:
        client.post("/creditors/{ref}/orders", {"amount": 1}, ref="..")
    assert str(caught.value) == (
        "URI template variable 'ref' is '..': a value cannot be '.' or '..' in the path of "
        "'/creditors/{ref}/orders', where it would address another resource"
    )
    with pytest.raises(rp.TemplateError, match=r"variable 'path' makes a '\.\.' segment"):
        client.get("{+path}/orders", path="/creditors/../admin")
    assert api_requests(orders) == []


@pytest.mark.parametrize(
    ("template", "variables"),
    [
        ("/x{/ids*}", {"ids": ["a", ".."]}),
        ("/x/{ids}", {"ids": [".."]}),
        ("/orders/{id:1}", {"id": ".."}),
        ("/orders/{+id}", {"id": "a/../../admin"}),
        ("/orders/{+id}", {"id": "a/%2E%2e/b"}),
        ("/orders/.{id}", {"id": "."}),
        ("/orders/{.id}", {"id": ""}),
        ("/orders/{?q}{id}", {"id": ".."}),
    ],
)
def test_every_way_a_value_makes_a_dot_segment_is_refused(
    client: rp.Client, server: FakeServer, template: str, variables: dict[str, Any]
) -> None:
    with pytest.raises(rp.TemplateError):
        client.get(template, **variables)
    with pytest.raises(ValueError):
        rp.expand_uri_template(template, variables)
    assert server.requests == []


@pytest.mark.parametrize(
    ("template", "variables", "path"),
    [
        # Simple expansion encodes `%` and `/`: one segment, whatever it holds.
        ("/things/{id}", {"id": "%2e%2e"}, "/things/%252e%252e"),
        ("/things/{id}", {"id": "../admin"}, "/things/..%2Fadmin"),
        ("/things/{id}", {"id": "a/b"}, "/things/a%2Fb"),
        ("/things{/id}", {"id": "a/.."}, "/things/a%2F.."),
        ("/things/{id}", {"id": "..."}, "/things/..."),
        ("/things/{id}", {"id": ".x"}, "/things/.x"),
        # Query, fragment-free label and parameter expansions never fill a path segment.
        ("/things{?q}", {"q": ".."}, "/things?q=.."),
        ("/things/x{.fmt}", {"fmt": ".."}, "/things/x..."),
        ("/things/{+id}", {"id": "a/b"}, "/things/a/b"),
    ],
)
def test_values_that_keep_the_path_are_sent_as_they_expand(
    server: FakeServer, client: rp.Client, template: str, variables: dict[str, Any], path: str
) -> None:
    server.route("GET", "/things/{id}", lambda request: {"id": request.path_params["id"]})
    server.route("GET", "/things/{a}/{b}", lambda request: {})
    server.route("GET", "/things", lambda request: {})
    for p in ("/things/x...", "/things/..."):
        server.add_resource(p, {})
    res = client.get(template, **variables)
    assert res.status == 200
    sent = api_requests(server)[-1]
    assert sent.path + (f"?{sent.query_string}" if sent.query_string else "") == path
    if "{id}" in template and "/" in variables["id"]:
        assert res["id"] == variables["id"]  # one segment holding the `/`


@pytest.mark.parametrize(
    ("template", "variables"),
    [
        ("/orders/{id}", {"id": None}),
        ("/orders/{id}/cancel", {"id": None}),
        ("/orders{/id}", {"id": None}),
        ("{+base}/orders", {"base": None}),
        ("/orders{/ids*}", {"ids": ["a", None]}),
        ("/orders/{m}", {"m": {"a": None}}),
    ],
)
def test_none_in_a_path_expansion_is_a_type_error(
    orders: FakeServer, client: rp.Client, template: str, variables: dict[str, Any]
) -> None:
    name = next(iter(variables))
    for send in (
        lambda: client.get(template, **variables),
        lambda: client.post(template, {"amount": 1}, **variables),
        lambda: client.patch(template, {"amount": 1}, **variables),
        lambda: rp.expand_uri_template(template, variables),
    ):
        with pytest.raises(TypeError, match=f"variable '{name}' is None") as caught:
            send()
        assert not isinstance(caught.value, rp.Error)
    if template == "/orders/{id}/cancel":
        link = client.cancel_order
        for call in (link, link.get, link.expand):
            with pytest.raises(TypeError, match="variable 'id' is None"):
                call(id=None)
        with pytest.raises(TypeError, match="variable 'id' is None"):
            link.post({"amount": 1}, id=None)
    assert api_requests(orders) == [] or all(r.path == "/" for r in api_requests(orders))


MISSING = [
    ("/orders/{id}/cancel", "id"),
    ("/creditors/{ref}/orders", "ref"),
    ("/orders/{+id}/cancel", "id"),
    ("{+base}/orders", "base"),
]


def without(client: rp.Client, template: str) -> list[Callable[[], Any]]:
    """Every way a user calls ``template`` with its path variable left out."""
    calls: list[Callable[[], Any]] = [
        lambda: client.get(template),
        lambda: client.post(template, {"amount": 1}),
        lambda: client.patch(template, {"amount": 1}),
    ]
    if template in LINKS:
        rel = LINKS[template].replace("-", "_")
        link = client.root().links[LINKS[template]]
        calls += [
            lambda: getattr(client, rel)(),
            link,
            link.get,
            lambda: link.post({"amount": 1}),
            lambda: link.patch({"amount": 1}),
            link.expand,
        ]
    return calls


@pytest.mark.parametrize(("template", "name"), MISSING)
def test_a_path_variable_left_out_is_a_type_error_before_sending(
    orders: FakeServer, client: rp.Client, template: str, name: str
) -> None:
    client.root()
    orders.clear_requests()
    for call in without(client, template):
        with pytest.raises(TypeError, match=f"variable '{name}' is missing") as caught:
            call()
        assert not isinstance(caught.value, rp.Error)
        assert template in str(caught.value)  # the link's template is absolute
    assert orders.requests == []  # nothing sent, not even a token request
    # The plain RFC 6570 engine leaves an undefined variable out.
    assert "{" not in rp.expand_uri_template(template, {})


def test_a_path_variable_left_out_is_named_in_the_message(client: rp.Client) -> None:
    with pytest.raises(TypeError) as caught:
        client.post("/orders/{id}/cancel{?reason}", {}, reason="late")
    assert str(caught.value) == (
        "URI template variable 'id' is missing for the path of '/orders/{id}/cancel{?reason}': "
        "a path variable needs a value (a variable is left out only in expansions such as "
        "{/id} or {?id})"
    )
    with pytest.raises(TypeError, match="variable 'id' is missing"):
        client.get("/orders/{ref,id}/cancel", ref="r-1")


def test_optional_expansions_may_be_left_out(server: FakeServer, client: rp.Client) -> None:
    server.route("GET", "/orders", lambda request: {})
    server.route("GET", "/orders/{id}", lambda request: {})
    client.get("/orders{/id}{?q}{&r}")
    client.get("/orders/x{.fmt}{;p}")
    client.get("/orders{#frag}")
    client.get("/orders{?q}/{+after}")
    sent = [r.path for r in api_requests(server)]
    assert sent == ["/orders", "/orders/x", "/orders", "/orders/"]
    assert rp.expand_uri_template("/orders/{id}/cancel", {}) == "/orders//cancel"


def test_none_in_a_query_expansion_is_left_out(server: FakeServer, client: rp.Client) -> None:
    server.route("GET", "/orders", lambda request: {})
    server.route("GET", "/orders/{id}", lambda request: {})
    client.get("/orders{?status,size}", status=None, size=10)
    client.get("/orders{?ids*}{&page}", ids=[1, None, 2], page=None)
    client.get("/orders/{id}{?page}", id=7, page=None)
    sent = [(r.path, r.query_string) for r in api_requests(server)]
    assert sent == [("/orders", "size=10"), ("/orders", "ids=1&ids=2"), ("/orders/7", "")]
    assert rp.expand_uri_template("/o/x{.fmt}{;p}", {"fmt": None, "p": None}) == "/o/x"


@pytest.mark.asyncio
async def test_async_entry_points_refuse_before_sending(
    orders: FakeServer, aclient: rp.AsyncClient
) -> None:
    with pytest.raises(rp.TemplateError, match="variable 'ref'"):
        await aclient.post("/creditors/{ref}/orders", {"amount": 1}, ref="..")
    with pytest.raises(TypeError, match="variable 'id' is None"):
        await aclient.patch("/orders/{id}/cancel", {"amount": 1}, id=None)
    with pytest.raises(rp.TemplateError, match="variable 'id'"):
        await aclient.get("/orders/{+id}/cancel", id="%2E%2E")
    assert orders.requests == []
    with pytest.raises(rp.TemplateError, match="variable 'id'"):
        await aclient.cancel_order.post({"amount": 1}, id="..")
    with pytest.raises(TypeError, match="variable 'ref' is None"):
        await aclient.creditor_orders(ref=None)
    link = await aclient.cancel_order.link()
    with pytest.raises(rp.TemplateError, match="variable 'id'"):
        await link.patch({"amount": 1}, id=".")
    with pytest.raises(TypeError, match="variable 'id' is None"):
        link.expand(id=None)
    assert [r.method for r in api_requests(orders)] == ["GET"]  # the entry point, nothing else
    res = await link.post({"amount": 1}, id="o-1")
    assert res["path"] == "/orders/o-1/cancel"


@pytest.mark.asyncio
async def test_async_entry_points_refuse_a_path_variable_left_out(
    orders: FakeServer, aclient: rp.AsyncClient
) -> None:
    link = await aclient.cancel_order.link()
    orders.clear_requests()
    for call in (
        lambda: aclient.get("/orders/{id}/cancel"),
        lambda: aclient.post("/creditors/{ref}/orders", {"amount": 1}),
        lambda: aclient.patch("{+base}/orders", {"amount": 1}),
        lambda: aclient.cancel_order(),
        lambda: aclient.cancel_order.post({"amount": 1}),
        lambda: link(),
        lambda: link.get(),
        lambda: link.post({"amount": 1}),
        lambda: link.patch({"amount": 1}),
    ):
        with pytest.raises(TypeError, match=r"variable '(id|ref|base)' is missing"):
            await call()
    with pytest.raises(TypeError, match="variable 'id' is missing"):
        link.expand()
    assert orders.requests == []  # nothing sent, not even a token request
