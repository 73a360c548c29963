"""Token single flight (docs/concepts.md#tokens, docs/guarantees.md#single-flight), sync (threads)
and async (tasks of one loop): however a token request ends, every caller waiting for it gets that
outcome at once and none starts a token request of its own; and the token response read strictly
(spec "Token response")."""

from __future__ import annotations

import _thread
import asyncio
import json
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import pytest
from conftest import api_requests, header
from sandbox_http import Http

import recurring_payments as rp
from recurring_payments.testing import FakeServer

pytestmark = pytest.mark.attack("token")
KINDS = ["sync", "async"]
TOKEN = "/oauth/token"
JSON = {"Content-Type": "application/json"}
CALLERS = 8
TIMEOUT = 0.5
# Long enough for every caller of a crowd to join the flight before it ends.
SLOW_TOKEN = 0.6

Outcome = tuple[Any, float]  # (the resource or the rp.Error, seconds the call took)


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer() as s:
        s.add_resource("/thing", {"ok": True, "_links": {"self": {"href": "/thing"}}})
        s.add_admin("democreditor", "admin", "admin-password")
        yield s


@contextmanager
def make_client(server: FakeServer, kind: str, **settings: Any) -> Iterator[Any]:
    # retries=0: these tests are about sharing a token request, not repeating it.
    settings.setdefault("retries", 0)
    if kind == "sync":
        with server.client(**settings) as client:
            yield client
    else:
        client = server.async_client(**settings)
        try:
            yield client
        finally:
            asyncio.run(client.aclose())


def crowd(client: Any, kind: str, callers: int = CALLERS, stagger: float = 0.0) -> list[Outcome]:
    """`callers` GETs of one client at once (threads, or tasks of one loop); with `stagger`,
    caller i starts i * stagger seconds after the first."""
    if kind == "sync":
        barrier = threading.Barrier(callers)

        def one(i: int) -> Outcome:
            barrier.wait()
            time.sleep(i * stagger)
            start = time.monotonic()
            try:
                result: Any = client.get("/thing")
            except rp.Error as e:
                result = e
            return result, time.monotonic() - start

        with ThreadPoolExecutor(callers) as pool:
            return list(pool.map(one, range(callers)))

    async def call(i: int) -> Outcome:
        await asyncio.sleep(i * stagger)
        start = time.monotonic()
        try:
            result: Any = await client.get("/thing")
        except rp.Error as e:
            result = e
        return result, time.monotonic() - start

    async def everyone() -> list[Outcome]:
        return list(await asyncio.gather(*(call(i) for i in range(callers))))

    return asyncio.run(everyone())


OK = "resource"


def classes(outcomes: list[Outcome]) -> set[Any]:
    """The error classes raised, and OK for a resource returned (sync or async)."""
    return {type(r) if isinstance(r, BaseException) else OK for r, _ in outcomes}


def authenticate(client: Any, kind: str) -> Any:
    return client.authenticate() if kind == "sync" else asyncio.run(client.authenticate())


def answer_token_requests(server: FakeServer, **fields: Any) -> str:
    """Arm the token endpoint's next answer: a real token of the server (so the API accepts
    it) in a body of `fields` (a field set to None is left out). Returns the access token."""
    access = Http(server).token()
    server.clear_requests()
    body = {"access_token": access, "token_type": "bearer", "expires_in": 960, "scope": "api"}
    body.update(fields)
    body = {k: v for k, v in body.items() if v is not None}
    server.respond_next(json.dumps(body), headers=JSON, path=TOKEN)
    return access


def assert_a_new_flight_succeeds(server: FakeServer, client: Any, kind: str) -> None:
    """After a flight ended, the next callers start one new token request and succeed."""
    server.clear_faults()
    before = len(server.token_requests)
    assert classes(crowd(client, kind)) == {OK}
    assert len(server.token_requests) == before + 1


