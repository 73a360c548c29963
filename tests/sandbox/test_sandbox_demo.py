"""demo=True: the recorded relations with working creditors, orders, mandates, documents."""

from __future__ import annotations

import json
import pathlib
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
from sandbox_http import Answer, Http

from recurring_payments import expand_uri_template
from recurring_payments.testing import FakeServer

RECORDED = pathlib.Path(__file__).parents[2] / "fixtures" / "recorded"
SLIMPAY_NS = "https://api.slimpay.net/alps#"


@pytest.fixture(scope="module")
def demo() -> Iterator[FakeServer]:
    with FakeServer(demo=True) as server:
        yield server


@pytest.fixture
def fresh() -> Iterator[FakeServer]:
    with FakeServer(demo=True) as server:
        yield server


class Walker:
    """Follows links like a client would: the entry point, then hrefs as given."""

    def __init__(self, server: FakeServer):
        self.server = server
        self.http = Http(server)
        self.token = self.http.token()
        self.root = self.get(server.base_url + "/").json

    def path(self, href: str) -> str:
        url = urlsplit(href)
        assert f"{url.scheme}://{url.netloc}" == self.server.base_url, href
        return url.path + (f"?{url.query}" if url.query else "")

    def get(self, href: str) -> Answer:
        return self.http.api("GET", self.path(href), token=self.token)

    def send(self, method: str, href: str, body: Any) -> Answer:
        return self.http.api(method, self.path(href), body, token=self.token)

    def href(self, resource: dict[str, Any], name: str, **variables: Any) -> str:
        link = resource["_links"][self.server.rel_namespace + name]
        if link.get("templated"):
            return expand_uri_template(link["href"], variables)
        return str(link["href"])


def test_entry_point_has_the_recorded_relations(demo: FakeServer) -> None:
    recorded = json.loads((RECORDED / "entry-point.json").read_text())["response"]["body"]
    root = Walker(demo).root
    assert len(root["_links"]) == len(recorded["_links"]) == 44
    ns, base = demo.rel_namespace, demo.base_url
    for rel, link in recorded["_links"].items():
        if rel in ("self", "profile"):
            continue
        ours = root["_links"][ns + rel.removeprefix(SLIMPAY_NS)]
        assert ours["href"] == link["href"].replace("https://api.preprod.slimpay.com", base)
        assert ours.get("templated", False) == link.get("templated", False)
    assert root["_links"][ns + "post-token"]["href"] == base + "/oauth/token"


def test_creditor(demo: FakeServer) -> None:
    w = Walker(demo)
    answer = w.get(w.href(w.root, "get-creditors", reference="democreditor"))
    assert answer.status == 200
    creditor = answer.json
    assert creditor["reference"] == "democreditor"
    assert creditor["_links"]["self"]["href"] == demo.base_url + "/creditors/democreditor"
    assert w.get(creditor["_links"]["self"]["href"]).json["reference"] == "democreditor"
    assert w.get(w.href(w.root, "get-creditors", reference="nobody")).status == 403
    assert w.get(w.href(w.root, "get-creditors")).status == 400


