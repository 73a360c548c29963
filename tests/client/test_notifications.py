"""Notifications (docs/guides/notifications.md): `parse_notification` reads a posted HAL body
without I/O and refuses anything unusable; `verify_notification` then GETs its `self` link, which
must be on the API's origin, so a forged body never sends the token elsewhere. Both faces; the
sandbox's `notification_body` and `notify`."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import pytest
from conftest import api_requests, header

import recurring_payments as rp
from recurring_payments.testing import FakeServer

FACES = ["sync", "async"]


def on(face: str, server: FakeServer, use: Callable[[Any], Any], **settings: Any) -> Any:
    """`use(client)` with a fresh client of `face`; an awaitable result is awaited."""
    if face == "sync":
        with server.client(**settings) as client:
            return use(client)

    async def run() -> Any:
        async with server.async_client(**settings) as client:
            result = use(client)
            return await result if asyncio.iscoroutine(result) else result

    return asyncio.run(run())


def self_doc(href: Any, **link: Any) -> bytes:
    return json.dumps({"state": "x", "_links": {"self": {"href": href, **link}}}).encode()


# --- what a notification is ---------------------------------------------------------------------


@pytest.mark.parametrize("face", FACES)
def test_parse_gives_the_posted_document_without_any_request(demo: FakeServer, face: str) -> None:
    body = demo.notification_body("/creditors/democreditor")
    demo.clear_requests()
    claim = on(face, demo, lambda c: c.parse_notification(body))
    assert demo.requests == []  # no token request, no GET
    assert isinstance(claim, rp.AsyncResource if face == "async" else rp.Resource)
    assert claim["name"] == "Demo Creditor SAS"
    assert claim.url == demo.base_url + "/creditors/democreditor"
    assert (claim.status, dict(claim.headers), claim.partial) == (None, {}, False)
    # A str body (a framework that decoded it) reads the same.
    assert on(face, demo, lambda c: c.parse_notification(body.decode())).data == claim.data


def test_a_parsed_notification_is_bound_to_the_client(demo: FakeServer) -> None:
    body = demo.notification_body("/creditors/democreditor")
    with demo.client() as client:
        claim = client.parse_notification(body)
        assert claim.fetch()["name"] == "Demo Creditor SAS"  # its links are followable
        assert claim.get_mandates(size=5).status == 200


@pytest.mark.parametrize("face", FACES)
def test_verify_gets_the_self_link_and_keeps_nothing_of_the_body(
    demo: FakeServer, face: str
) -> None:
    real = demo.notification_body("/creditors/democreditor")
    forged = json.loads(real)
    forged["name"] = "Forged Creditor"
    forged["_links"]["fake-extra"] = {"href": "https://evil.example/steal"}
    demo.clear_requests()
    verified = on(face, demo, lambda c: c.verify_notification(json.dumps(forged).encode()))
    assert verified["name"] == "Demo Creditor SAS" and verified.status == 200
    assert "fake-extra" not in verified.links
    gets = api_requests(demo, "GET")
    assert [(r.path, (header(r, "authorization") or "")[:7]) for r in gets] == [
        ("/creditors/democreditor", "Bearer ")
    ]


@pytest.mark.attack("origin")
@pytest.mark.parametrize("face", FACES)
def test_a_forged_self_on_the_api_costs_one_get_and_is_an_http_error(
    server: FakeServer, face: str
) -> None:
    with pytest.raises(rp.NotFoundError):
        on(face, server, lambda c: c.verify_notification(self_doc("/orders/forged")))
    assert [r.path for r in api_requests(server)] == ["/orders/forged"]


@pytest.mark.parametrize("face", FACES)
def test_verify_is_a_call_with_retries(demo: FakeServer, face: str) -> None:
    body = demo.notification_body("/creditors/democreditor")
    demo.fail_next(503, path="/creditors/democreditor", headers={"Retry-After": "0"})
    assert on(face, demo, lambda c: c.verify_notification(body)).status == 200
    statuses = [r.status for r in api_requests(demo) if r.path == "/creditors/democreditor"]
    assert statuses == [503, 200]


@pytest.mark.parametrize("face", FACES)
def test_relative_and_templated_self_links_resolve_against_base_url(
    server: FakeServer, face: str
) -> None:
    server.add_resource("/things/1", {"id": 1, "_links": {"self": {"href": "/things/1"}}})
    for body in (
        self_doc("/things/1"),
        self_doc("things/1"),
        self_doc(server.base_url + "/things/1"),
        self_doc("/things/1", templated=True),  # a template without variables
        json.dumps({"_links": {"self": [{"href": "/things/1"}]}}).encode(),  # array of one
    ):
        assert on(face, server, lambda c, b=body: c.verify_notification(b))["id"] == 1


# --- attacks: refused before anything is sent --------------------------------------------------

REFUSED_SELF = {
    "another host": "https://evil.example/orders/1",
    "another port": "http://127.0.0.1:1/orders/1",
    "another scheme": "https://127.0.0.1:{port}/orders/1",
    "userinfo": "http://user:pw@127.0.0.1:{port}/orders/1",
    "userinfo without password": "http://user@127.0.0.1:{port}/orders/1",
    "network-path reference": "//evil.example/orders/1",
    "backslashes": "http:\\\\evil.example\\orders\\1",
    "localhost for 127.0.0.1": "http://localhost:{port}/orders/1",
}


@pytest.mark.attack("origin")
@pytest.mark.parametrize("face", FACES)
@pytest.mark.parametrize("case", list(REFUSED_SELF))
def test_a_self_link_off_the_apis_origin_is_refused_before_sending(
    server: FakeServer, face: str, case: str
) -> None:
    port = server.base_url.rsplit(":", 1)[1]
    body = self_doc(REFUSED_SELF[case].format(port=port))
    for method in ("parse_notification", "verify_notification"):
        with pytest.raises(rp.ProtocolError, match="notification refused") as caught:
            on(face, server, lambda c, m=method: getattr(c, m)(body))
        assert "pw" not in str(caught.value)  # a password is never quoted
        assert caught.value.status is None and getattr(caught.value, "request_id", None) is None
    assert server.requests == []  # not even a token request


BAD_SELF: dict[str, Any] = {
    "no _links": {"state": 1},
    "no self": {"_links": {"next": {"href": "/x"}}},
    "empty href": {"_links": {"self": {"href": ""}}},
    "empty array": {"_links": {"self": []}},
    "array of two": {"_links": {"self": [{"href": "/a"}, {"href": "/b"}]}},
    "template with variables": {"_links": {"self": {"href": "/orders/{id}", "templated": True}}},
    "malformed template": {"_links": {"self": {"href": "/orders/{id", "templated": True}}},
}


@pytest.mark.attack("inputs")
@pytest.mark.parametrize("face", FACES)
@pytest.mark.parametrize("case", list(BAD_SELF))
def test_a_notification_without_a_usable_self_link_is_refused(
    server: FakeServer, face: str, case: str
) -> None:
    body = json.dumps(BAD_SELF[case]).encode()
    for method in ("parse_notification", "verify_notification"):
        with pytest.raises(rp.ProtocolError, match="notification refused"):
            on(face, server, lambda c, m=method: getattr(c, m)(body))
    assert server.requests == []


NOT_HAL: dict[str, bytes | str] = {
    "empty": b"",
    "not JSON": b"<html>hello</html>",
    "truncated": b'{"_links": {"self": {"href": "/x"}',
    "an array": b'[{"_links": {"self": {"href": "/x"}}}]',
    "a string": b'"/x"',
    "null": b"null",
    "not UTF-8": b'{"a": "\xff", "_links": {"self": {"href": "/x"}}}',
    "lone surrogate": '{"a": "\udc80", "_links": {"self": {"href": "/x"}}}',
    "links not an object": b'{"_links": [1]}',
    "deep": b'{"a": ' + b"[" * 5000 + b"]" * 5000 + b', "_links": {"self": {"href": "/x"}}}',
    "deep str": '{"a": ' + "[" * 200 + "]" * 200 + ', "_links": {"self": {"href": "/x"}}}',
}


@pytest.mark.attack("inputs")
@pytest.mark.parametrize("face", FACES)
@pytest.mark.parametrize("case", list(NOT_HAL))
def test_a_body_that_is_not_a_hal_object_is_refused(
    server: FakeServer, face: str, case: str
) -> None:
    for method in ("parse_notification", "verify_notification"):
        with pytest.raises(rp.ProtocolError, match="notification refused"):
            on(face, server, lambda c, m=method: getattr(c, m)(NOT_HAL[case]))
    assert server.requests == []


@pytest.mark.attack("inputs")
@pytest.mark.parametrize("face", FACES)
def test_a_body_over_max_response_size_is_refused_counting_utf8_bytes(
    server: FakeServer, face: str
) -> None:
    server.add_resource("/x", {"_links": {"self": {"href": "/x"}}})
    fits = '{"_links": {"self": {"href": "/x"}}, "pad": "' + "é" * 10 + '"}'
    size = len(fits.encode())  # 20 bytes of é, 10 characters
    assert on(face, server, lambda c: c.parse_notification(fits), max_response_size=size)
    assert on(face, server, lambda c: c.parse_notification(fits.encode()), max_response_size=size)
    for body in (fits, fits.encode(), bytearray(fits.encode()), memoryview(fits.encode())):
        with pytest.raises(rp.ProtocolError, match="larger than max_response_size"):
            on(face, server, lambda c, b=body: c.verify_notification(b), max_response_size=size - 1)
    huge = b'{"pad": "' + b"x" * (33 * 2**20) + b'"}'  # over the default 32 MiB
    with pytest.raises(rp.ProtocolError, match="larger than max_response_size"):
        on(face, server, lambda c: c.parse_notification(huge))
    assert [r.path for r in api_requests(server)] == []


@pytest.mark.attack("inputs")
@pytest.mark.parametrize("face", FACES)
def test_a_body_of_another_type_is_a_type_error(server: FakeServer, face: str) -> None:
    for body in ({"_links": {}}, None, 12):
        with pytest.raises(TypeError, match="raw body"):
            on(face, server, lambda c, b=body: c.parse_notification(b))


def test_the_async_faces_parse_is_not_awaited_and_verify_is(server: FakeServer) -> None:
    import inspect

    assert not inspect.iscoroutinefunction(rp.AsyncClient.parse_notification)
    assert inspect.iscoroutinefunction(rp.AsyncClient.verify_notification)
    assert not inspect.iscoroutinefunction(rp.AsyncClient.attach)


# --- the sandbox's side ------------------------------------------------------------------------


def test_notification_body_is_what_a_get_serves(demo: FakeServer, demo_client: rp.Client) -> None:
    order = demo_client.create_orders.post({"reference": "o-n1", "started": True})
    path = order.url.removeprefix(demo.base_url)
    demo.clear_requests()
    body = demo.notification_body(path)
    assert demo.requests == []  # nothing journaled, no token needed
    served = demo_client.get(order.url)
    assert json.loads(body) == served.to_dict()
    # Static resources, the entry point, a query: as served; a document without self gets one.
    demo.add_resource("/plain", {"id": 5})
    assert json.loads(demo.notification_body("/plain")) == {
        "id": 5,
        "_links": {"self": {"href": demo.base_url + "/plain"}},
    }
    assert json.loads(demo.notification_body("/"))["_links"]["self"]["href"] == demo.base_url + "/"
    page = json.loads(demo.notification_body("/mandates?creditorReference=democreditor&size=5"))
    assert len(page["_embedded"]["mandates"]) == 5


def test_notification_body_of_a_route(server: FakeServer) -> None:
    server.route("GET", "/things/{id}", lambda r: {"id": r.path_params["id"], "q": r.query})
    server.route("GET", "/empty", lambda r: None)
    server.route("GET", "/boom", lambda r: 1 / 0)
    server.route("POST", "/only-post", lambda r: {})
    assert json.loads(server.notification_body("/things/7?x=1")) == {
        "id": "7",
        "q": {"x": "1"},
        "_links": {"self": {"href": server.base_url + "/things/7?x=1"}},
    }
    for path in ("/nowhere", "/empty", "/boom", "/only-post"):
        with pytest.raises(ValueError, match="serves no document"):
            server.notification_body(path)
    with pytest.raises(ValueError, match="start with '/'"):
        server.notification_body("things/7")
    with pytest.raises(TypeError):
        server.notification_body(7)  # type: ignore[arg-type]
    assert server.requests == []


def test_notification_body_needs_a_running_server() -> None:
    with pytest.raises(RuntimeError, match="not running"):
        FakeServer().notification_body("/")


class _Receiver(BaseHTTPRequestHandler):
    """A notification URL: records what it got and answers the status the test set."""

    answer = 204
    received: list[tuple[str, str, bytes]] = []  # noqa: RUF012

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.received.append((self.path, self.headers["Content-Type"], body))
        self.send_response(self.answer)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[tuple[HTTPServer, type[_Receiver]]]:
    handler = type("Receiver", (_Receiver,), {"received": []})
    app = HTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=app.serve_forever, daemon=True)
    thread.start()
    try:
        yield app, handler
    finally:
        app.shutdown()
        app.server_close()
        thread.join(5)


def test_notify_posts_the_body_and_returns_the_status(
    demo: FakeServer, receiver: tuple[HTTPServer, type[_Receiver]]
) -> None:
    app, handler = receiver
    url = f"http://127.0.0.1:{app.server_port}/hooks/rp?app=1"
    assert demo.notify(url, "/creditors/democreditor") == 204
    ((path, content_type, body),) = handler.received
    assert path == "/hooks/rp?app=1"
    assert content_type == f'application/hal+json; profile="{demo.profile}"'
    assert body == demo.notification_body("/creditors/democreditor")
    handler.answer = 500  # returned, not raised
    assert demo.notify(url, "/creditors/democreditor") == 500
    handler.answer = 302  # not followed
    assert demo.notify(url, "/creditors/democreditor") == 302
    assert len(handler.received) == 3
    with pytest.raises(ValueError, match="serves no document"):
        demo.notify(url, "/nowhere")
    for bad in ("ftp://127.0.0.1/x", "/relative", "http://u:p@127.0.0.1/x"):
        with pytest.raises(ValueError, match="url must"):
            demo.notify(bad, "/creditors/democreditor")
    assert len(handler.received) == 3
