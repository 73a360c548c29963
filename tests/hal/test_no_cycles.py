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