def test_create_order(fresh: FakeServer) -> None:
    w = Walker(fresh)
    recorded = json.loads((RECORDED / "order-created.json").read_text())
    answer = w.send("POST", w.href(w.root, "create-orders"), recorded["request"]["body"])
    assert answer.status == 201
    order = answer.json
    assert answer.headers["location"] == order["_links"]["self"]["href"]
    assert answer.headers["location"].startswith(fresh.base_url + "/orders/")
    expected = recorded["response"]["body"]
    assert set(order) == set(expected)
    assert {k.removeprefix(fresh.rel_namespace) for k in order["_links"]} == {
        k.removeprefix(SLIMPAY_NS) for k in expected["_links"]
    }
    assert order["state"] == "open.running"
    assert order["reference"] == order["id"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+0000", order["dateCreated"])
    approval = order["_links"][fresh.rel_namespace + "user-approval"]["href"]
    assert urlsplit(approval).netloc != urlsplit(fresh.base_url).netloc
    assert approval.startswith("https://checkout.sandbox.invalid/")
    extended = order["_links"][fresh.rel_namespace + "extended-user-approval"]
    assert extended["templated"] is True
    iframe = w.get(expand_uri_template(extended["href"], {"mode": "iframeembedded"})).json
    assert iframe["url"] == approval
    # Follow the order's own links.
    assert w.get(order["_links"]["self"]["href"]).json["id"] == order["id"]
    subscriber = w.get(w.href(order, "get-subscriber")).json
    assert subscriber["reference"] == "subscriber01"
    items = w.get(w.href(order, "get-order-items")).json["_embedded"]["items"]
    assert items[0]["type"] == "signMandate"
    assert w.get(w.href(w.root, "search-order-by-id", id=order["id"])).status == 200
    by_ref = w.get(w.href(w.root, "get-orders", reference=order["reference"]))
    assert by_ref.json["id"] == order["id"]


def test_order_rules(fresh: FakeServer) -> None:
    w = Walker(fresh)
    href = w.href(w.root, "create-orders")
    assert w.send("POST", href, {"reference": "o-1", "started": True}).status == 201
    duplicate = w.send("POST", href, {"reference": "o-1"})
    assert (duplicate.status, duplicate.json["code"]) == (409, 901)
    foreign = w.send("POST", href, {"creditor": {"reference": "someone-else"}})
    assert (foreign.status, foreign.json["code"]) == (403, 904)
    assert w.send("POST", href, [1, 2]).status == 400
    assert w.send("POST", href, {"started": "yes"}).status == 400
    created = w.send("POST", href, {"started": False}).json
    assert created["state"] == "open.not_running"
    assert "dateStarted" not in created
    missing = w.get(w.href(w.root, "search-order-by-id", id="nope"))
    assert (missing.status, missing.json["code"]) == (404, 902)


def test_search_orders_pages(fresh: FakeServer) -> None:
    w = Walker(fresh)
    for i in range(5):
        w.send("POST", w.href(w.root, "create-orders"), {"reference": f"o-{i}", "started": i < 3})
    page = w.get(w.href(w.root, "search-orders", state="open.running", size=2)).json
    assert page["page"] == {"size": 2, "totalElements": 3, "totalPages": 2, "number": 0}
    assert [o["reference"] for o in page["_embedded"]["orders"]] == ["o-0", "o-1"]
    assert [
        o["reference"] for o in w.get(page["_links"]["next"]["href"]).json["_embedded"]["orders"]
    ] == ["o-2"]


def test_patch_order(fresh: FakeServer) -> None:
    w = Walker(fresh)
    order = w.send("POST", w.href(w.root, "create-orders"), {"reference": "o-p"}).json
    self_href = order["_links"]["self"]["href"]
    patch = {"state": "closed.aborted.aborted_byclient", "sendUserApproval": None, "x": {"y": 1}}
    answer = w.send("PATCH", self_href, patch)
    assert answer.status == 200
    patched = answer.json
    assert patched["state"] == "closed.aborted.aborted_byclient"
    assert "sendUserApproval" not in patched
    assert patched["x"] == {"y": 1}
    assert patched["_links"] == order["_links"]
    again = w.send("PATCH", self_href, {"x": {"y": None, "z": 2}}).json
    assert again["x"] == {"z": 2}
    assert w.get(self_href).json == again
    # Merge patches only: a PATCH with application/json is 415; read-only fields are 400.
    path = w.path(self_href)
    assert w.http.api("PATCH", path, b"{}", content_type="application/json").status == 415
    assert w.send("PATCH", self_href, {"id": "other"}).status == 400
    assert w.send("PATCH", self_href, [1]).status == 400


def mandate_pages(w: Walker, href: str) -> Iterator[dict[str, Any]]:
    while True:
        page = w.get(href).json
        yield page
        if "next" not in page["_links"]:
            return
        href = page["_links"]["next"]["href"]


def test_mandates_pages(demo: FakeServer) -> None:
    w = Walker(demo)
    creditor = w.get(w.href(w.root, "get-creditors", reference="democreditor")).json
    first = w.href(creditor, "get-mandates", size=50)
    pages = list(mandate_pages(w, first))
    assert [p["page"]["number"] for p in pages] == [0, 1, 2]
    assert [len(p["_embedded"]["mandates"]) for p in pages] == [50, 50, 20]
    assert pages[0]["page"] == {"size": 50, "totalElements": 120, "totalPages": 3, "number": 0}
    assert "prev" not in pages[0]["_links"]
    assert w.path(pages[1]["_links"]["prev"]["href"]) == w.path(pages[0]["_links"]["self"]["href"])
    assert pages[2]["_links"]["last"] == pages[2]["_links"]["self"]
    assert pages[1]["_links"]["first"] == pages[0]["_links"]["self"]
    assert "creditorReference=democreditor" in pages[1]["_links"]["self"]["href"]
    references = [m["reference"] for p in pages for m in p["_embedded"]["mandates"]]
    assert len(set(references)) == 120


def test_embedded_mandates_are_partial(demo: FakeServer) -> None:
    w = Walker(demo)
    page = w.get(w.href(w.root, "search-mandates", creditorReference="democreditor", size=5)).json
    item = page["_embedded"]["mandates"][0]
    assert "signatory" not in item
    full = w.get(item["_links"]["self"]["href"]).json
    assert full["reference"] == item["reference"]
    assert full["signatory"]["billingAddress"]["country"] == "FR"
    assert {k: full[k] for k in item if k != "_links"} == {
        k: v for k, v in item.items() if k != "_links"
    }


def test_mandate_lookups_and_filters(demo: FakeServer) -> None:
    w = Walker(demo)
    one = w.get(w.href(w.root, "get-mandates", reference="MND-0007")).json
    assert one["reference"] == "MND-0007"
    assert w.get(w.href(w.root, "get-mandates", rum=one["rum"])).json["id"] == one["id"]
    assert w.get(w.href(w.root, "get-mandates", id=one["id"])).json["rum"] == one["rum"]
    assert w.get(w.href(w.root, "get-mandates", reference="MND-9999")).status == 404
    revoked = w.get(w.href(w.root, "search-mandates", state="revoked", size=100)).json
    assert revoked["page"]["totalElements"] == 12
    assert {m["state"] for m in revoked["_embedded"]["mandates"]} == {"revoked"}
    assert w.get(w.href(w.root, "search-mandates", creditorReference="other")).status == 403
    for bad in ({"size": 0}, {"size": 101}, {"page": -1}, {"size": "x"}):
        answer = w.get(w.href(w.root, "search-mandates", **bad))
        assert (answer.status, answer.json["code"]) == (400, 910)
    for size in ("0", "1000"):  # one true range, whichever side is passed
        answer = w.get(w.href(w.root, "search-mandates", size=size))
        assert answer.json["message"] == f'size must be an integer between 1 and 100, not "{size}"'
    beyond = w.get(w.href(w.root, "search-mandates", page=9, size=50)).json
    assert beyond["_embedded"]["mandates"] == []
    assert "next" not in beyond["_links"]


def test_documents_are_a_link_array(demo: FakeServer) -> None:
    w = Walker(demo)
    docs = w.get(w.href(w.root, "get-documents", creditorReference="democreditor")).json
    links = docs["_links"][demo.rel_namespace + "get-document"]
    assert isinstance(links, list)
    assert len(links) == docs["count"] == 120
    assert links[0]["type"] == "application/pdf"
    one = w.get(w.href(w.root, "get-documents", reference="MND-0003")).json
    [link] = one["_links"][demo.rel_namespace + "get-document"]
    document = w.get(link["href"]).json
    assert document["reference"] == "MND-0003"
    content = w.get(w.href(document, "get-binary-content")).json
    assert content["contentType"] == "application/pdf"
    mandate = w.get(w.href(document, "get-mandate")).json
    assert mandate["reference"] == "MND-0003"


def test_unimplemented_relations_are_404(demo: FakeServer) -> None:
    w = Walker(demo)
    answer = w.get(w.href(w.root, "search-payments"))
    assert (answer.status, answer.json["code"]) == (404, 902)


def test_admin_links_list_apps_and_generate_a_secret(fresh: FakeServer) -> None:
    fresh.add_admin("democreditor", "admin", "pw")
    http = Http(fresh)
    admin = http.token("api_admin", user="democreditor#admin", password="pw")
    ns = fresh.rel_namespace
    root = http.api("GET", "/", token=admin).json
    assert len(root["_links"]) == 46
    apps_href = root["_links"][ns + "get-apps"]["href"]
    apps = http.api("GET", urlsplit(apps_href).path, token=admin).json["_embedded"]["apps"]
    assert [a["appName"] for a in apps] == ["sandbox-app"]
    assert "appSecret" not in apps[0]
    template = root["_links"][ns + "generate-app-secret"]
    assert template["templated"] is True
    href = expand_uri_template(template["href"], {"appName": "sandbox-app"})
    answer = http.api("POST", urlsplit(href).path, token=admin)
    assert answer.status == 201
    assert answer.headers["location"] == fresh.base_url + "/apps/sandbox-app"
    secret = answer.json["appSecret"]
    # The old secret is refused from now on; the new one works.
    assert http.token_answer().status == 401
    assert http.token_answer(password=secret).status == 200
    missing = http.api("POST", "/apps/nobody/secret", token=admin)
    assert (missing.status, missing.json["code"]) == (404, 902)


def test_admin_resources_refuse_app_tokens(fresh: FakeServer) -> None:
    http = Http(fresh)
    root = http.api("GET", "/").json
    assert fresh.rel_namespace + "get-apps" not in root["_links"]
    for method, path in [("GET", "/apps"), ("GET", "/apps/sandbox-app")]:
        answer = http.api(method, path)
        assert (answer.status, answer.json["code"]) == (403, 904)
    answer = http.api("POST", "/apps/sandbox-app/secret")
    assert (answer.status, answer.json["code"]) == (403, 904)
