"""HAL as other servers write it (docs/concepts.md#hal-documents-and-resource,
docs/concepts.md#relations-and-their-names):
link arrays where one link is read, CURIEs inherited by embedded resources, and two rels that
make one attribute name."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import api_requests

import recurring_payments as rp
from recurring_payments.testing import FakeServer


def page(n: int, next_links: Any) -> dict[str, Any]:
    links: dict[str, Any] = {"self": [{"href": f"/p/{n}"}]}
    if next_links is not None:
        links["next"] = next_links
    return {"n": n, "_links": links}


def add_pages(server: FakeServer, next_of_last: Any = None) -> None:
    """/p/1 -> /p/2 -> /p/3, each `next` (and `self`) an array of one link."""
    server.add_resource("/p/1", page(1, [{"href": "/p/2"}]))
    server.add_resource("/p/2", page(2, [{"href": "/p/3", "title": "page 3"}]))
    server.add_resource("/p/3", page(3, next_of_last))


# --- link arrays where a single link is read -------------------------------------------------


def test_pages_follow_a_next_array_of_one(server: FakeServer, client: rp.Client) -> None:
    add_pages(server)
    first = client.get("/p/1")
    assert [p["n"] for p in first.pages()] == [1, 2, 3]
    assert [r.path for r in api_requests(server)] == ["/p/1", "/p/2", "/p/3"]


@pytest.mark.asyncio
async def test_pages_follow_a_next_array_of_one_async(
    server: FakeServer, aclient: rp.AsyncClient
) -> None:
    add_pages(server)
    first = await aclient.get("/p/1")
    assert [p["n"] async for p in first.pages()] == [1, 2, 3]


@pytest.mark.parametrize("empty", [[], None], ids=["empty array", "no next"])
def test_pages_end_without_a_next_link(server: FakeServer, client: rp.Client, empty: Any) -> None:
    add_pages(server, next_of_last=empty)
    assert [p["n"] for p in client.get("/p/1").pages()] == [1, 2, 3]


def test_several_next_links_are_not_guessed_between(server: FakeServer, client: rp.Client) -> None:
    add_pages(server, next_of_last=[{"href": "/p/1"}, {"href": "/p/2"}])
    pages = client.get("/p/1").pages()
    assert [next(pages)["n"] for _ in range(3)] == [1, 2, 3]
    with pytest.raises(rp.LinkNotFoundError, match="relation 'next' has 2 links") as caught:
        next(pages)
    assert isinstance(caught.value, AttributeError)


@pytest.mark.asyncio
async def test_several_next_links_are_not_guessed_between_async(
    server: FakeServer, aclient: rp.AsyncClient
) -> None:
    add_pages(server, next_of_last=[{"href": "/p/1"}, {"href": "/p/2"}])
    seen = []
    with pytest.raises(rp.LinkNotFoundError, match="relation 'next' has 2 links"):
        async for p in (await aclient.get("/p/1")).pages():
            seen.append(p["n"])
    assert seen == [1, 2, 3]


def test_url_and_fetch_use_a_self_array_of_one(server: FakeServer, client: rp.Client) -> None:
    server.add_resource(
        "/list",
        {
            "_links": {"self": [{"href": "/list"}]},
            "_embedded": {
                "items": [
                    {"id": 1, "_links": {"self": [{"href": "/items/1"}]}},
                    {"id": 2, "_links": {"self": [{"href": "/items/2"}, {"href": "/x/2"}]}},
                    {"id": 3, "_links": {"self": []}},
                ]
            },
        },
    )
    server.add_resource("/items/1", {"id": 1, "full": True})
    res = client.get("/list")
    assert res.url == server.base_url + "/list"
    assert res.fetch().url == server.base_url + "/list"
    one, two, three = res.embedded["items"]
    assert one.url == server.base_url + "/items/1"
    assert one.fetch()["full"] is True
    assert two.url is None and three.url is None
    with pytest.raises(rp.LinkNotFoundError, match="relation 'self' has 2 links"):
        two.fetch()
    with pytest.raises(rp.LinkNotFoundError, match="no 'self' link"):
        three.fetch()
    assert repr(one).startswith(f"<Resource {server.base_url}/items/1 partial")


@pytest.mark.asyncio
async def test_url_and_fetch_use_a_self_array_of_one_async(
    server: FakeServer, aclient: rp.AsyncClient
) -> None:
    server.add_resource("/items/1", {"id": 1, "_links": {"self": [{"href": "/items/1"}]}})
    server.add_resource("/items/2", {"_links": {"self": [{"href": "/a"}, {"href": "/b"}]}})
    one = await aclient.get("/items/1")
    assert one.url == server.base_url + "/items/1"
    assert (await one.fetch())["id"] == 1
    two = await aclient.get("/items/2")
    assert two.url is None
    with pytest.raises(rp.LinkNotFoundError, match="relation 'self' has 2 links"):
        await two.fetch()


# --- templated `self` and `next` links (Spring Data REST pages) -------------------------------


def add_templated_pages(server: FakeServer) -> None:
    """/people, whose `self` and `next` are templates of optional query variables, as Spring
    Data REST writes them, then /people/2: called with no variables, they expand them away."""
    links = {
        "self": {"href": "/people{?size,sort}", "templated": True},
        "next": {"href": "/people/2{?size,sort}", "templated": True},
    }
    server.add_resource("/people", {"n": 0, "_links": links})
    server.add_resource("/people/2", {"n": 1, "_links": {"self": {"href": "/people/2"}}})


def test_templated_self_and_next_are_expanded_not_sent_as_templates(
    server: FakeServer, client: rp.Client
) -> None:
    # Before, `url`, `fetch()` and `pages()` sent the href as it is, braces and all.
    add_templated_pages(server)
    first = client.get("/people")
    assert first.url == server.base_url + "/people"
    assert first.fetch()["n"] == 0
    assert [p["n"] for p in first.pages()] == [0, 1]
    assert [r.path for r in api_requests(server)] == ["/people", "/people", "/people/2"]


@pytest.mark.asyncio
async def test_templated_self_and_next_are_expanded_not_sent_as_templates_async(
    server: FakeServer, aclient: rp.AsyncClient
) -> None:
    add_templated_pages(server)
    first = await aclient.get("/people")
    assert first.url == server.base_url + "/people"
    assert (await first.fetch())["n"] == 0
    assert [p["n"] async for p in first.pages()] == [0, 1]


# --- CURIEs: embedded resources inherit those of the resources that embed them ---------------

EX = "https://x.example/rels/{rel}"


def curie_page() -> dict[str, Any]:
    """CURIEs declared on the page only; its items (and theirs) use them."""
    grandchild = {"g": 1, "_links": {"ex:thing": {"href": "/things/g"}}}
    overriding = {
        "o": 1,
        "_links": {
            "curies": [{"name": "ex", "href": "https://other.example/{rel}", "templated": True}],
            "ex:thing": {"href": "/things/o"},
        },
    }
    item = {
        "i": 1,
        "_links": {"self": {"href": "/items/1"}, "ex:thing": {"href": "/things/1"}},
        "_embedded": {"ex:part": [grandchild], "overriding": overriding},
    }
    return {
        "_links": {
            "self": {"href": "/page"},
            "curies": [{"name": "ex", "href": EX, "templated": True}],
        },
        "_embedded": {"ex:entries": [item]},
    }


def test_embedded_resources_inherit_curies(server: FakeServer, client: rp.Client) -> None:
    server.add_resource("/page", curie_page())
    server.add_resource("/things/1", {"thing": 1})
    page = client.get("/page")
    items = page.embedded["https://x.example/rels/entries"]
    assert items == page.entries and isinstance(items, list)
    item = items[0]
    expanded = "https://x.example/rels/thing"
    for name in ("ex:thing", expanded, "thing"):
        assert item.links[name].href == "/things/1", name
    assert item.thing.rel == "ex:thing" and "thing" in dir(item)
    assert item.thing()["thing"] == 1
    assert repr(item.thing) == "<Link ex:thing /things/1>"
    # Two levels down, through an embedded rel that is itself a CURIE.
    grandchild = item.embedded["https://x.example/rels/part"][0]
    assert grandchild.links[expanded].href == "/things/g" and grandchild.thing.href == "/things/g"
    # A resource's own CURIE wins over an inherited one of the same name.
    overriding = item.overriding
    assert overriding.links["https://other.example/thing"].href == "/things/o"
    assert expanded not in overriding.links
    # The links mapping still has the rels as received.
    assert list(item.links) == ["self", "ex:thing"]


@pytest.mark.asyncio
async def test_embedded_resources_inherit_curies_async(
    server: FakeServer, aclient: rp.AsyncClient
) -> None:
    server.add_resource("/page", curie_page())
    server.add_resource("/things/1", {"thing": 1})
    page = await aclient.get("/page")
    item = page.entries[0]
    assert item.links["https://x.example/rels/thing"].href == "/things/1"
    assert (await item.thing())["thing"] == 1


# --- two rels, one attribute name ------------------------------------------------------------


def ambiguous(server: FakeServer) -> tuple[str, str]:
    hyphenated = server.rel_namespace + "get-foo"
    underscored = server.rel_namespace + "get_foo"
    server.add_resource(
        "/doc",
        {"_links": {hyphenated: {"href": "/foo/1"}, underscored: {"href": "/foo/2"}}},
    )
    server.add_resource("/foo/1", {"foo": 1})
    server.add_resource("/foo/2", {"foo": 2})
    server.add_link("get-foo", "/foo/1")
    server.add_link("get_foo", "/foo/2")
    return hyphenated, underscored


def assert_names_both(
    caught: pytest.ExceptionInfo[rp.LinkNotFoundError], rels: tuple[str, str]
) -> None:
    message = str(caught.value)
    assert "'get_foo' is ambiguous" in message
    assert all(f"'{rel}'" in message for rel in rels), message
    assert isinstance(caught.value, AttributeError) and isinstance(caught.value, KeyError)


def test_two_rels_of_one_attribute_name_make_it_ambiguous(
    server: FakeServer, client: rp.Client
) -> None:
    rels = ambiguous(server)
    for doc in (client.get("/doc"), client.root()):
        with pytest.raises(rp.LinkNotFoundError) as caught:
            doc.get_foo  # noqa: B018
        assert_names_both(caught, rels)
        # The exact short names and the full rels still name one rel each.
        assert doc.links["get-foo"].href.endswith("/foo/1")
        assert doc.links["get_foo"].href.endswith("/foo/2")
        assert doc.links[rels[1]].href.endswith("/foo/2")
        assert doc.follow("get-foo")["foo"] == 1 and doc.follow("get_foo")["foo"] == 2
        assert "get_foo" not in dir(doc)
    with pytest.raises(rp.LinkNotFoundError) as caught:
        client.get_foo  # noqa: B018
    assert_names_both(caught, rels)
    assert "get_foo" not in dir(client)


@pytest.mark.asyncio
async def test_two_rels_of_one_attribute_name_make_it_ambiguous_async(
    server: FakeServer, aclient: rp.AsyncClient
) -> None:
    rels = ambiguous(server)
    with pytest.raises(rp.LinkNotFoundError) as caught:
        await aclient.get_foo()
    assert_names_both(caught, rels)
    with pytest.raises(rp.LinkNotFoundError) as caught:
        aclient.get_foo  # noqa: B018  (the entry point is cached now: fails at once)
    assert_names_both(caught, rels)
    doc = await aclient.get("/doc")
    with pytest.raises(rp.LinkNotFoundError):
        doc.get_foo  # noqa: B018
    assert (await doc.follow("get_foo"))["foo"] == 2


def test_a_link_and_an_embedded_rel_of_one_attribute_name_are_ambiguous(
    server: FakeServer, client: rp.Client
) -> None:
    ns = server.rel_namespace
    server.add_resource(
        "/doc",
        {
            "_links": {ns + "get-foo": {"href": "/foo/1"}, ns + "lines": {"href": "/lines"}},
            "_embedded": {ns + "get_foo": {"foo": 2}, ns + "lines": [{"i": 1}]},
        },
    )
    doc = client.get("/doc")
    with pytest.raises(rp.LinkNotFoundError, match="ambiguous"):
        doc.get_foo  # noqa: B018
    assert doc.embedded["get_foo"]["foo"] == 2
    # One rel in both `_links` and `_embedded` is no ambiguity: the attribute is the link.
    assert isinstance(doc.lines, rp.Link) and doc.embedded["lines"][0]["i"] == 1
