"""Headers, links and embedded resources are built lazily (for speed); what they show must not
change: case-insensitive folded headers, one Link object per relation, every link field."""

from __future__ import annotations

import asyncio
import json
from collections.abc import ItemsView, KeysView, Mapping, ValuesView
from typing import Any

import pytest
from conftest import api_requests

import recurring_payments as rp
from recurring_payments.testing import FakeServer


def test_headers_fold_repeats_and_ignore_case() -> None:
    headers = rp.Headers([("X-A", "1"), ("x-a", "2"), ("Set-Cookie", "a=1"), ("set-cookie", "b=2")])
    assert headers["x-A"] == "1, 2"
    assert headers["SET-COOKIE"] == "b=2"
    assert "X-a" in headers and 3 not in headers
    assert sorted(headers) == ["set-cookie", "x-a"] and len(headers) == 2
    assert repr(headers) == "Headers({'x-a': '1, 2', 'set-cookie': '***'})"
    assert dict(rp.Headers()) == {}


def test_response_headers_are_readable(server: FakeServer, client: rp.Client) -> None:
    root = client.root()
    assert root.headers["Content-Type"].startswith("application/hal+json")
    assert root.headers.get("content-type") == root.headers["CONTENT-TYPE"]


DOC = {
    "n": 1,
    "_links": {
        "self": {"href": "/doc"},
        "plain": {"href": "/plain"},
        "described": {
            "href": "/things/{id}",
            "templated": True,
            "title": "A thing",
            "name": "thing",
            "type": "application/hal+json",
            "profile": "https://p",
            "hreflang": "en",
            "deprecation": 7,  # not a string: ignored
        },
        "many": [{"href": "/m/1"}, {"href": "/m/2", "title": "two"}],
    },
    "_embedded": {
        "items": [{"k": 1, "_links": {"self": {"href": "/i/1"}}}, {"k": 2}],
        "one": {"k": 3},
    },
}


def test_links_are_built_once_with_every_field(server: FakeServer, client: rp.Client) -> None:
    server.add_resource("/doc", DOC)
    doc = client.get("/doc")
    assert doc.links["plain"] is doc.links["plain"] and doc.plain is doc.links["plain"]
    plain = doc.plain
    assert (plain.href, plain.templated, plain.title, plain.name) == ("/plain", False, None, None)
    described = doc.described
    assert (described.title, described.name, described.type) == (
        "A thing",
        "thing",
        "application/hal+json",
    )
    assert (described.profile, described.hreflang, described.deprecation) == (
        "https://p",
        "en",
        None,
    )
    assert described.templated and described.variables == ["id"]
    assert [link.title for link in doc.links["many"]] == [None, "two"]
    assert list(doc.links) == ["self", "plain", "described", "many"] and len(doc.links) == 4
    assert "plain" in doc.links and "nothing" not in doc.links


LINKS_READ_BY_THE_CORE = {
    "_links": {
        "self": {"href": "/doc2"},
        "tpl": {"templated": True, "href": "/t/{id}"},
        "off": {"href": "/o", "templated": False},
        "escaped": {"href": '/caf\u00e9/"q"'},
        "titled": {"href": "/titled", "title": "T"},
        "twice": {"href": "/b"},  # sent as {"href": "/a", "href": "/b"} (below)
        "one": [{"href": "/one"}],
        "both": {"href": "/both"},
    },
    "_embedded": {"both": {"k": 1}, "inner": {"k": 2}},
}


@pytest.mark.parametrize("face", ["sync", "async"])
def test_a_link_read_as_an_attribute_first_is_the_one_of_the_map(
    server: FakeServer, face: str
) -> None:
    """`res.<rel>` on a fresh response builds its link in one call into the core when the
    link object holds `href` and `templated` alone (BENCHMARKS.md); read first as an
    attribute or first from `links`, it is the same object with the same fields."""
    # A repeated member: the last one counts, as in the dict of the same text.
    text = json.dumps(LINKS_READ_BY_THE_CORE)
    text = text.replace('"twice": {"href": "/b"}', '"twice": {"href": "/a", "href": "/b"}')
    server.respond_next(text, path="/doc2", count=2)

    def fields(link: Any) -> tuple[Any, ...]:
        names = ("rel", "href", "templated", "title", "name", "type", "profile", "deprecation")
        return (type(link), *(getattr(link, n) for n in names), link.variables, repr(link))

    async def fetch_async() -> tuple[Any, Any]:
        async with server.async_client() as client:
            return await client.get("/doc2"), await client.get("/doc2")

    if face == "sync":
        with server.client() as client:
            first, second = client.get("/doc2"), client.get("/doc2")
    else:
        first, second = asyncio.run(fetch_async())
    rels = ["tpl", "off", "escaped", "titled", "twice", "both"]
    by_attribute = {rel: getattr(first, rel) for rel in rels}  # attribute first
    assert all(by_attribute[rel] is first.links[rel] for rel in rels)
    by_map = {rel: second.links[rel] for rel in rels}  # the map first
    assert all(by_map[rel] is getattr(second, rel) for rel in rels)
    assert {r: fields(v) for r, v in by_attribute.items()} == {
        r: fields(v) for r, v in by_map.items()
    }
    tpl, escaped = by_attribute["tpl"], by_attribute["escaped"]
    assert (tpl.href, tpl.templated, tpl.variables) == ("/t/{id}", True, ["id"])
    assert escaped.href == '/café/"q"' and by_attribute["off"].templated is False
    assert by_attribute["titled"].title == "T" and by_attribute["twice"].href == "/b"
    # An array stays a list; a rel both linked and embedded is the link; embedded alone, the
    # resource.
    assert [link.href for link in first.one] == ["/one"] and first.one is not first.one
    assert by_attribute["both"].href == "/both" and first.inner["k"] == 2
    with pytest.raises(rp.LinkNotFoundError, match="tpl"):
        first.tlp  # noqa: B018 (the did-you-mean names the near one)


