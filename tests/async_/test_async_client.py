"""The asyncio client (docs/guides/asyncio.md): AsyncClient, AsyncResource, AsyncLink over the
sandbox."""

from __future__ import annotations

import asyncio
import builtins
import inspect
import itertools
import logging
import os
import select
import signal
import sys
import threading
import time
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import api_requests, header

import recurring_payments as rp
from recurring_payments.testing import FakeServer


@pytest.fixture
def demo_aclient(demo: FakeServer) -> Iterator[rp.AsyncClient]:
    client = demo.async_client()
    yield client
    asyncio.run(client.aclose())


def add_things(server: FakeServer, count: int) -> None:
    server.add_link("get-thing", "/things/{id}", templated=True)
    for i in range(count):
        server.add_resource(f"/things/{i}", {"id": i, "_links": {"self": {"href": f"/things/{i}"}}})


# --- the full flow ---------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_full_flow_over_the_demo(demo: FakeServer, demo_aclient: rp.AsyncClient) -> None:
    client = demo_aclient
    root = await client.root()
    assert isinstance(root, rp.AsyncResource) and root.status == 200
    assert await client.root() is root

    # A templated relation of the entry point, called on the client.
    creditor = await client.get_creditors(reference="democreditor")
    assert isinstance(creditor, rp.AsyncResource)
    assert creditor["reference"] == "democreditor" and creditor.status == 200
    assert (await root.follow("get-creditors", reference="democreditor")).to_dict() == (
        creditor.to_dict()
    )
    gets = api_requests(demo, "GET")
    assert [r.path for r in gets].count("/") == 1  # the entry point was fetched once
    assert gets[1].path == "/creditors" and gets[1].query == {"reference": "democreditor"}

    # POST 201, then PATCH (a merge patch) through the order's own link.
    order = await client.create_orders.post(
        {"reference": "o-1", "creditor": {"reference": "democreditor"}, "started": True}
    )
    assert order.status == 201 and order.headers.get("location") == order.url
    (post,) = api_requests(demo, "POST")
    assert header(post, "content-type") == "application/json" and post.json["reference"] == "o-1"
    self_link = order.links["self"]
    assert isinstance(self_link, rp.AsyncLink)
    patched = await self_link.patch({"started": False})
    (patch,) = api_requests(demo, "PATCH")
    assert header(patch, "content-type") == "application/merge-patch+json"
    assert patched["started"] is False and order["started"] is True

    # Pages of a collection, as an async iterator.
    demo.clear_requests()
    first = await client.search_mandates(creditorReference="democreditor", size=25)
    pages = [page async for page in first.pages()]
    assert len(pages) >= 2 and pages[0] is first
    assert all(isinstance(page, rp.AsyncResource) for page in pages)
    references = [m["reference"] for page in pages for m in page.embedded["mandates"]]
    assert len(references) == len(set(references)) == first["page"]["totalElements"]
    assert len(api_requests(demo, "GET")) == len(pages)  # one GET per page, no more

    # An embedded item is partial; fetch() gets the full representation.
    item = first.mandates[0]
    assert isinstance(item, rp.AsyncResource) and item.partial and item.status is None
    demo.clear_requests()
    full = await item.fetch()
    assert not full.partial and full.status == 200
    assert full["reference"] == item["reference"] and set(item).issubset(set(full))
    (fetched,) = api_requests(demo)
    assert item.url is not None and item.url.endswith(fetched.path)


@pytest.mark.asyncio
async def test_client_level_get_post_patch(server: FakeServer, aclient: rp.AsyncClient) -> None:
    add_things(server, 2)
    server.route("POST", "/things", lambda request: (201, {"id": 9, **request.json}))
    server.route("PATCH", "/things/{id}", lambda request: {"patched": request.json})
    thing = await aclient.get("/things/{id}", id=1)
    assert thing["id"] == 1 and thing.url == f"{server.base_url}/things/1"
    created = await aclient.post("/things", {"name": "n"})
    assert created.status == 201 and created["name"] == "n"
    patched = await aclient.patch("/things/{id}", {"name": None}, id=1)
    assert patched["patched"] == {"name": None}
    assert [(r.method, r.path) for r in api_requests(server)] == [
        ("GET", "/things/1"),
        ("POST", "/things"),
        ("PATCH", "/things/1"),
    ]
    with pytest.raises(TypeError, match="idd"):
        await aclient.get("/things/{id}", idd=1)


