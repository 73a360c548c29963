"""Per-call options (docs/guides/configuration.md#per-call-settings): `client.with_options(...)` is
a client that shares the original's connections, token, token store and cached entry point, and
applies its own `timeout`, `connect_timeout`, `total_timeout`, `retries` and `headers` to every call
made through it and through the resources and links it returns. Sync and async."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import api_requests, header
from fault_kit import connects_hang

import recurring_payments as rp
from recurring_payments.testing import FakeServer

KINDS = ["sync", "async"]
THING = {"id": 1, "_links": {"self": {"href": "/things/1"}}}


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer() as s:
        s.add_resource("/things/1", THING)
        s.add_link("get-thing", "/things/{id}", templated=True)
        yield s


class Face:
    """A `Client` or an `AsyncClient` (or a client derived from one) behind blocking calls."""

    def __init__(self, client: Any, kind: str) -> None:
        self.client, self.kind = client, kind

    def run(self, result: Any) -> Any:
        return asyncio.run(result) if self.kind == "async" else result

    def with_options(self, **options: Any) -> Face:
        return Face(self.client.with_options(**options), self.kind)

    def get(self, url: str, **variables: Any) -> Any:
        return self.run(self.client.get(url, **variables))

    def root(self) -> Any:
        return self.run(self.client.root())

    def thing(self) -> Any:
        """GET through the entry point's link (the cached entry point, then a link)."""
        return self.run(self.client.get_thing(id=1))

    def fetch(self, res: Any) -> Any:
        return self.run(res.fetch())

    def authenticate(self) -> Any:
        return self.run(self.client.authenticate())

    def close(self) -> None:
        if self.kind == "async":
            asyncio.run(self.client.aclose())
        else:
            self.client.close()


@pytest.fixture(params=KINDS)
def face(request: pytest.FixtureRequest, server: FakeServer) -> Iterator[Face]:
    kind = request.param
    client = server.client() if kind == "sync" else server.async_client()
    f = Face(client, kind)
    try:
        yield f
    finally:
        f.close()


def gets(server: FakeServer, path: str) -> list[Any]:
    return [r for r in api_requests(server, "GET") if r.path == path]


# --- the settings take effect -----------------------------------------------------------------


def test_a_derived_timeout_cuts_a_slow_answer_that_the_parent_waits_for(
    server: FakeServer, face: Face
) -> None:
    quick = face.with_options(timeout=0.3, retries=0)
    face.root()
    server.delay_next(1.0, path="/things/1")
    started = time.monotonic()
    with pytest.raises(rp.TimeoutError):
        quick.get("/things/1")
    assert time.monotonic() - started < 0.9
    server.delay_next(1.0, path="/things/1")
    assert face.get("/things/1")["id"] == 1  # the parent's 30 s timeout: it waits


def test_retries_zero_sends_one_attempt_and_the_parent_keeps_its_retries(
    server: FakeServer, face: Face
) -> None:
    face.root()
    server.fail_next(503, count=1, path="/things/1")
    with pytest.raises(rp.ServerError):
        face.with_options(retries=0).get("/things/1")
    assert len(gets(server, "/things/1")) == 1
    server.clear_requests()
    server.fail_next(503, count=1, path="/things/1")
    assert face.get("/things/1")["id"] == 1  # retried (retries=2 by default)
    assert len(gets(server, "/things/1")) == 2


def test_total_timeout_bounds_the_derived_clients_calls(server: FakeServer, face: Face) -> None:
    face.root()
    server.delay_next(2.0, path="/things/1")
    started = time.monotonic()
    with pytest.raises(rp.TimeoutError) as caught:
        face.with_options(total_timeout=0.4).get("/things/1")
    assert time.monotonic() - started < 1.5
    assert "total_timeout of 0.400 s" in str(caught.value)


def test_a_derived_connect_timeout_cuts_a_hanging_connect(kind_sync_or_async: str) -> None:
    server = FakeServer()
    server.add_resource("/things/1", THING)
    server.start()
    client: Any = (
        server.client(connect_timeout=10.0)
        if kind_sync_or_async == "sync"
        else server.async_client(connect_timeout=10.0)
    )
    f = Face(client, kind_sync_or_async)
    try:
        f.root()
        port = int(server.base_url.rsplit(":", 1)[1].split("/")[0])
        server.stop()
        # retries=1: the pooled connection the server just closed may still be handed out (its
        # end not yet read on a loaded machine); the GET is then retried on a new connection.
        quick = f.with_options(connect_timeout=0.3, retries=1)
        with connects_hang(port):
            started = time.monotonic()
            with pytest.raises(rp.TimeoutError) as caught:
                quick.get("/things/1")
            assert time.monotonic() - started < 2.0  # not the parent's 10 s
            assert "connect timeout" in str(caught.value)
            assert "connect_timeout of 0.300 s exceeded" in str(caught.value)
            assert caught.value.outcome_unknown is False
    finally:
        f.close()
        server.stop()


@pytest.fixture(params=KINDS)
def kind_sync_or_async(request: pytest.FixtureRequest) -> str:
    kind: str = request.param
    return kind


def test_headers_add_to_and_override_the_clients_headers_for_the_api_only(
    server: FakeServer, kind_sync_or_async: str
) -> None:
    headers = {"X-Tenant": "a", "X-Team": "t"}
    kind = kind_sync_or_async
    client = (
        server.client(headers=headers) if kind == "sync" else server.async_client(headers=headers)
    )
    face = Face(client, kind)
    try:
        derived = face.with_options(headers={"x-tenant": "b", "X-Extra": "e"})
        derived.get("/things/1")
        (sent,) = gets(server, "/things/1")
        assert header(sent, "X-Tenant") == "b"
        assert header(sent, "X-Team") == "t"
        assert header(sent, "X-Extra") == "e"
        (token,) = server.token_requests
        assert header(token, "X-Extra") is None  # never to the token endpoint
        server.clear_requests()
        face.get("/things/1")  # the original is unchanged
        (sent,) = gets(server, "/things/1")
        assert (header(sent, "X-Tenant"), header(sent, "X-Extra")) == ("a", None)
    finally:
        face.close()


