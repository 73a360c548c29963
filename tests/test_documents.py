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
        assert res[name] == value
        assert res.get(name) == value
    assert res.data == expected
    assert res.to_dict() == json.loads(body.decode("utf-8-sig"))
    assert "missing" not in res and res.get("missing") is None
    with pytest.raises(KeyError):
        res["missing"]


def test_a_field_read_twice_is_the_same_object(served: tuple[FakeServer, rp.Client]) -> None:
    body = json.dumps(
        {
            "debtor": {"name": "D"},
            "_links": {"self": {"href": "/raw"}},
            "_embedded": {"items": [{"debtor": {"name": "E"}}, {"n": 2}]},
        }
    ).encode()
    res = get_raw(served, body)
    assert res["debtor"] is res["debtor"]
    items = res.embedded["items"]
    assert isinstance(items, list)
    assert items[0]["debtor"] is items[0]["debtor"]
    assert res.embedded["items"] is items
    # data and to_dict are copies: changing them changes nothing read later
    res.data["debtor"]["name"] = "changed"
    res.to_dict()["debtor"]["name"] = "changed"
    assert res["debtor"] == {"name": "D"}


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


def test_embedding_is_followed_128_levels_deep_and_refused_beyond(
    served: tuple[FakeServer, rp.Client],
) -> None:
    res: rp.Resource = get_raw(served, nested_embedding(128))
    for _ in range(128):
        inner = res.embedded["inner"]
        assert isinstance(inner, rp.Resource)
        res = inner
    assert res["leaf"] is True
    with pytest.raises(rp.ProtocolError, match="nested too deeply"):
        get_raw(served, nested_embedding(129))


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
