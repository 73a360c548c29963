"""A resource, its links and its embedded items are freed by reference counting, whatever was
read of them: a cycle through a resource leaves its objects to the garbage collector, whose
runs then cost every request (one follow that read a relation left 28 such objects)."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

import recurring_payments as rp
from recurring_payments.testing import FakeServer


@contextmanager
def gc_off() -> Iterator[None]:
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def read_everything(resource: Any) -> None:
    """What a caller may read of a resource, and of each embedded item."""
    resource["name"] if "name" in resource else None
    resource.url, resource.headers.get("etag"), resource.etag, resource.status
    repr(resource), dir(resource), list(resource.links), resource.data
    for rel in resource.links:
        resource.links[rel]
    for name in set(dir(resource)) - set(dir(type(resource))):  # relations as attributes
        getattr(resource, name)
    for rel in resource.embedded:
        items = resource.embedded[rel]
        for item in items if isinstance(items, list) else [items]:
            item.links, item.url, repr(item), list(item)


def leftover(follow: Callable[[], Any]) -> int:
    """Objects only the GC could free after 50 follows whose resources were read whole."""
    with gc_off():
        for _ in range(50):
            read_everything(follow())
        return gc.collect()


def test_a_read_resource_leaves_no_cycle(demo_client: rp.Client) -> None:
    creditor = demo_client.get_creditors
    assert leftover(lambda: creditor(reference="democreditor")) == 0
    page = demo_client.get_mandates
    assert leftover(lambda: page(creditorReference="democreditor")) == 0
    # The root: CURIE'd relations, read as attributes too.
    assert leftover(demo_client.root) == 0


def test_an_async_read_resource_leaves_no_cycle(demo: FakeServer) -> None:
    async def main() -> tuple[int, int]:
        async with demo.async_client() as client:
            creditor = await client.get_creditors.link()
            first = await creditor(reference="democreditor")  # warm: token, pools, caches
            read_everything(first)
            del first
            with gc_off():
                for _ in range(50):
                    read_everything(await creditor(reference="democreditor"))
                plain = gc.collect()
            with gc_off():
                for _ in range(50):
                    page = await client.get_mandates(creditorReference="democreditor")
                    read_everything(page)
                    del page
                paged = gc.collect()
            return plain, paged

    assert asyncio.run(main()) == (0, 0)


def test_what_holds_no_python_object_is_not_tracked_by_the_collector(
    demo_client: rp.Client,
) -> None:
    # A page of 5,000 items used to put 10,000 objects in front of every collection; the
    # items' documents, `_links` views and response headers reference no Python container.
    page = demo_client.get_mandates(creditorReference="democreditor")
    item = page.embedded["mandates"][0]
    assert not gc.is_tracked(page._headers)  # the reply's native header pairs, not yet read
    item["reference"], page.links, item.links
    assert not gc.is_tracked(item._doc)
    assert not gc.is_tracked(item._doc.get("_links"))
    # A document with `_embedded` keeps a dict of its items' documents: it stays tracked, so a
    # cycle through that dict (only reachable through private members) is still collected.
    assert gc.is_tracked(page._doc)

    class Holder:
        pass

    holder = Holder()
    holder.doc = page._doc  # type: ignore[attr-defined]
    page._doc.get("_embedded")["held"] = holder  # the kept dict: doc -> dict -> holder -> doc
    seen = weakref.ref(holder)
    del holder, page, item
    gc.collect()
    assert seen() is None


# -- a page's items are not tracked by the collector until they keep objects -----------------

PAGE = {
    "_links": {"self": {"href": "/things"}},
    "_embedded": {
        "things": [
            {
                "id": n,
                "_links": {
                    "self": {"href": f"/things/{n}"},
                    "owner": {"href": "/owners/1"},
                    "tags": [{"href": "/tags/a"}, {"href": "/tags/b"}],
                },
                "_embedded": {"parts": [{"id": 1, "_links": {"owner": {"href": "/owners/2"}}}]},
            }
            for n in range(50)
        ]
    },
}


@pytest.fixture
def things(server: FakeServer, client: rp.Client) -> Callable[[], list[Any]]:
    server.add_resource("/things", PAGE)
    return lambda: client.get("/things").embedded["things"]  # type: ignore[no-any-return]


def test_a_pages_items_put_nothing_in_front_of_the_collector(
    server: FakeServer, client: rp.Client
) -> None:
    # 5,000 tracked items made each page trigger ~7 collections that traverse them and
    # promote them, then full collections of the whole heap (BENCHMARKS.md). Items without
    # `_embedded`: their documents are not tracked either (the test above).
    flat = [
        {k: v for k, v in item.items() if k != "_embedded"} for item in PAGE["_embedded"]["things"]
    ]
    server.add_resource("/flat", {"_embedded": {"things": flat}})
    client.get("/flat").embedded["things"]  # warm: token, caches
    with gc_off():
        before = len(gc.get_objects())
        items = client.get("/flat").embedded["things"]
        made = len(gc.get_objects()) - before
    assert len(items) == 50 and made < 10
    assert not any(gc.is_tracked(item) for item in items)
    assert [item["id"] for item in items] == list(range(50))  # fields: still untracked
    assert not any(gc.is_tracked(item) for item in items)


@pytest.mark.parametrize(
    "keep",
    [
        pytest.param(lambda item: item.links, id="links"),
        pytest.param(lambda item: item.embedded, id="embedded"),
        pytest.param(lambda item: item.owner, id="a relation as an attribute"),
        pytest.param(lambda item: item.links["tags"], id="an array of links"),
    ],
)
def test_an_item_is_tracked_before_it_keeps_anything(
    things: Callable[[], list[Any]], keep: Callable[[Any], Any]
) -> None:
    item = things()[0]
    keep(item)
    assert gc.is_tracked(item)


class Holder:
    pass


@pytest.mark.parametrize(
    "close",
    [
        # item -> its attributes -> the link -> holder -> item
        pytest.param(lambda item, holder: setattr(item.owner, "title", holder), id="attribute"),
        # item -> its links -> the link -> holder -> item
        pytest.param(
            lambda item, holder: setattr(item.links["owner"], "title", holder), id="links"
        ),
        # item -> its embedded -> the part -> its attributes -> the link -> holder -> item
        pytest.param(
            lambda item, holder: setattr(item.embedded["parts"][0].owner, "title", holder),
            id="embedded",
        ),
    ],
)
def test_a_cycle_through_what_an_item_keeps_is_collected(
    things: Callable[[], list[Any]], close: Callable[[Any, Holder], None]
) -> None:
    # Were the item left untracked, the collector would count its references as from outside
    # and keep the whole cycle forever.
    items = things()
    holder = Holder()
    holder.item = items[0]  # type: ignore[attr-defined]
    close(items[0], holder)
    seen = weakref.ref(holder)
    del holder, items
    gc.collect()
    assert seen() is None


def test_the_items_of_a_subclass_with_room_for_more_stay_tracked(
    server: FakeServer, client: rp.Client
) -> None:
    class Noted(rp.Resource):  # a `__dict__`: an instance may keep anything
        pass

    server.add_resource("/things", PAGE)
    page = client.get("/things")
    items = Noted(page._session, page._doc).embedded["things"]
    assert all(type(item) is Noted and gc.is_tracked(item) for item in items)
    holder = Holder()
    holder.item = items[0]  # type: ignore[attr-defined]
    items[0].holder = holder  # item -> its __dict__ -> holder -> item
    seen = weakref.ref(holder)
    del holder, items
    gc.collect()
    assert seen() is None


def test_an_async_pages_items_are_not_tracked_until_they_keep_anything(
    server: FakeServer,
) -> None:
    server.add_resource("/things", PAGE)

    async def main() -> tuple[bool, bool]:
        async with server.async_client() as client:
            items = (await client.get("/things")).embedded["things"]
            untracked = not any(gc.is_tracked(item) for item in items)
            assert "self" in items[0].links
            return untracked, gc.is_tracked(items[0])

    assert asyncio.run(main()) == (True, True)


def test_an_item_of_an_array_is_what_a_single_embedded_resource_is(
    server: FakeServer, client: rp.Client
) -> None:
    # The items of an array are made in the core (`_items`), a single one in Python (`_item`).
    thing = PAGE["_embedded"]["things"][3]  # type: ignore[index]
    server.add_resource("/both", {"_embedded": {"many": [thing], "one": thing}})
    page = client.get("/both")
    [many], one = page.embedded["many"], page.embedded["one"]
    assert type(many) is type(one) is rp.Resource
    for read in (
        lambda r: (r.partial, r.status, dict(r.headers), r.etag, r.url),
        lambda r: (dict(r), r.data, repr(r), list(r.links), list(r.embedded)),
        lambda r: (r.owner.href, [link.href for link in r.links["tags"]]),
        lambda r: [part["id"] for part in r.embedded["parts"]],
    ):
        assert read(many) == read(one)
