"""Response documents are indexed in one pass and converted to Python when a field is read
(``_core.Document``): what a user reads must be exactly what ``json.loads`` gives, errors must
still come from the request, and nothing converted on access may leak or change."""

from __future__ import annotations

import gc
import json
import weakref
from collections.abc import Iterator
from typing import Any

import pytest

import recurring_payments as rp
from recurring_payments._relations import curies_in_scope
from recurring_payments._resource_base import _ResourceBase
from recurring_payments.testing import FakeServer

HAL = ("_links", "_embedded")


@pytest.fixture
def served(server: FakeServer) -> Iterator[tuple[FakeServer, rp.Client]]:
    with server.client() as client:
        yield server, client


def get_raw(served: tuple[FakeServer, rp.Client], body: bytes) -> rp.Resource:
    server, client = served
    server.respond_next(body, path="/raw")
    return client.get(server.base_url + "/raw")


def state_of(body: bytes) -> dict[str, Any]:
    return {k: v for k, v in json.loads(body.decode("utf-8-sig")).items() if k not in HAL}


MANY_KEYS = b"{" + b",".join(b'"k%d": %d' % (n, n) for n in range(40)) + b', "k7": "again"}'

BODIES = [
    pytest.param(b'{"a": 1, "b": [1, 2.5, -3e2, null, true], "a": {"x": "y"}}', id="repeated"),
    pytest.param(b'{"\\u0061b": 1, "c\\"d": 2, "\\u00e9t\\u00e9": "\\ud83d\\ude00"}', id="escaped"),
    pytest.param(MANY_KEYS, id="40 keys, one repeated"),
    pytest.param(
        b'{"big": 123456789012345678901234567890, "neg": -0.0, "exp": 1E400, "s": "\\n\\t"}',
        id="numbers",
    ),
    pytest.param(
        b' \n{ "amount" :"12.30" ,\t"nested":{"deep":[{"a":{}}]}, "_links": {} } \n',
        id="whitespace",
    ),
    pytest.param(
        '{"zero": -0, "i18": 999999999999999999, "neg": -99999999999999999, "i19": '
        '1000000000000000000, "t": true, "f": false, "n": null, "s": "plain", "u": "été 😀", '
        '"e": "", "q": "a\\"b", "f1": 1.0, "ex": 1e2}'.encode(),
        id="scalars converted without the parser",
    ),
    pytest.param(b"{}", id="empty"),
    pytest.param(b'\xef\xbb\xbf{"bom": "ignored, as RFC 8259 allows"}', id="byte order mark"),
]


@pytest.mark.parametrize("body", BODIES)
def test_the_state_read_field_by_field_is_what_json_loads_gives(
    served: tuple[FakeServer, rp.Client], body: bytes
) -> None:
    res = get_raw(served, body)
    expected = state_of(body)
    assert list(res) == list(expected)  # names in first-seen order, each once
    assert len(res) == len(expected)
    for name, value in expected.items():
        assert name in res
        assert res[name] == value and type(res[name]) is type(value)
        assert res.get(name) == value
    assert res.data == expected
    assert res.to_dict() == json.loads(body.decode("utf-8-sig"))
    assert "missing" not in res and res.get("missing") is None
    with pytest.raises(KeyError):
        res["missing"]


def test_a_value_read_cannot_change_later_reads(served: tuple[FakeServer, rp.Client]) -> None:
    # Issue 12, item 8: a resource is immutable, so what one read gives cannot be changed for
    # the next read (objects and arrays are converted afresh, scalars once).
    doc = {
        "debtor": {"name": "D"},
        "items": [1, 2],
        "name": "N",
        "_links": {"self": {"href": "/raw"}, "many": [{"href": "/a"}, {"href": "/b"}]},
        "_embedded": {
            "items": [{"debtor": {"name": "E"}, "tags": ["x"]}, {"n": 2}],
            "one": {"k": [1]},
        },
    }
    res = get_raw(served, json.dumps(doc).encode())
    res["debtor"]["name"] = "changed"
    res["items"].append(3)
    res.get("items").clear()
    for value in res.values():
        if isinstance(value, list):
            value.append("x")
    dict(res)["debtor"]["name"] = "changed"
    res.data["debtor"]["name"] = "changed"
    res.to_dict()["debtor"]["name"] = "changed"
    assert res["debtor"] == {"name": "D"} and res["items"] == [1, 2]
    assert res["name"] is res["name"]  # scalars are converted once and kept

    items = res.embedded["items"]
    assert isinstance(items, list)
    items[0]["debtor"]["name"] = "changed"
    items[0]["tags"].append("y")
    items.append(items[1])
    one = res.one
    one["k"].append(2)
    res.links["many"].pop()
    again = res.embedded["items"]
    assert len(again) == 2 and again[0] is items[0]  # the embedded resources are built once
    assert again[0]["debtor"] == {"name": "E"} and again[0]["tags"] == ["x"]
    assert res.one["k"] == [1] and len(res.links["many"]) == 2 and len(res.many) == 2
    assert res.to_dict() == doc