# --- the token shared by tasks ---------------------------------------------------------------


@pytest.mark.asyncio
async def test_64_concurrent_first_calls_share_one_token(
    server: FakeServer, aclient: rp.AsyncClient
) -> None:
    add_things(server, 64)
    assert aclient.token is None
    things = await asyncio.gather(*(aclient.get_thing(id=i) for i in range(64)))
    assert [t["id"] for t in things] == list(range(64))
    assert len(server.token_requests) == 1
    gets = api_requests(server, "GET")
    assert [r.path for r in gets].count("/") == 1  # the entry point, fetched once for all
    assert len(gets) == 65
    token = aclient.token
    assert token is not None and token.scope == "api"
    bearers = {header(r, "authorization") for r in gets}
    assert len(bearers) == 1 and next(iter(bearers)).startswith("Bearer ")


@pytest.mark.asyncio
async def test_renewal_after_expiry_under_concurrency(
    server: FakeServer, aclient: rp.AsyncClient
) -> None:
    add_things(server, 32)
    await aclient.root()
    before = aclient.token
    server.expire_tokens()
    server.clear_requests()
    things = await asyncio.gather(*(aclient.get_thing(id=i) for i in range(32)))
    assert [t.status for t in things] == [200] * 32
    assert len(server.token_requests) == 1  # one new token for every task
    statuses: dict[str, list[int]] = {}
    for r in api_requests(server):
        statuses.setdefault(r.path, []).append(r.status)
    assert sorted(statuses) == sorted(f"/things/{i}" for i in range(32))
    # Each request was sent once, or refused once with the old token and replayed once.
    assert all(s in ([200], [401, 200]) for s in statuses.values()), statuses
    assert any(s == [401, 200] for s in statuses.values())
    assert aclient.token is not None and aclient.token != before


@pytest.mark.asyncio
async def test_authenticate_and_token(server: FakeServer, aclient: rp.AsyncClient) -> None:
    assert aclient.token is None
    token = await aclient.authenticate()
    assert isinstance(token, rp.Token) and token.scope == "api"
    assert aclient.token == token
    assert len(server.token_requests) == 1 and api_requests(server) == []


# --- errors ----------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_server_error_after_the_get_retries(server: FakeServer) -> None:
    async with server.async_client(retries=1) as client:
        await client.root()
        server.clear_requests()
        server.fail_next(status=502, count=5, path="/")
        with pytest.raises(rp.ServerError) as caught:
            await client.get("/")
        assert caught.value.status == 502
        assert len(api_requests(server, "GET")) == 2  # the request and its one retry


@pytest.mark.asyncio
async def test_post_is_sent_once_on_a_server_error(
    server: FakeServer, aclient: rp.AsyncClient
) -> None:
    server.route("POST", "/orders", lambda request: (201, {"id": 1}))
    await aclient.root()
    server.fail_next(status=503, count=1, path="/orders")
    with pytest.raises(rp.ServerError) as caught:
        await aclient.post("/orders", {"reference": "once"})
    assert caught.value.status == 503 and caught.value.method == "POST"
    assert len(api_requests(server, "POST")) == 1
    assert (await aclient.post("/orders", {"reference": "twice"})).status == 201


@pytest.mark.asyncio
async def test_refused_credentials(server: FakeServer) -> None:
    creds = rp.AppCredentials(server.credentials.app_name, "wrong-secret-123")
    async with rp.AsyncClient(server.base_url, credentials=creds, profile=server.profile) as c:
        with pytest.raises(rp.AuthenticationError) as caught:
            await c.get("/")
        with pytest.raises(rp.AuthenticationError):
            await c.authenticate()
    err = caught.value
    assert err.status in (400, 401)
    assert err.error == "invalid_client" and err.error_description
    assert "wrong-secret-123" not in str(err) and "wrong-secret-123" not in repr(err)
    assert len(server.token_requests) == 2 and api_requests(server) == []


@pytest.mark.asyncio
async def test_malformed_body_is_a_protocol_error(
    server: FakeServer, aclient: rp.AsyncClient
) -> None:
    await aclient.root()
    server.malformed_next(path="/")
    with pytest.raises(rp.ProtocolError, match="JSON"):
        await aclient.get("/")
    assert (await aclient.get("/")).status == 200


