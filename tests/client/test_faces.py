"""The core client behaviours, once for both faces (docs/guarantees.md): `Client` and
`AsyncClient` differ only in how they wait, so each test runs on each, through `face`."""

from __future__ import annotations

import asyncio
import inspect
import pickle
from collections.abc import Iterator
from typing import Any

import pytest

import recurring_payments as rp
from recurring_payments.testing import FakeServer


class Face:
    """A `Client` or an `AsyncClient`: `face(call)` is the call's result on either (a coroutine
    runs in `asyncio.run`, which the async client supports call after call)."""

    def __init__(self, kind: str, client: Any) -> None:
        self.kind = kind
        self.client = client

    def __call__(self, value: Any) -> Any:
        return asyncio.run(value) if inspect.iscoroutine(value) else value

    def close(self) -> None:
        if self.kind == "async":
            asyncio.run(self.client.aclose())
        else:
            self.client.close()


@pytest.fixture(params=["sync", "async"])
def face(request: pytest.FixtureRequest, demo: FakeServer) -> Iterator[Face]:
    client = demo.client() if request.param == "sync" else demo.async_client()
    face = Face(request.param, client)
    yield face
    face.close()


def sent(server: FakeServer, method: str) -> list[Any]:
    return [r for r in server.requests if r.method == method and r.path != "/oauth/token"]


def test_templated_follow(demo: FakeServer, face: Face) -> None:
    creditor = face(face.client.get_creditors(reference="democreditor"))
    assert creditor["name"] == "Demo Creditor SAS" and creditor.status == 200
    root = face(face.client.root())
    again = face(root.follow("get-creditors", reference="democreditor"))
    assert again.url == creditor.url and again.to_dict() == creditor.to_dict()
    assert sent(demo, "GET")[-1].query == {"reference": "democreditor"}
    link = root.get_creditors
    assert link.expand(reference="a b") == demo.base_url + "/creditors?reference=a%20b"


def test_client_get_of_a_template(face: Face) -> None:
    creditor = face(face.client.get("/creditors/{reference}", reference="democreditor"))
    assert creditor["reference"] == "democreditor"
    assert face(face.client.get(creditor.url)).to_dict() == creditor.to_dict()


def test_post_through_a_link(demo: FakeServer, face: Face) -> None:
    order = face(face.client.create_orders.post({"reference": "o-1", "started": True}))
    assert order.status == 201 and order.headers["Location"] == order.url
    assert sent(demo, "POST")[-1].json == {"reference": "o-1", "started": True}


def test_post_without_a_body_sends_an_empty_object(demo: FakeServer, face: Face) -> None:
    demo.add_link("do-thing", "/things")
    demo.route("POST", "/things", lambda request: (201, {"got": request.json}))
    assert face(face.client.do_thing.post())["got"] == {}
    assert face(face.client.post("/things", None))["got"] == {}
    assert [r.headers["content-type"] for r in sent(demo, "POST")] == ["application/json"] * 2


def test_patch_with_if_match(demo: FakeServer, face: Face) -> None:
    order = face(face.client.create_orders.post({"reference": "o-1"}))
    patched = face(order.links["self"].patch({"started": True}, if_match=order.etag))
    assert patched["started"] is True and patched.etag != order.etag
    assert sent(demo, "PATCH")[-1].headers["if-match"] == order.etag
    with pytest.raises(rp.PreconditionFailedError) as caught:
        face(face.client.patch(order.url, {"started": False}, if_match=order.etag))
    assert caught.value.status == 412 and caught.value.outcome_unknown is False
    assert face(face.client.get(order.url))["started"] is True  # nothing changed


def test_not_found(face: Face) -> None:
    with pytest.raises(rp.NotFoundError) as caught:
        face(face.client.get("/nowhere"))
    err = caught.value
    assert err.status == 404 and err.method == "GET" and err.url.endswith("/nowhere")
    assert isinstance(err.code, int) and err.message


def test_bad_variables_are_refused_before_sending(demo: FakeServer, face: Face) -> None:
    root = face(face.client.root())
    demo.clear_requests()
    with pytest.raises(
        TypeError, match=r"get-creditors' got unexpected variable\(s\) 'ref'; it declares reference"
    ):
        face(root.get_creditors(ref="x"))
    with pytest.raises(TypeError, match="'/creditors' is not a template"):
        face(face.client.get("/creditors", reference="x"))
    with pytest.raises(TypeError, match="is None"):
        face(face.client.get("/creditors/{reference}", reference=None))
    with pytest.raises(rp.TemplateError, match=r"is '\.\.'"):
        face(face.client.get("/creditors/{reference}", reference=".."))
    with pytest.raises(rp.TemplateError):
        face(face.client.get("/creditors/{reference"))
    assert sent(demo, "GET") == []


def test_resources_outlive_their_client(face: Face) -> None:
    creditor = face(face.client.get_creditors(reference="democreditor"))
    face.close()
    assert creditor.url is not None and creditor.url.endswith("/creditors/democreditor")
    assert creditor.get_mandates.expand(page=2).endswith(
        "/mandates?creditorReference=democreditor&page=2"
    )
    with pytest.raises(RuntimeError, match="closed"):
        face(creditor.fetch())


def test_reply_headers_and_the_facts_of_an_unparsable_reply(demo: FakeServer, face: Face) -> None:
    # A reply's headers reach Python as a native object that `Headers` reads on first use;
    # the URL and header pairs of a reply are built only when its body does not parse.
    headers = {"X-Note": "café", "X-Empty": ""}
    demo.respond_next(b'{"a": 1}', headers=headers, path="/creditors")
    res = face(face.client.get("/creditors"))
    assert res["a"] == 1
    assert res.headers["x-note"] == "café" and res.headers["X-EMPTY"] == ""
    assert res.headers["content-type"].startswith("application/hal+json")
    assert pickle.loads(pickle.dumps(res.headers)) == res.headers
    demo.respond_next(b'{"a": [1', status=201, headers=headers, path="/creditors")
    with pytest.raises(rp.ProtocolError) as caught:
        face(face.client.get("/creditors"))
    err = caught.value
    assert err.status == 201 and err.method == "GET" and err.url.endswith("/creditors")
    assert err.headers["x-note"] == "café"