# --- failures are shared ------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_a_hung_token_endpoint_times_out_every_waiter_at_once(
    server: FakeServer, kind: str
) -> None:
    # Armed for every caller: before single flight each one sent its own, one after another.
    server.delay_next(2.0, count=CALLERS, path=TOKEN)
    with make_client(server, kind, timeout=TIMEOUT) as client:
        outcomes = crowd(client, kind)
        assert classes(outcomes) == {rp.TimeoutError}
        assert len(server.token_requests) == 1
        slowest = max(seconds for _, seconds in outcomes)
        assert slowest < 3 * TIMEOUT, f"the slowest caller waited {slowest:.2f} s"
        assert_a_new_flight_succeeds(server, client, kind)


@pytest.mark.parametrize("kind", KINDS)
def test_a_token_request_cut_by_the_deadline_fails_every_waiter_once(
    server: FakeServer, kind: str
) -> None:
    # The call's deadline (total_timeout), not `timeout`, ends the hung token request: the
    # flight must end in a shared TimeoutError, not be dropped and taken over by the waiters
    # that joined later (and so still have time left).
    server.delay_next(3.0, count=CALLERS, path=TOKEN)
    with make_client(server, kind, timeout=30.0, total_timeout=TIMEOUT) as client:
        outcomes = crowd(client, kind, stagger=0.04)
        assert classes(outcomes) == {rp.TimeoutError}
        assert len(server.token_requests) == 1
        slowest = max(seconds for _, seconds in outcomes)
        assert slowest < 3 * TIMEOUT, f"the slowest caller waited {slowest:.2f} s"


FAILURES: dict[str, tuple[Callable[[FakeServer], None], type[rp.Error]]] = {
    "500": (lambda s: s.fail_next(500, count=CALLERS, path=TOKEN), rp.ServerError),
    "503": (lambda s: s.fail_next(503, count=CALLERS, path=TOKEN), rp.ServerError),
    "refused (401)": (
        lambda s: s.fail_next(401, count=CALLERS, path=TOKEN),
        rp.AuthenticationError,
    ),
    "bad answer": (
        lambda s: s.respond_next(b"[]", headers=JSON, count=CALLERS, path=TOKEN),
        rp.ProtocolError,
    ),
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("failure", list(FAILURES))
def test_a_failed_token_request_is_shared_by_every_waiter(
    server: FakeServer, kind: str, failure: str
) -> None:
    arm, error = FAILURES[failure]
    server.delay_next(SLOW_TOKEN, count=CALLERS, path=TOKEN)
    arm(server)
    with make_client(server, kind) as client:
        outcomes = crowd(client, kind)
        assert classes(outcomes) == {error}
        assert len(server.token_requests) == 1
        assert api_requests(server) == []
        assert_a_new_flight_succeeds(server, client, kind)


@pytest.mark.parametrize("kind", KINDS)
def test_refused_credentials_are_shared_until_they_are_registered(
    server: FakeServer, kind: str
) -> None:
    credentials = rp.AppCredentials("late-app", "late-app-secret-0123")
    server.delay_next(SLOW_TOKEN, count=CALLERS, path=TOKEN)
    with make_client(server, kind, credentials=credentials) as client:
        outcomes = crowd(client, kind)
        assert classes(outcomes) == {rp.AuthenticationError}
        assert len(server.token_requests) == 1
        # A later call is a new need: a new flight, refused again until the app exists.
        with pytest.raises(rp.AuthenticationError):
            authenticate(client, kind)
        assert len(server.token_requests) == 2
        server.add_app(credentials.app_name, credentials.app_secret)
        assert_a_new_flight_succeeds(server, client, kind)


# --- a leader that goes away --------------------------------------------------------------------


@pytest.mark.usefixtures("ctrl_c")
def test_ctrl_c_in_the_leading_thread_hands_the_flight_to_a_waiter(server: FakeServer) -> None:
    server.delay_next(3.0, path=TOKEN)  # the first token request hangs; the next one does not
    with make_client(server, "sync") as client:
        started = time.monotonic()
        waiters: list[Outcome] = []

        def wait_for_the_token() -> None:
            waiters.extend(crowd(client, "sync", callers=6))

        joiner = threading.Timer(0.1, wait_for_the_token)
        interrupt = threading.Timer(0.4, _thread.interrupt_main)
        joiner.start()
        interrupt.start()
        try:
            with pytest.raises(KeyboardInterrupt):
                client.get("/thing")  # leads the flight, from the main thread
        finally:
            interrupt.cancel()
            joiner.join()
        assert classes(waiters) == {OK}  # no hang, no failure passed on
        assert time.monotonic() - started < 2.5  # they did not wait for the hung request
        assert len(server.token_requests) == 2


def test_a_cancelled_leading_task_hands_the_flight_to_a_waiter(server: FakeServer) -> None:
    server.delay_next(3.0, path=TOKEN)

    async def call() -> Any:
        return await client.get("/thing")

    async def scenario() -> list[Any]:
        leader = asyncio.create_task(call())
        await asyncio.sleep(0.1)
        waiters = [asyncio.create_task(call()) for _ in range(6)]
        await asyncio.sleep(0.3)
        leader.cancel()
        with pytest.raises(asyncio.CancelledError):
            await leader
        return list(await asyncio.gather(*waiters, return_exceptions=True))

    with make_client(server, "async") as client:
        started = time.monotonic()
        results = asyncio.run(scenario())
        assert classes([(r, 0.0) for r in results]) == {OK}
        assert time.monotonic() - started < 2.5
        assert len(server.token_requests) == 2


# --- a token of no lifetime ---------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_a_token_of_no_lifetime_serves_the_callers_that_waited_for_it(
    server: FakeServer, kind: str
) -> None:
    # FakeServer refuses token_ttl=0; the token endpoint answers a real token with expires_in 0.
    access = answer_token_requests(server, expires_in=0)
    server.delay_next(SLOW_TOKEN, path=TOKEN)
    with make_client(server, kind) as client:
        assert classes(crowd(client, kind)) == {OK}
        assert len(server.token_requests) == 1
        sent = [header(r, "authorization") == f"Bearer {access}" for r in api_requests(server)]
        assert sent == [True] * CALLERS
        # A caller arriving after it was stored finds it stale: a new flight.
        assert classes(crowd(client, kind, callers=1)) == {OK}
        assert len(server.token_requests) == 2