@pytest.mark.asyncio
async def test_timeout(server: FakeServer) -> None:
    async with server.async_client(timeout=0.3, retries=0) as client:
        await client.root()
        server.delay_next(2.0, path="/")
        started = time.monotonic()
        with pytest.raises(rp.TimeoutError) as caught:
            await client.get("/")
        assert time.monotonic() - started < 1.5
        assert isinstance(caught.value, builtins.TimeoutError)
        assert isinstance(caught.value, rp.TransportError)
        assert caught.value.method == "GET"
        assert (await client.get("/")).status == 200


@pytest.mark.asyncio
async def test_unknown_relation_of_the_entry_point(aclient: rp.AsyncClient) -> None:
    with pytest.raises(rp.LinkNotFoundError, match="available"):
        await aclient.get_nothing()
    # Once the entry point is known, a wrong name fails at once, like an attribute should.
    with pytest.raises(rp.LinkNotFoundError):
        aclient.get_nothing  # noqa: B018
    assert not hasattr(aclient, "_private")


# --- cancellation and the event loop ---------------------------------------------------------


@pytest.mark.asyncio
async def test_cancelled_request_then_a_successful_one(
    server: FakeServer, aclient: rp.AsyncClient
) -> None:
    await aclient.root()
    server.delay_next(2.0, path="/")
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(aclient.get("/"), 0.2)
    started = time.monotonic()
    assert (await aclient.get("/")).status == 200
    assert time.monotonic() - started < 1.0


async def _cancel_while_the_token_stalls(
    server: FakeServer, task: asyncio.Future[Any], requested: int
) -> None:
    """Cancel ``task`` while it waits on the stalled token request (the ``requested``-th)."""
    await asyncio.sleep(0.3)
    assert len(server.token_requests) == requested and not task.done()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


@pytest.mark.asyncio
async def test_cancelling_a_token_request_releases_the_token_lock(
    server: FakeServer, aclient: rp.AsyncClient
) -> None:
    # The first call holds the token lock while the token endpoint stalls. Only if cancelling
    # the task drops the Rust future (and its lock) can the next call get a token at once.
    server.delay_next(3.0, path="/oauth/token")
    task = asyncio.ensure_future(aclient.get("/"))
    await _cancel_while_the_token_stalls(server, task, requested=1)
    started = time.monotonic()
    assert (await aclient.get("/")).status == 200
    assert time.monotonic() - started < 1.0
    assert len(server.token_requests) == 2


@pytest.mark.asyncio
@pytest.mark.parametrize("method", ["call", "get", "post", "patch"])
async def test_cancelling_a_link_request_releases_the_token_lock(
    server: FakeServer, aclient: rp.AsyncClient, method: str
) -> None:
    # A link's methods await the request themselves (not through another coroutine): each
    # must abort the request when cancelled, or the stalled token fetch keeps the lock.
    server.add_resource("/here", {"_links": {"self": {"href": "/here"}, "there": {"href": "/"}}})
    link = (await aclient.get("/here")).links["there"]
    server.expire_tokens()
    server.delay_next(3.0, path="/oauth/token")
    calls = {
        "call": lambda: link(),
        "get": lambda: link.get(),
        "post": lambda: link.post({}),
        "patch": lambda: link.patch({}),
    }
    task = asyncio.ensure_future(calls[method]())
    await _cancel_while_the_token_stalls(server, task, requested=2)
    started = time.monotonic()
    assert (await aclient.get("/")).status == 200
    assert time.monotonic() - started < 1.0
    assert len(server.token_requests) == 3


@pytest.mark.asyncio
async def test_cancelling_authenticate_releases_the_token_lock(
    server: FakeServer, aclient: rp.AsyncClient
) -> None:
    server.delay_next(3.0, path="/oauth/token")
    task = asyncio.ensure_future(aclient.authenticate())
    await _cancel_while_the_token_stalls(server, task, requested=1)
    started = time.monotonic()
    assert (await aclient.authenticate()).scope
    assert time.monotonic() - started < 1.0
    assert len(server.token_requests) == 2


