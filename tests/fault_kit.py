"""Shared by the fault, soak and fork suites: one face for the sync and async clients, and the
journal check that no POST or PATCH was sent twice."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import socket
from collections import Counter
from collections.abc import Iterator
from typing import Any

import recurring_payments as rp
from recurring_payments.testing import FakeServer

_references = itertools.count()


class Api:
    """A `Client` or an `AsyncClient` behind the same blocking calls (async ones run in
    `asyncio.run`, which the async client supports call after call)."""

    def __init__(
        self, server: FakeServer, kind: str, base: str | None = None, **settings: Any
    ) -> None:
        """A client of `server`'s app, sent to `base` when given (a proxy in front of it)."""
        self.kind = kind
        face = rp.Client if kind == "sync" else rp.AsyncClient
        self.client: Any = face(base or server.base_url, **server._client_settings(settings))

    def _run(self, result: Any) -> Any:
        return asyncio.run(result) if self.kind == "async" else result

    def get(self, url: str) -> Any:
        return self._run(self.client.get(url))

    def post(self, url: str, body: Any) -> Any:
        return self._run(self.client.post(url, body))

    def patch(self, url: str, body: Any) -> Any:
        return self._run(self.client.patch(url, body))

    def root(self) -> Any:
        return self._run(self.client.root())

    def close(self) -> None:
        if self.kind == "async":
            asyncio.run(self.client.aclose())
        else:
            self.client.close()


def install_routes(server: FakeServer) -> None:
    """`GET /thing`, `POST /orders` (201) and `PATCH /orders/1`, as the faults' targets."""
    server.add_resource("/thing", {"ok": True, "_links": {"self": {"href": "/thing"}}})
    server.route("POST", "/orders", lambda request: (201, {"reference": request.json["ref"]}))
    server.route("PATCH", "/orders/1", lambda request: {"patched": request.json["ref"]})


def unique_body() -> dict[str, str]:
    """A body no other request sends, so the journal tells each POST or PATCH apart."""
    return {"ref": f"ref-{next(_references)}"}


def assert_nothing_sent_twice(server: FakeServer) -> None:
    """Every POST and PATCH body reached the server at most once, except the single replay
    after a 401 that the protocol prescribes and the request a 307/308 asks to send elsewhere
    (both answers say the server did not process it)."""
    sent = Counter(
        (r.method, bytes(r.body))
        for r in server.requests
        if r.method in ("POST", "PATCH")
        and r.path != "/oauth/token"
        and r.status not in (401, 307, 308)
    )
    twice = {key: n for key, n in sent.items() if n > 1}
    assert not twice, f"sent more than once: {twice}"


def assert_still_works(server: FakeServer, api: Api) -> None:
    """After a fault the same client completes a GET, a POST and a PATCH, each sent once."""
    assert api.get("/thing")["ok"] is True
    body = unique_body()
    assert api.post("/orders", body)["reference"] == body["ref"]
    assert api.patch("/orders/1", body)["patched"] == body["ref"]
    assert_nothing_sent_twice(server)


def error_class(error: BaseException) -> type[rp.Error]:
    """The most specific public class of a library error (for exact-class assertions)."""
    assert isinstance(error, rp.Error), repr(error)
    return type(error)


@contextlib.contextmanager
def connects_hang(port: int) -> Iterator[None]:
    """While open, a TCP connect to 127.0.0.1:`port` hangs: a listener that never accepts, its
    accept queue filled, so Linux drops every further SYN (the client's connect waits for its
    retransmission, 1 s, 3 s, ...). Nothing can be written to that port."""
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(0)
    queued = socket.create_connection(("127.0.0.1", port))  # fills the queue of length 0 + 1
    waiting = socket.socket()
    waiting.setblocking(False)
    with contextlib.suppress(BlockingIOError):
        waiting.connect(("127.0.0.1", port))
    try:
        yield
    finally:
        for s in (waiting, queued, listener):
            s.close()
