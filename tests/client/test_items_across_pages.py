"""Items across pages (docs/guarantees.md#pages-end): `res.all(rel)` gives the resources embedded
under `rel` on this page and on each `next` page, lazily (one GET per further page, each its own
call), on both faces. A `next` link back to a page already seen stops with `ProtocolError`."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from conftest import api_requests

import recurring_payments as rp
from recurring_payments.testing import FakeServer

FACES = ["sync", "async"]


def add_pages(server: FakeServer, rel: str = "items", *, loop_to: str | None = None) -> None:
    """/p/1 (two items, an array) -> /p/2 (one item, an object) -> /p/3 (nothing embedded),
    whose `next` is `loop_to` when given."""
    ns = server.rel_namespace
    item = lambda n: {"n": n, "_links": {"self": {"href": f"/items/{n}"}}}  # noqa: E731
    server.add_resource(
        "/p/1",
        {
            "page": 1,
            "_links": {"self": {"href": "/p/1"}, "next": {"href": "/p/2"}},
            "_embedded": {ns + rel: [item(1), item(2)], ns + "other": [item(99)]},
        },
    )
    server.add_resource(
        "/p/2",
        {
            "page": 2,
            "_links": {"self": {"href": "/p/2"}, "next": [{"href": "/p/3"}]},
            "_embedded": {ns + rel: item(3)},
        },
    )
    last: dict[str, Any] = {"page": 3, "_links": {"self": {"href": "/p/3"}}}
    if loop_to is not None:
        last["_links"]["next"] = {"href": loop_to}
    server.add_resource("/p/3", last)


def collect(face: str, server: FakeServer, start: str, rel: str, **settings: Any) -> list[Any]:
    """Every item of `all(rel)` from the page at `start`, through a fresh client of `face`."""
    if face == "sync":
        with server.client(**settings) as client:
            return list(client.get(start).all(rel))

    async def run() -> list[Any]:
        async with server.async_client(**settings) as client:
            first = await client.get(start)
            return [item async for item in first.all(rel)]

    return asyncio.run(run())


def paths(server: FakeServer) -> list[str]:
    return [r.path for r in api_requests(server)]


@pytest.mark.parametrize("face", FACES)
def test_items_of_every_page_arrays_and_single_resources(server: FakeServer, face: str) -> None:
    add_pages(server)
    items = collect(face, server, "/p/1", "items")
    assert [item["n"] for item in items] == [1, 2, 3]
    assert all(item.partial for item in items)
    assert paths(server) == ["/p/1", "/p/2", "/p/3"]  # one GET per page


@pytest.mark.parametrize("face", FACES)
def test_the_relation_is_named_as_anywhere(server: FakeServer, face: str) -> None:
    add_pages(server)
    full = server.rel_namespace + "items"
    assert [i["n"] for i in collect(face, server, "/p/1", full)] == [1, 2, 3]
    # An unknown relation gives nothing (every page lacks it).
    assert collect(face, server, "/p/1", "nothing-here") == []
    # `other` is only on the first page.
    assert [i["n"] for i in collect(face, server, "/p/1", "other")] == [99]


@pytest.mark.parametrize("face", FACES)
@pytest.mark.parametrize("misspelt", ["item", "itmes", "Items"])
def test_a_misspelt_relation_raises_before_fetching_more(
    server: FakeServer, face: str, misspelt: str
) -> None:
    add_pages(server)
    with server.client() as client:
        with pytest.raises(rp.LinkNotFoundError) as expected:
            client.get("/p/1").embedded[misspelt]
    server.clear_requests()
    with pytest.raises(rp.LinkNotFoundError) as caught:
        collect(face, server, "/p/1", misspelt)
    assert str(caught.value) == str(expected.value)
    assert "did you mean 'items'?" in str(caught.value)
    assert paths(server) == ["/p/1"]  # nothing fetched after the page that showed it


@pytest.mark.attack("hal")
@pytest.mark.parametrize("face", FACES)
def test_curies_and_ambiguous_short_names(server: FakeServer, face: str) -> None:
    curies = [{"name": "ex", "href": "https://rels.example/{rel}", "templated": True}]
    server.add_resource(
        "/c",
        {
            "_links": {"self": {"href": "/c"}, "curies": curies},
            "_embedded": {
                "ex:thing": [{"id": 1}],
                "https://a.example/alps#dup": [{"id": 2}],
                "https://b.example/alps#dup": [{"id": 3}],
            },
        },
    )
    for name in ("ex:thing", "https://rels.example/thing", "thing"):
        found = collect(face, server, "/c", name, rel_namespace=None)
        assert [i["id"] for i in found] == [1], name
    assert [i["id"] for i in collect(face, server, "/c", "https://b.example/alps#dup")] == [3]
    with pytest.raises(
        rp.LinkNotFoundError, match=r"a\.example.*b\.example|b\.example.*a\.example"
    ):
        collect(face, server, "/c", "dup", rel_namespace=None)


def test_it_is_lazy_and_breaking_out_fetches_nothing_more(demo: FakeServer) -> None:
    with demo.client() as client:
        first = client.get_creditors(reference="democreditor").get_mandates(size=50)
        demo.clear_requests()
        items = first.all("mandates")
        assert api_requests(demo) == []  # nothing before the loop asks
        taken = [next(items) for _ in range(50)]  # the whole first page: still nothing
        assert api_requests(demo) == [] and taken[-1]["reference"] == "MND-0050"
        assert next(items)["reference"] == "MND-0051"  # the 51st: one GET, the second page
        assert len(api_requests(demo)) == 1
        for mandate in items:  # break mid-page
            if mandate["reference"] == "MND-0060":
                break
        items.close()
        assert len(api_requests(demo)) == 1  # nothing more was fetched


@pytest.mark.asyncio
async def test_async_it_is_lazy_and_breaking_out_fetches_nothing_more(demo: FakeServer) -> None:
    async with demo.async_client() as client:
        creditor = await client.get_creditors(reference="democreditor")
        first = await creditor.get_mandates(size=50)
        demo.clear_requests()
        items: AsyncIterator[rp.AsyncResource] = first.all("mandates")
        seen = []
        async for mandate in items:
            seen.append(mandate["reference"])
            if len(seen) == 50:
                assert api_requests(demo) == []
            if len(seen) == 55:
                break
        assert seen[-1] == "MND-0055"
        assert len(api_requests(demo)) == 1
        await asyncio.sleep(0.05)
        assert len(api_requests(demo)) == 1


@pytest.mark.parametrize("face", FACES)
def test_each_page_is_its_own_call_with_its_own_deadline(demo: FakeServer, face: str) -> None:
    # Each page takes 0.4 s, the deadline of a call is 0.7 s: the walk (three pages) takes
    # longer than one deadline and still completes.
    demo.delay_next(0.4, count=3, path="/mandates")
    started = time.monotonic()
    if face == "sync":
        with demo.client(total_timeout=0.7, retries=0) as client:
            first = client.get_creditors(reference="democreditor").get_mandates(size=50)
            references = [m["reference"] for m in first.all("mandates")]
    else:

        async def run() -> list[str]:
            async with demo.async_client(total_timeout=0.7, retries=0) as client:
                creditor = await client.get_creditors(reference="democreditor")
                first = await creditor.get_mandates(size=50)
                return [m["reference"] async for m in first.all("mandates")]

        references = asyncio.run(run())
    assert len(references) == 120 and time.monotonic() - started >= 1.2


@pytest.mark.attack("hal")
@pytest.mark.parametrize("face", FACES)
@pytest.mark.parametrize("loop_to", ["/p/3", "/p/1", "/p/2"])
def test_a_next_link_back_to_a_page_seen_is_a_protocol_error(
    server: FakeServer, face: str, loop_to: str
) -> None:
    add_pages(server, loop_to=loop_to)
    with pytest.raises(rp.ProtocolError, match="pagination loops back to") as caught:
        collect(face, server, "/p/1", "items")
    assert caught.value.url == server.base_url + loop_to
    # Bounded: each page was fetched once, none again.
    assert paths(server) == ["/p/1", "/p/2", "/p/3"]


@pytest.mark.attack("hal")
@pytest.mark.parametrize("face", FACES)
def test_pages_stops_at_a_loop_to_itself_before_fetching_it_again(
    server: FakeServer, face: str
) -> None:
    server.add_resource(
        "/self-loop", {"_links": {"self": {"href": "/self-loop"}, "next": {"href": "/self-loop"}}}
    )
    with pytest.raises(rp.ProtocolError, match="loops back"):
        collect(face, server, "/self-loop", "items")
    assert paths(server) == ["/self-loop"]


@pytest.mark.parametrize("face", FACES)
def test_rel_must_be_a_str(server: FakeServer, face: str) -> None:
    add_pages(server)
    with pytest.raises(TypeError, match="rel must be a str"):
        collect(face, server, "/p/1", 1)  # type: ignore[arg-type]


def test_the_iterators_are_typed(demo_client: rp.Client) -> None:
    page = demo_client.get_creditors(reference="democreditor").get_mandates(size=5)
    assert isinstance(page.all("mandates"), Iterator)