def test_many_embedded_relations_each_once(served: tuple[FakeServer, rp.Client]) -> None:
    rels = b",".join(b'"r%d": {"n": %d}' % (n % 50, n) for n in range(100))  # each twice
    res = get_raw(served, b'{"_embedded": {' + rels + b"}}")
    assert list(res.embedded) == [f"r{n}" for n in range(50)]
    assert [res.embedded[f"r{n}"]["n"] for n in (0, 49)] == [50, 99]  # the last one wins


def test_embedded_items_are_resources_over_their_own_part(
    served: tuple[FakeServer, rp.Client],
) -> None:
    items = [
        {
            "id": n,
            "status": "active" if n % 3 else "revoked",
            "_links": {"self": {"href": f"/m/{n}"}},
        }
        for n in range(300)
    ]
    body = json.dumps({"count": 300, "_embedded": {"mandates": items}}).encode()
    res = get_raw(served, body)
    mandates = res.embedded["mandates"]
    assert isinstance(mandates, list)
    assert [m["status"] for m in mandates] == [i["status"] for i in items]
    assert [m.url for m in mandates][:2] == [
        served[0].base_url + "/m/0",
        served[0].base_url + "/m/1",
    ]
    assert all(m.partial for m in mandates)
    assert mandates[5].to_dict() == items[5]
    assert dict(mandates[5]) == {"id": 5, "status": "active"}


def test_an_embedded_item_is_what_the_constructor_makes(
    served: tuple[FakeServer, rp.Client],
) -> None:
    # Items are built by a faster path than the constructor (no keywords): every slot it sets
    # must equal what `Resource(..., partial=True, curies=...)` sets.
    body = (
        b'{"_links": {"curies": [{"name": "ns", "href": "/rels/{rel}"}]},'
        b' "_embedded": {"ns:items": [{"a": 1, "_links": {"self": {"href": "/i/1"}}}]}}'
    )
    page = get_raw(served, body)
    item = page.embedded["ns:items"][0]
    made = rp.Resource(
        page._session, item._doc, partial=True, curies=curies_in_scope(page._doc, page._inherited)
    )
    for slot in _ResourceBase.__slots__:
        assert getattr(item, slot) == getattr(made, slot), slot
    assert type(item) is rp.Resource and item._inherited == [("ns", "/rels/{rel}")]
    assert (item.status, item.partial, dict(item.headers), repr(item)) == (
        None,
        True,
        {},
        repr(made),
    )


def test_a_response_resource_is_what_the_constructor_makes(
    served: tuple[FakeServer, rp.Client],
) -> None:
    # A request's resource is built by the same fast path as the items: every slot must equal
    # what `Resource(session, document, status=..., headers=...)` sets.
    page = get_raw(served, b'{"a": 1, "_links": {"self": {"href": "/p"}}}')
    made = rp.Resource(page._session, page._doc, status=page.status, headers=page.headers)
    for slot in _ResourceBase.__slots__:
        assert getattr(page, slot) == getattr(made, slot), slot
    assert type(page) is rp.Resource and page.status == 200 and not page.partial
    assert (page.headers["content-type"], repr(page)) == (made.headers["content-type"], repr(made))


BAD_HAL = [
    (
        b'{"_embedded": {"m": [{"_links": {"self": {"href": 5}}}]}}',
        'link self has no string "href"',
    ),
    (b'{"_embedded": {"m": [{"a": 1}, 7]}}', "embedded m is not an object"),
    (b'{"_embedded": {"m": {"_embedded": {"n": "x"}}}}', "embedded n is not an object"),
    (b'{"_embedded": []}', '"_embedded" is not an object'),
    (b'{"_links": {"a": {"href": "/a", "templated": "yes"}}}', 'link a has a "templated" that'),
    (b'{"_links": {"a": [{"href": "/a"}, 3]}}', "link a is not an object"),
    (b'{"_links": 1}', '"_links" is not an object'),
    (b'{"_embedded": {"m": [{"name": "\xc3\x28"}]}}', "not valid JSON: invalid UTF-8"),
    (b'{"_embedded": {"m": [{"a": 1,}]}}', "not valid JSON"),
    (b'{"a": 1} {"b": 2}', "not valid JSON"),
    (b"[1, 2]", "not a JSON object"),
    (b"[1, 2", "not valid JSON"),
]