@pytest.mark.parametrize(
    ("link", "expected"),
    [
        ({"href": "/p"}, ("/p", False, None)),
        ({"templated": True, "href": "/t/{id}"}, ("/t/{id}", True, None)),
        ({"href": "/f", "templated": False}, ("/f", False, None)),
        ({"href": "/t", "title": "T"}, ("/t", False, "T")),
        ({"href": "/e", "templated": True, "title": 3}, ("/e", True, None)),
    ],
)
def test_a_link_from_the_map_has_the_fields_of_its_object(
    server: FakeServer, client: rp.Client, link: dict[str, Any], expected: tuple[Any, ...]
) -> None:
    # `links[rel]` reads a link object of `href` and `templated` alone in the core and any
    # other whole: the fields are the same either way.
    server.add_resource("/one-link", {"_links": {"it": link}})
    it = client.get("/one-link").links["it"]
    assert (it.href, it.templated, it.title) == expected
    assert (it.rel, it.name, it.type, it.profile, it.deprecation) == ("it", None, None, None, None)


def test_embedded_are_built_once_and_partial(server: FakeServer, client: rp.Client) -> None:
    server.add_resource("/doc", DOC)
    doc = client.get("/doc")
    items = doc.embedded["items"]
    # Each resource is built once; the list holding them is new on each read (immutability).
    assert items == doc.embedded["items"] and items is not doc.embedded["items"]
    assert all(a is b for a, b in zip(items, doc.embedded["items"], strict=True))
    assert doc.one is doc.embedded["one"]
    assert [item["k"] for item in items] == [1, 2]
    assert all(item.partial and item.status is None and dict(item.headers) == {} for item in items)
    assert items[0].url == server.base_url + "/i/1" and items[1].url is None
    assert sorted(doc.embedded) == ["items", "one"]


def test_a_link_is_sent_resolved_once(server: FakeServer, client: rp.Client) -> None:
    server.add_resource("/things/7", {"id": 7})
    server.add_resource("/doc", DOC)
    doc = client.get("/doc")
    assert doc.described.expand(id=7) == server.base_url + "/things/7"
    assert doc.described(id=7)["id"] == 7
    assert client.get("/things/{id}", id=7)["id"] == 7
    assert [r.path for r in api_requests(server)][-2:] == ["/things/7", "/things/7"]


STATE = {"z": [1, {"a": None}], "id": 7, "name": "é\u2028", "flag": False, "nested": {"x": 1.5}}


@pytest.mark.parametrize("face", ["sync", "async"])
def test_keys_values_and_items_are_the_mapping_views_made_in_one_call(
    server: FakeServer, face: str
) -> None:
    body = {**STATE, "_links": {"self": {"href": "/state"}}, "_embedded": {"one": dict(STATE)}}
    server.add_resource("/state", body)
    empty = {"_links": {"self": {"href": "/empty"}}}
    server.add_resource("/empty", empty)

    async def fetch_async() -> list[Any]:
        async with server.async_client() as client:
            return [await client.get("/state"), await client.get("/empty")]

    if face == "async":
        res, bare = asyncio.run(fetch_async())
    else:
        with server.client() as client:
            res, bare = client.get("/state"), client.get("/empty")
    item = res.embedded["one"]
    made = type(res)(res._session, dict(STATE))  # a resource of a plain mapping
    for resource in (res, item, made):
        # What `Mapping`'s own views give, key by key: same order, equal values.
        assert list(resource.keys()) == list(Mapping.keys(resource)) == list(STATE)
        assert list(resource.values()) == list(Mapping.values(resource)) == list(STATE.values())
        assert list(resource.items()) == list(Mapping.items(resource)) == list(STATE.items())
        assert isinstance(resource.keys(), KeysView) and resource.keys() & {"id", "x"} == {"id"}
        assert isinstance(resource.values(), ValuesView) and 7 in resource.values()
        assert isinstance(resource.items(), ItemsView) and ("id", 7) in resource.items()
        assert dict(resource) == dict(resource.items()) == STATE
        dict(resource.items())["nested"]["x"] = 0  # a copy: the resource is unchanged
        assert resource["nested"] == {"x": 1.5}
    assert list(bare.keys()) == list(bare.values()) == list(bare.items()) == []