@pytest.mark.asyncio
async def test_a_shared_entry_point_fetch_survives_one_cancelled_waiter(
    server: FakeServer, aclient: rp.AsyncClient
) -> None:
    server.delay_next(0.5, path="/")
    first = asyncio.ensure_future(aclient.root())
    second = asyncio.ensure_future(aclient.root())
    await asyncio.sleep(0.1)
    first.cancel()
    root = await second
    assert isinstance(root, rp.AsyncResource) and first.cancelled()
    assert [r.path for r in api_requests(server)] == ["/"]

    # When every waiter is cancelled, the fetch is cancelled; the next call starts afresh.
    await aclient.root(refresh=True)
    aclient._root = None
    server.delay_next(5.0, path="/")
    alone = asyncio.ensure_future(aclient.root())
    await asyncio.sleep(0.1)
    alone.cancel()
    await asyncio.sleep(0)
    started = time.monotonic()
    assert (await aclient.root()).status == 200
    assert time.monotonic() - started < 1.0


@pytest.mark.asyncio
async def test_the_event_loop_runs_other_tasks_during_a_slow_request(
    server: FakeServer, aclient: rp.AsyncClient
) -> None:
    await aclient.root()
    ticks: list[float] = []

    async def ticker() -> None:
        while True:
            ticks.append(time.monotonic())
            await asyncio.sleep(0.01)

    server.delay_next(0.5, path="/")
    ticking = asyncio.ensure_future(ticker())
    await asyncio.sleep(0)
    assert (await aclient.get("/")).status == 200
    ticking.cancel()
    assert len(ticks) >= 20  # ~50 in the half second the request waited
    assert max(b - a for a, b in itertools.pairwise(ticks)) < 0.2


@pytest.mark.asyncio
async def test_debug_lines_are_logged(
    aclient: rp.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG, logger="recurring_payments"):
        await aclient.get("/")
    lines = [r.getMessage() for r in caplog.records if r.name == "recurring_payments"]
    assert any(line.startswith("POST ") and "/oauth/token -> 200" in line for line in lines)
    assert any(line.startswith("GET ") and "-> 200" in line for line in lines)
    assert not any("Bearer" in line or "Basic" in line for line in lines)


# --- loops, processes, lifecycle -------------------------------------------------------------


def test_repeated_asyncio_run_with_one_client(server: FakeServer) -> None:
    add_things(server, 3)
    client = server.async_client()
    for i in range(3):
        thing = asyncio.run(client.get_thing(id=i))  # a new event loop each time
        assert thing["id"] == i
    assert asyncio.run(client.root()) is asyncio.run(client.root())
    assert len(server.token_requests) == 1
    assert [r.path for r in api_requests(server)].count("/") == 1
    asyncio.run(client.aclose())