@pytest.mark.parametrize(("body", "message"), BAD_HAL)
def test_a_malformed_part_anywhere_fails_the_request_itself(
    served: tuple[FakeServer, rp.Client], body: bytes, message: str
) -> None:
    with pytest.raises(rp.ProtocolError) as caught:
        get_raw(served, body)
    assert message in str(caught.value)
    assert caught.value.url is not None and caught.value.url.endswith("/raw")


def nested_embedding(depth: int) -> bytes:
    doc: dict[str, Any] = {"leaf": True}
    for level in range(depth):
        doc = {"level": level, "_embedded": {"inner": doc}}
    return json.dumps(doc).encode()


def test_embedding_is_followed_to_the_nesting_limit_and_refused_beyond(
    served: tuple[FakeServer, rp.Client],
) -> None:
    # Each embedding is two levels (`_embedded`, then the resource): 63 fit in 128 levels.
    res: rp.Resource = get_raw(served, nested_embedding(63))
    for _ in range(63):
        inner = res.embedded["inner"]
        assert isinstance(inner, rp.Resource)
        res = inner
    assert res["leaf"] is True
    with pytest.raises(rp.ProtocolError, match="nested deeper than 128 levels"):
        get_raw(served, nested_embedding(64))


LIMIT = 128  # levels of objects and arrays, the top object being the first


def deep(levels: int) -> str:
    """JSON text of nested arrays, ``levels`` deep."""
    return "[" * levels + "]" * levels


def deep_bodies(levels: int) -> dict[str, bytes]:
    """Bodies nested ``levels`` deep (the top object is level 1), in each place of a document."""
    return {
        "field": b'{"deep": %s, "_links": {"self": {"href": "/raw"}}}' % deep(levels - 1).encode(),
        "object field": ("{" + '"a": {' * (levels - 1) + "}" * (levels - 1) + "}").encode(),
        "link member": b'{"_links": {"self": {"href": "/raw", "x": %s}}}'
        % deep(levels - 3).encode(),
        "link array": b'{"_links": {"self": [{"href": "/raw", "x": %s}]}}'
        % deep(levels - 4).encode(),
        "embedded field": (
            b'{"_embedded": {"item": [{"deep": %s, "_links": {"self": {"href": "/i"}}}]}}'
            % deep(levels - 4).encode()
        ),
        # 30 embeddings (60 levels), then a field: one limit for the whole body.
        "embeddings and a field": (
            '{"_embedded": {"in": ' * 30 + f'{{"deep": {deep(levels - 61)}}}' + "}}" * 30
        ).encode(),
    }


def at_depth(frames: int, call: Any) -> Any:
    """``call()`` from ``frames`` Python frames down (a caller deep in a web framework)."""
    return call() if frames == 0 else at_depth(frames - 1, call)


def use_everything(res: rp.Resource | rp.AsyncResource) -> None:
    """Every Resource API, from 100 frames down: none may raise RecursionError."""
    import copy

    def walk() -> None:
        embedded = [v if isinstance(v, list) else [v] for v in res.embedded.values()]
        for target in [res, *(item for items in embedded for item in items)]:
            for key in target:
                copy.deepcopy(target[key])
                assert target.get(key) == target[key]
            copy.deepcopy(target.data)
            copy.deepcopy(target.to_dict())
            repr(target)
            target._repr_html_()
            str(target.data)
            dict(target.links)
            dir(target)
            _ = target.url

    at_depth(100, walk)


@pytest.mark.parametrize("place", list(deep_bodies(LIMIT)))
def test_a_body_at_the_nesting_limit_is_whole_and_one_deeper_is_refused(
    served: tuple[FakeServer, rp.Client], place: str
) -> None:
    body = deep_bodies(LIMIT)[place]
    res = get_raw(served, body)
    assert res.to_dict() == json.loads(body)
    use_everything(res)
    with pytest.raises(rp.ProtocolError, match="nested deeper than 128 levels") as caught:
        get_raw(served, deep_bodies(LIMIT + 1)[place])
    assert caught.value.url is not None and caught.value.url.endswith("/raw")


