"""Headers, links and embedded resources are built lazily (for speed); what they show must not
change: case-insensitive folded headers, one Link object per relation, every link field."""

from __future__ import annotations

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