def test_event_loops_in_several_threads_at_once(server: FakeServer) -> None:
    # Finished requests of several loops reach the completion thread together: each loop gets
    # its own futures back, on its own thread.
    add_things(server, 16)
    client = server.async_client()
    asyncio.run(client.root())
    results: dict[int, list[int]] = {}

    async def fetch_all(worker: int) -> None:
        things = await asyncio.gather(*(client.get_thing(id=i) for i in range(16)))
        results[worker] = [thing["id"] for thing in things]

    threads = [threading.Thread(target=asyncio.run, args=(fetch_all(w),)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert results == {w: list(range(16)) for w in range(4)}
    asyncio.run(client.aclose())


def test_one_loop_callback_for_requests_that_finish_together(server: FakeServer) -> None:
    # Requests that finish while the loop's thread holds the GIL are handed back together: one
    # `call_soon_threadsafe` (one wake-up of the loop) for the batch, not one per request.
    add_things(server, 16)
    client = server.async_client()
    asyncio.run(client.root())

    class CountingLoop(asyncio.SelectorEventLoop):
        wakeups = 0

        def call_soon_threadsafe(self, *args: Any, **kwargs: Any) -> Any:
            self.wakeups += 1
            return super().call_soon_threadsafe(*args, **kwargs)

    async def main() -> list[Any]:
        served = len(server.requests)
        tasks = [asyncio.ensure_future(client.get_thing(id=i)) for i in range(16)]
        await asyncio.sleep(0)  # each task starts its request
        interval = sys.getswitchinterval()
        sys.setswitchinterval(30)  # the completion thread waits for the GIL meanwhile
        try:
            deadline = time.monotonic() + 10
            while len(server.requests) < served + 16 and time.monotonic() < deadline:
                pass
            spin_until = time.monotonic() + 0.3  # their replies read and queued
            while time.monotonic() < spin_until:
                pass
        finally:
            sys.setswitchinterval(interval)
        return await asyncio.gather(*tasks)

    loop = CountingLoop()
    try:
        things = loop.run_until_complete(main())
        assert [thing["id"] for thing in things] == list(range(16))
        assert 1 <= loop.wakeups < 16
    finally:
        loop.run_until_complete(client.aclose())
        loop.close()


def test_a_loop_that_makes_its_own_futures_is_asked_for_them(server: FakeServer) -> None:
    # The core makes asyncio's futures itself only for loops that keep asyncio's create_future.
    class OwnFutures(asyncio.SelectorEventLoop):
        made = 0

        def create_future(self) -> asyncio.Future[Any]:
            self.made += 1
            return super().create_future()

    client = server.async_client()
    loop = OwnFutures()
    try:
        assert loop.run_until_complete(client.get("/")).status == 200
        assert loop.run_until_complete(client.authenticate()).scope
        assert loop.made == 2
    finally:
        loop.run_until_complete(client.aclose())
        loop.close()


@pytest.mark.skipif(sys.platform != "linux", reason="fork semantics of Linux")
def test_asyncio_request_in_a_forked_child(server: FakeServer) -> None:
    client = server.async_client()
    assert asyncio.run(client.get("/")).status == 200  # runtime, pool, token exist now
    read, write = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # 3.12+: fork of a threaded process
        pid = os.fork()
    if pid == 0:  # the child: report and leave without running pytest's teardown
        status = 1
        try:
            status = 0 if asyncio.run(client.get("/")).status == 200 else 2
        finally:
            os.write(write, bytes([status]))
            os._exit(0)
    os.close(write)
    ready, _, _ = select.select([read], [], [], 15.0)
    result = os.read(read, 1) if ready else b""
    os.close(read)
    if not result:
        os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    assert result == bytes([0]), "the child hung or failed"
    assert asyncio.run(client.get("/")).status == 200  # and the parent still works
    assert len(api_requests(server)) == 3


@pytest.mark.asyncio
async def test_context_manager_closes(server: FakeServer) -> None:
    async with server.async_client() as client:
        assert (await client.get("/")).status == 200
        assert repr(client).startswith(f"<AsyncClient {server.base_url} AppCredentials(")
    assert "closed" in repr(client)
    with pytest.raises(RuntimeError, match="closed"):
        await client.get("/")


def test_from_env_and_the_constructor_match_client(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert inspect.signature(rp.AsyncClient) == inspect.signature(rp.Client)
    monkeypatch.setenv("RECURRING_PAYMENTS_BASE_URL", server.base_url)
    monkeypatch.setenv("RECURRING_PAYMENTS_PROFILE", server.profile)
    monkeypatch.setenv("RECURRING_PAYMENTS_APP_NAME", server.credentials.app_name)
    monkeypatch.setenv("RECURRING_PAYMENTS_APP_SECRET", server.credentials.app_secret)
    client = rp.AsyncClient.from_env()
    assert type(client) is rp.AsyncClient
    assert asyncio.run(client.get("/")).status == 200


@pytest.mark.asyncio
async def test_relations_are_async_links(demo_aclient: rp.AsyncClient) -> None:
    root = await demo_aclient.root()
    link = root.get_creditors
    assert isinstance(link, rp.AsyncLink) and link.templated and link.variables == ["reference"]
    assert repr(link).startswith("<AsyncLink get-creditors ")
    assert repr(root).startswith("<AsyncResource ")
    assert "get_creditors" in dir(demo_aclient) and "get_creditors" in dir(root)
    creditor = await link(reference="democreditor")
    assert creditor["reference"] == "democreditor"
    documents = await demo_aclient.get_documents(creditorReference="democreditor")
    arrays = [v for v in documents.links.values() if isinstance(v, list)]
    assert arrays and all(isinstance(item, rp.AsyncLink) for item in arrays[0])


@pytest.mark.asyncio
async def test_deprecated_link_warns(server: FakeServer, aclient: rp.AsyncClient) -> None:
    server.add_resource(
        "/old",
        {
            "_links": {
                "self": {"href": "/old"},
                "next": {"href": "/old", "deprecation": "https://d"},
            }
        },
    )
    old = await aclient.get("/old")
    with pytest.warns(DeprecationWarning, match="next") as caught:
        await old.next()
    assert caught[0].filename == __file__  # pointed at the caller's line