@pytest.mark.asyncio
@pytest.mark.parametrize("place", list(deep_bodies(LIMIT)))
async def test_a_body_at_the_nesting_limit_async(server: FakeServer, place: str) -> None:
    async with server.async_client() as client:
        server.respond_next(deep_bodies(LIMIT)[place], path="/raw")
        res = await client.get(server.base_url + "/raw")
        assert res.to_dict() == json.loads(deep_bodies(LIMIT)[place])
        use_everything(res)
        server.respond_next(deep_bodies(LIMIT + 1)[place], path="/raw")
        with pytest.raises(rp.ProtocolError, match="nested deeper than 128 levels"):
            await client.get(server.base_url + "/raw")


def test_a_cycle_through_a_value_read_is_collected(served: tuple[FakeServer, rp.Client]) -> None:
    res = get_raw(served, b'{"debtor": {"name": "D"}}')

    class Marker:
        pass

    marker = Marker()
    res["debtor"]["back"] = (res, marker)  # a user's mistake: the resource now reaches itself
    gone = weakref.ref(marker)
    del res, marker
    gc.collect()
    assert gone() is None


def test_a_cycle_through_the_kept_embedded_dict_is_collected(
    served: tuple[FakeServer, rp.Client],
) -> None:
    # The GC visits only this slot of a `Document` (the other kept values hold no reference).
    res = get_raw(served, b'{"a": "x", "_embedded": {"m": [{"b": 1}]}, "_links": {}}')

    class Marker:
        pass

    marker = Marker()
    doc = res._doc
    assert doc["a"] == "x" and len(doc["_links"]) == 0  # every kind of value kept
    doc["_embedded"]["back"] = (doc, marker)  # the kept dict now reaches its document
    gone = weakref.ref(marker)
    del res, marker, doc
    gc.collect()
    assert gone() is None


# `_links` is read one relation at a time (`_core.Links`): what `res.links` and the relation
# attributes give must still be exactly what `json.loads` of the body gives.
LINK_BODIES = [
    pytest.param(
        b'{"_links": {"self": {"href": "/a"}, "ns:x": {"href": "/x"}, "self": {"href": "/b"}}}',
        id="a repeated relation keeps its first place and its last value",
    ),
    pytest.param(
        b'{"_links": {"\\u0073elf": {"href": "/s"}, '
        b'"ite\\u006ds": [{"href": "/1"}, {"href": "/2"}]}}',
        id="escaped relations",
    ),
    pytest.param(
        b'{"_links": {"items": [], '
        b'"one": [{"href": "/o", "title": "\\u00e9", "x": [1, {"y": null}]}]}}',
        id="arrays and extra members",
    ),
    pytest.param(
        b'{"_links" : { } , "n": 1}',
        id="no relation",
    ),
]


@pytest.mark.parametrize("body", LINK_BODIES)
def test_links_read_one_by_one_are_what_json_loads_gives(
    served: tuple[FakeServer, rp.Client], body: bytes
) -> None:
    res = get_raw(served, body)
    expected = json.loads(body)["_links"]
    assert list(res.links) == list(expected)
    for rel, value in expected.items():
        got = res.links[rel]
        if isinstance(value, list):
            assert [link.href for link in got] == [item["href"] for item in value]
        else:
            assert got.href == value["href"]
            assert got.title == value.get("title")
    assert res.to_dict()["_links"] == expected


def test_relation_attributes_of_resources_sharing_a_shape_read_their_own_links(
    served: tuple[FakeServer, rp.Client],
) -> None:
    # One relation index serves every item of a page (cached per shape): each item's attribute
    # must still give its own link, and an item of another shape its own relations.
    items = [
        {"n": i, "_links": {"self": {"href": f"/i/{i}"}, "owner": {"href": f"/o/{i}"}}}
        for i in range(5)
    ]
    items.append({"n": 9, "_links": {"self": {"href": "/i/9"}, "maker": {"href": "/m/9"}}})
    page = json.dumps({"_embedded": {"items": items}}).encode()
    res = get_raw(served, page)
    got = [
        (item.owner.href if "owner" in item.links else item.maker.href)
        for item in res.embedded["items"]
    ]
    assert got == ["/o/0", "/o/1", "/o/2", "/o/3", "/o/4", "/m/9"]
    with pytest.raises(rp.LinkNotFoundError, match="owner"):
        res.embedded["items"][-1].owner  # noqa: B018