# --- resources and links carry the options ----------------------------------------------------


def test_resources_and_links_of_a_derived_client_use_its_options(
    server: FakeServer, face: Face
) -> None:
    quick = face.with_options(timeout=0.3, retries=0)
    res = quick.thing()  # through the entry point's link
    assert res["id"] == 1
    server.delay_next(1.0, path="/things/1")
    with pytest.raises(rp.TimeoutError):
        quick.fetch(res)  # a resource it returned
    server.delay_next(1.0, path="/things/1")
    with pytest.raises(rp.TimeoutError):
        quick.thing()  # a link of the shared entry point, through the derived client
    server.delay_next(1.0, path="/things/1")
    assert face.thing()["id"] == 1  # the same entry point through the parent waits


# --- what is shared ---------------------------------------------------------------------------


def test_token_and_entry_point_are_shared_both_ways(server: FakeServer, face: Face) -> None:
    derived = face.with_options(total_timeout=5, retries=1)
    assert server.requests == []  # no I/O
    derived.root()
    face.root()
    face.thing()
    derived.thing()
    face.with_options(timeout=3).thing()
    assert len(server.token_requests) == 1
    assert len(gets(server, "/")) == 1
    assert face.client.token == derived.client.token


def test_a_token_fetched_by_the_parent_serves_the_derived_client(
    server: FakeServer, face: Face
) -> None:
    derived = face.with_options(retries=0)
    face.authenticate()
    derived.get("/things/1")
    derived.authenticate()  # fetches a new one now, for both
    face.get("/things/1")
    assert len(server.token_requests) == 2
    assert face.client.token == derived.client.token


def test_many_threads_use_with_options_while_the_parent_is_used(server: FakeServer) -> None:
    failures: list[BaseException] = []
    with server.client() as client:

        def work(i: int) -> None:
            try:
                for _ in range(5):
                    derived = client.with_options(timeout=5, retries=1, headers={"X-N": str(i)})
                    assert derived.get_thing(id=1)["id"] == 1
                    assert client.get("/things/1")["id"] == 1
            except BaseException as err:  # reported below
                failures.append(err)

        threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert failures == []
    assert len(server.token_requests) == 1
    assert len(gets(server, "/")) == 1
    tagged = [header(r, "X-N") for r in gets(server, "/things/1")]
    assert sorted(t for t in tagged if t is not None) == sorted(
        str(i) for i in range(8) for _ in range(5)
    )
    assert tagged.count(None) == 40  # the parent's requests carry none


def test_many_tasks_use_with_options_while_the_parent_is_used(server: FakeServer) -> None:
    async def main() -> None:
        async with server.async_client() as client:

            async def work(i: int) -> None:
                derived = client.with_options(total_timeout=5, headers={"X-N": str(i)})
                assert (await derived.get_thing(id=1))["id"] == 1
                assert (await client.get("/things/1"))["id"] == 1

            await asyncio.gather(*(work(i) for i in range(16)))

    asyncio.run(main())
    assert len(server.token_requests) == 1
    assert len(gets(server, "/")) == 1
    tagged = sorted(header(r, "X-N") or "-" for r in gets(server, "/things/1"))
    assert tagged == sorted([str(i) for i in range(16)] + ["-"] * 16)


def test_closing_a_derived_client_closes_nothing_the_parent_uses(
    server: FakeServer, face: Face
) -> None:
    face.root()
    derived = face.with_options(timeout=5)
    res = derived.get("/things/1")
    derived.close()
    for call in (lambda: derived.get("/things/1"), derived.root, lambda: derived.fetch(res)):
        with pytest.raises(RuntimeError, match="closed"):
            call()
    assert face.get("/things/1")["id"] == 1
    assert face.thing()["id"] == 1
    assert len(server.token_requests) == 1


def test_a_derived_client_of_a_closed_client_is_closed(face: Face) -> None:
    derived = face.with_options(timeout=5)
    face.close()
    with pytest.raises(RuntimeError, match="closed"):
        derived.get("/things/1")
    with pytest.raises(RuntimeError, match="closed"):
        face.with_options(timeout=5)


def test_options_compose_and_the_type_is_kept(face: Face) -> None:
    derived = face.client.with_options(timeout=5).with_options(retries=0)
    assert type(derived) is type(face.client)
    assert repr(derived) == repr(face.client)


# --- bad values -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [
        {"timeout": 0},
        {"timeout": -1.0},
        {"timeout": float("nan")},
        {"timeout": "5"},
        {"connect_timeout": float("inf")},
        {"total_timeout": 0},
        {"retries": -1},
        {"retries": 1.5},
        {"retries": 10**6},
        {"headers": {"Authorization": "Bearer x"}},
        {"headers": {"accept": "text/html"}},
        {"headers": {"bad name": "x"}},
        {"headers": {"X-Ok": "a\nb"}},
        {"headers": "X-Ok: a"},
    ],
)
def test_bad_values_are_configuration_errors(face: Face, options: dict[str, Any]) -> None:
    with pytest.raises(rp.ConfigurationError):
        face.client.with_options(**options)


def test_only_keyword_options(face: Face) -> None:
    with pytest.raises(TypeError):
        face.client.with_options(5)
    with pytest.raises(TypeError):
        face.client.with_options(timeotu=5)
