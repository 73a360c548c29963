"""What a loop over a page reads of each item (docs/concepts.md#hal-documents-and-resource):
``url`` from the ``self`` href as the URL parser resolves it, whatever the server wrote, and
each field and ``data`` with the values and types of the JSON, on both faces."""

from __future__ import annotations

import asyncio
import gc
import json
import math
import random
from collections.abc import Iterator
from typing import Any

import pytest

import recurring_payments as rp
from recurring_payments.testing import FakeServer


@pytest.fixture
def aclient(server: FakeServer) -> Iterator[rp.AsyncClient]:
    client = server.async_client()
    yield client
    asyncio.run(client.aclose())


# Each href a server may send as `self`, with the URL a full parse gives (`{base}`: the
# sandbox's base URL, `{origin}` without `http://`): those the parser leaves as they are and
# those it changes, which a shortcut must not return as sent.
HREFS = [
    ("/a/b", "{base}/a/b"),
    ("{base}/a/b?x=1&y=/z?", "{base}/a/b?x=1&y=/z?"),
    ("/a;p=1/@x:y/!$&()*+,=~-_.", "{base}/a;p=1/@x:y/!$&()*+,=~-_."),
    ("a/b", "{base}/a/b"),
    ("/a/../b", "{base}/b"),
    ("/a/./b/.", "{base}/a/b/"),
    ("/a/%2e%2E/b", "{base}/b"),
    ("/a/%2e/b", "{base}/a/b"),
    ("/a%2Fb", "{base}/a%2Fb"),
    ("{base}/a/../b", "{base}/b"),
    ("HTTP://{origin}/x", "{base}/x"),
    ("http://LOCALHOST:8000/x", "http://localhost:8000/x"),
    ("http://example.com:80/x", "http://example.com/x"),
    ("https://example.com:443/x", "https://example.com/x"),
    ("http://user:pw@{origin}/x", "http://user:pw@{origin}/x"),
    ("http://bücher.example/x", "http://xn--bcher-kva.example/x"),
    ("/a\\b", "{base}/a/b"),
    ("//other.example/x", "http://other.example/x"),
    ("/\\other.example/x", "http://other.example/x"),
    ("/x?a b", "{base}/x?a%20b"),
    ("/x?it's", "{base}/x?it%27s"),
    ("/x#f", "{base}/x#f"),
    ("/x y/é", "{base}/x%20y/%C3%A9"),
    ("/a\tb", "{base}/ab"),
    ("/a|b^c`d{e}", "{base}/a|b^c%60d%7Be%7D"),
    ("?q", "{base}/?q"),
    ("", "{base}/"),
]


def filled(text: str, server: FakeServer) -> str:
    base = server.base_url.rstrip("/")
    return text.replace("{base}", base).replace("{origin}", base.removeprefix("http://"))


def expected(server: FakeServer) -> list[str]:
    return [filled(url, server) for _, url in HREFS]


def add_page(server: FakeServer) -> None:
    items = [
        {"n": n, "_links": {"self": {"href": filled(href, server)}}}
        for n, (href, _) in enumerate(HREFS)
    ]
    server.add_resource("/page", {"_embedded": {"items": items}})


def test_each_self_href_is_resolved_as_the_url_parser_resolves_it(
    server: FakeServer, client: rp.Client
) -> None:
    add_page(server)
    items = client.get("/page").embedded["items"]
    assert [item.url for item in items] == expected(server)
    assert [item.url for item in items] == expected(server)  # kept once read


@pytest.mark.asyncio
async def test_each_self_href_is_resolved_as_the_url_parser_resolves_it_async(
    server: FakeServer, aclient: rp.AsyncClient
) -> None:
    add_page(server)
    items = (await aclient.get("/page")).embedded["items"]
    assert [item.url for item in items] == expected(server)


def test_a_self_href_read_after_close_resolves_against_the_base_url(
    server: FakeServer, client: rp.Client
) -> None:
    base = server.base_url.rstrip("/")
    server.add_resource(
        "/page",
        {
            "_embedded": {
                "items": [{"_links": {"self": {"href": h}}} for h in ["/a/b", f"{base}/c"]]
            }
        },
    )
    items = client.get("/page").embedded["items"]
    client.close()
    assert [item.url for item in items] == [f"{base}/a/b", f"{base}/c"]


@pytest.mark.parametrize(
    ("links", "url"),
    [
        ({"self": {"href": "/a", "templated": False}}, "/a"),
        ({"self": {"href": "/a", "title": "A"}}, "/a"),
        ({"self": [{"href": "/a"}]}, "/a"),
        ({"self": {"href": "/caf\u00e9\\x"}}, "/caf%C3%A9/x"),
        ({"self": {"href": "/a{?q}", "templated": True}}, "/a"),
        ({"self": [{"href": "/a"}, {"href": "/b"}]}, None),
        ({"self": []}, None),
        ({"other": {"href": "/a"}}, None),
    ],
    ids=[
        "templated false",
        "titled",
        "array of one",
        "escaped",
        "templated",
        "two",
        "none",
        "no self",
    ],
)
def test_the_self_link_in_each_form_a_server_sends(
    server: FakeServer, client: rp.Client, links: dict[str, Any], url: str | None
) -> None:
    server.add_resource("/page", {"_embedded": {"items": [{"_links": links}]}})
    (item,) = client.get("/page").embedded["items"]
    assert item.url == (None if url is None else server.base_url.rstrip("/") + url)


