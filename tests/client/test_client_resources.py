"""Resources and links over the demo data (docs/concepts.md#relations-and-their-names)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import api_requests, header

import recurring_payments as rp
from recurring_payments.testing import FakeServer

RECORDED = Path(__file__).parents[2] / "fixtures" / "recorded" / "entry-point.json"


def test_every_recorded_relation_is_reachable(demo_client: rp.Client) -> None:
    recorded = json.loads(RECORDED.read_text())["response"]["body"]["_links"]
    assert len(recorded) == 44  # 42 namespaced relations, self and profile
    names = [rel.split("#", 1)[1] if "#" in rel else rel for rel in recorded]
    root = demo_client.root()
    for name in names:
        attribute = name.replace("-", "_")
        link = getattr(root, attribute)
        assert isinstance(link, rp.Link), name
        assert link is not None and root.links[name].href == link.href
        if not hasattr(rp.Client, attribute):  # members (client.profile) win over relations
            assert getattr(demo_client, attribute).href == link.href
        assert attribute in dir(root)


def test_entry_point_is_cached(demo: FakeServer, demo_client: rp.Client) -> None:
    assert demo_client.root() is demo_client.root()
    demo_client.get_creditors  # noqa: B018 (a relation of the cached entry point)
    assert len(api_requests(demo)) == 1
    demo_client.root(refresh=True)
    assert len(api_requests(demo)) == 2


def test_creditor_by_template(demo: FakeServer, demo_client: rp.Client) -> None:
    link = demo_client.get_creditors
    assert link.templated and link.variables == ["reference"]
    assert link.expand(reference="democreditor").endswith("/creditors?reference=democreditor")
    creditor = demo_client.get_creditors(reference="democreditor")
    assert creditor["reference"] == "democreditor"
    assert creditor.status == 200
    assert creditor.url is not None and creditor.url.startswith(demo.base_url)
    assert "democreditor" in repr(creditor)
    assert creditor.headers["Content-Type"].startswith("application/hal+json")


def test_unknown_template_variable_is_a_type_error(demo_client: rp.Client) -> None:
    with pytest.raises(TypeError, match="referenc"):
        demo_client.get_creditors(referenc="democreditor")
    with pytest.raises(TypeError):
        demo_client.create_orders.expand(x=1)


def test_mapping_protocol_over_the_state(demo_client: rp.Client) -> None:
    creditor = demo_client.get_creditors(reference="democreditor")
    assert "_links" not in creditor and "_links" not in list(creditor)
    assert len(creditor) == len(creditor.data) == len(list(creditor.keys()))
    assert creditor.get("nope", 7) == 7
    with pytest.raises(KeyError):
        creditor["_links"]
    data = creditor.data
    data["reference"] = "changed"
    assert creditor["reference"] == "democreditor"
    whole = creditor.to_dict()
    assert "_links" in whole and whole["reference"] == "democreditor"


def test_keys_no_document_can_hold_are_simply_absent(demo_client: rp.Client) -> None:
    # A lone surrogate (what os.fsdecode makes of a stray byte) or a non-str key: before,
    # UnicodeEncodeError, TypeError or AttributeError escaped `get`, `in` and `hasattr`.
    creditor = demo_client.get_creditors(reference="democreditor")
    for key in ("\ud800", "x\udc80", 1, None):
        assert creditor.get(key) is None and key not in creditor  # type: ignore[call-overload]
        for mapping in (creditor.links, creditor.embedded, creditor.headers):
            assert mapping.get(key, "absent") == "absent" and key not in mapping  # type: ignore[call-overload]
    assert not hasattr(creditor, "x\udc80")
    with pytest.raises(rp.LinkNotFoundError):
        getattr(creditor, "get_\ud800")


def test_repr_is_one_line_whatever_the_names(server: FakeServer, client: rp.Client) -> None:
    # Names with a newline or a terminal's escape sequence were copied as they are.
    document = {
        "a\nb": 1,
        "\x1b[31mred": 2,
        "_links": {"self": {"href": "/odd"}},
        "_embedded": {"x\r\ny": {"n": 1}},
    }
    server.add_resource("/odd", document)
    shown = repr(client.get("/odd"))
    assert "\n" not in shown and "\r" not in shown and "\x1b" not in shown
    assert "'a\\nb'" in shown and "'x\\r\\ny'" in shown
    # A malformed templated `self` does not make repr raise.
    bad = {
        "_links": {
            "self": {"href": "/{x", "templated": True},
            "odd": {"href": "/{", "templated": True},
        }
    }
    server.add_resource("/bad-self", bad)
    resource = client.get("/bad-self")
    assert repr(resource).startswith("<Resource (no self link)")
    assert "(malformed template)" in resource._repr_html_()  # a notebook's display never raises


def test_nested_template_values_are_a_type_error_naming_the_value(client: rp.Client) -> None:
    # std-uritemplate called the template malformed and quoted its debug form of the value.
    for value in ([[1, 2], 3], {"k": [1]}, [{"a": 1}]):
        with pytest.raises(TypeError, match="no nested values"):
            rp.expand_uri_template("/orders/{a}", {"a": value})


def test_attribute_access_is_for_relations_only(demo_client: rp.Client) -> None:
    creditor = demo_client.get_creditors(reference="democreditor")
    with pytest.raises(rp.LinkNotFoundError) as caught:
        creditor.get_mandatez  # noqa: B018
    assert "get_mandates" in str(caught.value)
    assert isinstance(caught.value, AttributeError) and isinstance(caught.value, KeyError)
    assert not hasattr(creditor, "reference")  # state is not an attribute


def test_create_order_then_patch(demo: FakeServer, demo_client: rp.Client) -> None:
    order = demo_client.create_orders.post(
        {"reference": "o-1", "creditor": {"reference": "democreditor"}, "started": True}
    )
    assert order.status == 201
    assert order.headers.get("location") == order.url
    (post,) = api_requests(demo, "POST")
    assert header(post, "content-type") == "application/json"
    assert post.json["reference"] == "o-1"
    approval = order.links["user-approval"]
    assert not approval.href.startswith(demo.base_url)  # the checkout page: another origin
    patched = demo_client.patch(order.url, {"started": False})
    (patch,) = api_requests(demo, "PATCH")
    assert header(patch, "content-type") == "application/merge-patch+json"
    assert patched["started"] is False
    assert order["started"] is True  # resources are snapshots


def test_pages_of_a_collection(demo: FakeServer, demo_client: rp.Client) -> None:
    first = demo_client.search_mandates(creditorReference="democreditor", size=25)
    pages = list(first.pages())
    assert len(pages) >= 2
    references = [m["reference"] for page in pages for m in page.embedded["mandates"]]
    assert len(references) == len(set(references)) == first["page"]["totalElements"]
    assert pages[0] is first


def test_partial_embedded_item_fetches_in_full(demo_client: rp.Client) -> None:
    page = demo_client.search_mandates(creditorReference="democreditor", size=5)
    item = page.mandates[0]
    assert isinstance(item, rp.Resource) and item.partial
    assert item.status is None and item.etag is None and len(item.headers) == 0
    full = item.fetch()
    assert not full.partial and full.status == 200
    assert full["reference"] == item["reference"]
    assert set(item).issubset(set(full))


def test_link_arrays_stay_lists(demo_client: rp.Client) -> None:
    documents = demo_client.get_documents(creditorReference="democreditor")
    arrays = [v for v in documents.links.values() if isinstance(v, list)]
    assert arrays and all(isinstance(link, rp.Link) for link in arrays[0])


def test_follow_is_calling_the_link(demo_client: rp.Client) -> None:
    root = demo_client.root()
    a = root.follow("get-creditors", reference="democreditor")
    b = root.get_creditors(reference="democreditor")
    assert a.to_dict() == b.to_dict()


def test_deprecated_link_warns(server: FakeServer, client: rp.Client) -> None:
    server.add_resource(
        "/old",
        {
            "_links": {
                "self": {"href": "/old"},
                "next": {"href": "/old", "deprecation": "https://d"},
            }
        },
    )
    old = client.get("/old")
    with pytest.warns(DeprecationWarning, match="next"):
        old.next()
    # The warning names the caller's line, whether the link is called or its `get` is.
    for follow in (old.next, old.next.get):
        with pytest.warns(DeprecationWarning) as caught:
            follow()
        assert [w.filename for w in caught] == [__file__]


def test_empty_body_gives_an_empty_resource(server: FakeServer, client: rp.Client) -> None:
    server.route("POST", "/actions", lambda request: (204, None))
    done = client.post("/actions", {"go": True})
    assert done.status == 204 and len(done) == 0 and done.url is None


def test_repr_and_html(demo_client: rp.Client) -> None:
    root = demo_client.root()
    assert repr(root).startswith("<Resource ") and "\n" not in repr(root)
    html = root._repr_html_()
    assert "<table>" in html and "get-creditors" in html
    evil = rp.Resource(root._session, {"x": "<script>"})  # a document the server might send
    assert "<script>" not in evil._repr_html_()


def test_relations_with_curies(server: FakeServer, client: rp.Client) -> None:
    server.add_resource(
        "/curied",
        {
            "_links": {
                "self": {"href": "/curied"},
                "curies": [{"name": "ex", "href": "https://ex.com/rels/{rel}", "templated": True}],
                "ex:thing": {"href": "/curied"},
            }
        },
    )
    res = client.get("/curied")
    assert res.links["ex:thing"].href == "/curied"
    assert res.links["https://ex.com/rels/thing"].href == "/curied"