# --- the token response -------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("token_type", [1, None, True, ["bearer"]], ids=repr)
def test_a_token_type_that_is_not_a_string_is_a_protocol_error(
    server: FakeServer, kind: str, token_type: Any
) -> None:
    body = {"access_token": "abc", "token_type": token_type, "expires_in": 960}
    server.respond_next(json.dumps(body), headers=JSON, path=TOKEN)
    with make_client(server, kind) as client, pytest.raises(rp.ProtocolError) as caught:
        authenticate(client, kind)
    assert "token_type" in str(caught.value)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("spelling", ["Bearer", "BEARER", "bearer"])
def test_token_type_is_always_lower_case(server: FakeServer, kind: str, spelling: str) -> None:
    answer_token_requests(server, token_type=spelling)
    with make_client(server, kind) as client:
        assert authenticate(client, kind).token_type == "bearer"
        assert client.token.token_type == "bearer"
        assert classes(crowd(client, kind, callers=1)) == {OK}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("admin", [False, True], ids=["api", "api_admin"])
def test_an_omitted_scope_is_the_requested_one(server: FakeServer, kind: str, admin: bool) -> None:
    settings: dict[str, Any] = {}
    if admin:
        settings["credentials"] = rp.AdminCredentials("democreditor", "admin", "admin-password")
    access = Http(server).token()  # an app token: the server checks the token, not its scope
    server.clear_requests()
    body = {"access_token": access, "token_type": "bearer", "expires_in": 960}
    server.respond_next(json.dumps(body), headers=JSON, path=TOKEN)
    with make_client(server, kind, **settings) as client:
        assert authenticate(client, kind).scope == ("api_admin" if admin else "api")
        assert server.token_requests[0].body.endswith(b"scope=api_admin" if admin else b"scope=api")