def test_a_repeated_self_or_links_is_read_as_json_reads_it(
    server: FakeServer, client: rp.Client
) -> None:
    # The last of a repeated name wins, as in the dict of `json.loads`.
    body = (
        '{"_embedded": {"items": ['
        '{"_links": {"self": {"href": "/a"}, "self": {"href": "/b"}}},'
        '{"_links": {"self": {"href": "/a"}}, "_links": {"next": {"href": "/n"}}},'
        '{"_links": {"s\\u0065lf": {"href": "/e"}}}]}}'
    )
    server.respond_next(body, path="/page")
    items = client.get("/page").embedded["items"]
    base = server.base_url.rstrip("/")
    assert [item.url for item in items] == [f"{base}/b", None, f"{base}/e"]


def random_item(rng: random.Random, n: int) -> dict[str, Any]:
    decimals = rng.randint(1, 6)
    return {
        "id": f"I{n}",
        "amount": round(rng.uniform(-1e6, 1e6), decimals),
        "small": rng.choice([0.1, 0.5, -0.0, 1.0, 123456789.012345, 0.000001]),
        "big": rng.choice([1e300, 12345678901234567.5, 1.5e-7, 2.0**60]),
        "count": rng.randint(-(2**63), 2**63 - 1),
        "flag": rng.choice([True, False, None]),
        "text": rng.choice(["plain", "caf\u00e9", 'q"uote', "tab\t", "\u2603", ""]),
        "nested": {"a": [n, {"b": "c"}]},
        "_links": {"self": {"href": f"/i/{n}"}},
    }


def test_fields_and_data_have_the_json_values_and_types(
    server: FakeServer, client: rp.Client
) -> None:
    rng = random.Random(8259)
    items = [random_item(rng, n) for n in range(200)]
    server.add_resource("/page", {"_embedded": {"items": items}})
    got = client.get("/page").embedded["items"]
    sent = json.loads(json.dumps(items))
    for item, want in zip(got, sent, strict=True):
        state = {k: v for k, v in want.items() if k != "_links"}
        for name, value in state.items():
            assert item[name] == value and type(item[name]) is type(value), name
            if isinstance(value, float):
                assert math.copysign(1, item[name]) == math.copysign(1, value)
        data = item.data
        assert data == state and list(data) == list(state)
        assert [type(v) for v in data.values()] == [type(v) for v in state.values()]
        data["nested"]["a"].append("changed")
        data["id"] = "changed"
        assert item.data == state and item["nested"] == state["nested"]
        assert "_links" not in item and item.get("_links") is None
        with pytest.raises(KeyError):
            item["_links"]


@pytest.mark.asyncio
async def test_fields_and_data_have_the_json_values_and_types_async(
    server: FakeServer, aclient: rp.AsyncClient
) -> None:
    rng = random.Random(8260)
    items = [random_item(rng, n) for n in range(50)]
    server.add_resource("/page", {"_embedded": {"items": items}})
    got = (await aclient.get("/page")).embedded["items"]
    for item, want in zip(got, json.loads(json.dumps(items)), strict=True):
        state = {k: v for k, v in want.items() if k != "_links"}
        assert item.data == state and [item[k] for k in state] == list(state.values())


def test_items_of_different_shapes_read_by_the_same_names(
    server: FakeServer, client: rp.Client
) -> None:
    # The same names at other places, missing, or `_links` where a field was.
    items = [
        {"a": 1, "b": 2, "c": 3},
        {"c": 30, "b": 20, "a": 10},
        {"b": 200},
        {"_links": {"self": {"href": "/x"}}, "a": 1000},
        {"x\u0061": "escaped", "a": 0},
    ]
    server.add_resource("/page", {"_embedded": {"items": items}})
    got = client.get("/page").embedded["items"]
    for _ in range(2):
        assert [[item.get(name) for name in ("a", "b", "c", "_links", "xa")] for item in got] == [
            [1, 2, 3, None, None],
            [10, 20, 30, None, None],
            [None, 200, None, None, None],
            [1000, None, None, None, None],
            [0, None, None, None, "escaped"],
        ]
    assert [dict(item.data) for item in got][3:] == [{"a": 1000}, {"xa": "escaped", "a": 0}]


@pytest.mark.parametrize("width", [1, 9, 10, 11, 40])
def test_items_of_every_width_keep_each_field_once_read(
    server: FakeServer, client: rp.Client, width: int
) -> None:
    # A resource of up to 10 fields (`_links` counted: widths 1 and 9) keeps its read fields in
    # its own object, a wider one in an allocation of its own: both give each scalar read twice
    # as the same object, and survive a collection while a page holds them.
    items = [{f"f{k}": f"v{n}-{k}" for k in range(width)} for n in range(20)]
    for n, item in enumerate(items):
        item["_links"] = {"self": {"href": f"/w/{n}"}}
    server.add_resource("/page", {"_embedded": {"items": items}})
    got = client.get("/page").embedded["items"]
    first = [[item[f"f{k}"] for k in range(width)] for item in got]
    gc.collect()
    for item, values, sent in zip(got, first, items, strict=True):
        assert values == [sent[f"f{k}"] for k in range(width)]
        assert all(item[f"f{k}"] is value for k, value in enumerate(values))
        assert len(item) == width and dict(item.data) == {f"f{k}": v for k, v in enumerate(values)}
