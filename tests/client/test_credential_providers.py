"""Credentials providers (`credentials=` a callable), sync and async: asked where the call that
needs the token runs, once per token flight, once more after the token endpoint refused them;
a provider that fails is a ConfigurationError that names it and never quotes it
(docs/guarantees.md)."""

from __future__ import annotations

import asyncio
import copy
import gc
import pickle
import threading
import time
import traceback
import warnings
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

import recurring_payments as rp
from recurring_payments.testing import FakeServer

pytestmark = pytest.mark.attack("token")
KINDS = ["sync", "async"]
APP = "rotating-app"
OLD = "old-secret-7f3a9c"
NEW = "new-secret-52be0d"


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer() as s:
        s.add_resource("/thing", {"ok": True, "_links": {"self": {"href": "/thing"}}})
        s.add_app(APP, OLD)
        yield s


class Secrets:
    """A provider whose answers are given in turn (the last one from then on): each call is
    recorded with the thread it ran on; ``pause`` makes it slow."""

    def __init__(self, *secrets: str, pause: float = 0.0) -> None:
        self.secrets = list(secrets)
        self.pause = pause
        self.threads: list[int] = []
        self.lock = threading.Lock()

    def __call__(self) -> rp.AppCredentials:
        with self.lock:
            self.threads.append(threading.get_ident())
            secret = self.secrets.pop(0) if len(self.secrets) > 1 else self.secrets[0]
        time.sleep(self.pause)
        return rp.AppCredentials(APP, secret)

    @property
    def calls(self) -> int:
        return len(self.threads)


def make(server: FakeServer, kind: str, provider: Any, **settings: Any) -> Any:
    settings.setdefault("retries", 0)
    if kind == "sync":
        return server.client(credentials=provider, **settings)
    return server.async_client(credentials=provider, **settings)


def run(kind: str, client: Any, calls: Callable[[Any], Any], crowd: int = 1) -> list[Any]:
    """``calls(client)`` made ``crowd`` times at once (threads, or tasks of one loop); each
    outcome is the result or the exception."""
    if kind == "sync":

        def one() -> Any:
            try:
                return calls(client)
            except Exception as err:
                return err

        if crowd == 1:
            return [one()]
        with ThreadPoolExecutor(crowd) as pool:
            return list(pool.map(lambda _: one(), range(crowd)))

    async def main() -> list[Any]:
        async def one() -> Any:
            try:
                return await calls(client)
            except Exception as err:
                return err

        return await asyncio.gather(*(one() for _ in range(crowd)))

    return asyncio.run(main())


def get_thing(client: Any) -> Any:
    return client.get("/thing")


def token_statuses(server: FakeServer) -> list[int | None]:
    return [r.status for r in server.token_requests]


@pytest.mark.parametrize("kind", KINDS)
def test_asked_where_the_call_runs_before_each_token_request(server: FakeServer, kind: str) -> None:
    provider = Secrets(OLD)
    client = make(server, kind, provider)
    if kind == "sync":
        caller = threading.get_ident()
        assert run(kind, client, get_thing)[0]["ok"] is True
        assert provider.threads == [caller]
    else:

        async def main() -> int:
            await client.get("/thing")
            return threading.get_ident()

        loop_thread = asyncio.run(main())
        assert provider.threads == [loop_thread]
    # Reused while the token lasts: no call.
    run(kind, client, get_thing)
    assert provider.calls == 1
    # A 401 on an API call: renewed, so asked again.
    server.expire_tokens()
    run(kind, client, get_thing)
    assert provider.calls == 2
    # authenticate() asks too.
    run(kind, client, lambda c: c.authenticate())
    assert provider.calls == 3
    assert token_statuses(server) == [200, 200, 200]


@pytest.mark.parametrize("kind", KINDS)
def test_one_call_and_one_token_request_per_flight_for_32_callers(
    server: FakeServer, kind: str
) -> None:
    provider = Secrets(OLD, pause=0.3)
    client = make(server, kind, provider)
    outcomes = run(kind, client, get_thing, crowd=32)
    assert all(not isinstance(o, Exception) for o in outcomes), outcomes
    assert provider.calls == 1
    assert len(server.token_requests) == 1
    if kind == "sync":
        # The leader's thread: one of the callers.
        assert provider.threads[0] != threading.get_ident()


@pytest.mark.parametrize("kind", KINDS)
def test_a_slow_provider_blocks_only_the_calls_that_wait_for_its_token(
    server: FakeServer, kind: str
) -> None:
    other = make(server, kind, server.credentials)
    if kind == "sync":
        slow = make(server, kind, Secrets(OLD, pause=1.0))
        thread = threading.Thread(target=slow.get, args=("/thing",))
        thread.start()
        time.sleep(0.1)
        started = time.monotonic()
        other.get("/thing")
        elapsed = time.monotonic() - started
        thread.join()
    else:

        async def read_secret() -> rp.AppCredentials:
            await asyncio.sleep(1.0)
            return rp.AppCredentials(APP, OLD)

        async def main() -> float:
            slow = make(server, kind, read_secret)
            task = asyncio.ensure_future(slow.get("/thing"))
            await asyncio.sleep(0.1)
            started = time.monotonic()
            await other.get("/thing")
            took = time.monotonic() - started
            await task
            return took

        elapsed = asyncio.run(main())
    assert elapsed < 0.8, elapsed


@pytest.mark.parametrize("kind", KINDS)
def test_a_raising_provider_is_a_configuration_error_that_never_quotes_it(
    server: FakeServer, kind: str
) -> None:
    leaked = "sk_live_do_not_show_4d2f9"
    calls: list[int] = []

    def read_vault() -> rp.AppCredentials:
        calls.append(1)
        time.sleep(0.2)
        raise KeyError(f"vault said {leaked}")

    client = make(server, kind, read_vault)
    outcomes = run(kind, client, get_thing, crowd=16)
    assert len(calls) == 1  # one flight: every waiter gets its failure
    for err in outcomes:
        assert type(err) is rp.ConfigurationError
        assert "read_vault" in str(err) and "KeyError" in str(err)
        assert leaked not in str(err) and leaked not in repr(err)
        assert isinstance(err.__cause__, KeyError)
        assert leaked in str(err.__cause__)  # the original, for the developer
    assert server.requests == []  # nothing sent
    err = outcomes[0]
    # No frame of the error's own traceback keeps the secret in its locals.
    for frame, _ in traceback.walk_tb(err.__traceback__):
        for value in frame.f_locals.values():
            assert leaked not in repr(value)
    # The next flight asks again (a failure is not cached).
    run(kind, client, get_thing)
    assert len(calls) == 2


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    "answer",
    [None, "rotating-app:old-secret", (APP, OLD), rp.AppCredentials(APP, 42)],  # type: ignore[arg-type]
)
def test_garbage_from_a_provider_is_refused_before_anything_is_sent(
    server: FakeServer, kind: str, answer: Any
) -> None:
    def garbage() -> Any:
        return answer

    client = make(server, kind, garbage)
    (err,) = run(kind, client, get_thing)
    assert type(err) is rp.ConfigurationError
    assert "garbage" in str(err)
    assert "old-secret" not in str(err)
    assert err.__cause__ is None
    assert server.requests == []


@pytest.mark.parametrize("kind", KINDS)
def test_the_other_class_later_is_refused(server: FakeServer, kind: str) -> None:
    server.add_admin("democreditor", "admin", "admin-password-9e1")
    answers: list[rp.AppCredentials | rp.AdminCredentials] = [
        rp.AppCredentials(APP, OLD),
        rp.AdminCredentials("democreditor", "admin", "admin-password-9e1"),
    ]

    def switching() -> rp.AppCredentials | rp.AdminCredentials:
        return answers.pop(0) if len(answers) > 1 else answers[0]

    client = make(server, kind, switching)
    assert run(kind, client, lambda c: c.authenticate())[0].scope == "api"
    (err,) = run(kind, client, lambda c: c.authenticate())
    assert type(err) is rp.ConfigurationError
    assert "switching" in str(err) and "AdminCredentials" in str(err)
    assert len(server.token_requests) == 1


@pytest.mark.parametrize("kind", KINDS)
def test_a_refusal_then_new_credentials_makes_exactly_two_token_requests(
    server: FakeServer, kind: str
) -> None:
    # The secret was rotated just after the provider read it: its next answer is the new one.
    server.add_app(APP, NEW)
    provider = Secrets(OLD, NEW)
    client = make(server, kind, provider)
    assert run(kind, client, get_thing)[0]["ok"] is True
    assert provider.calls == 2
    assert token_statuses(server) == [401, 200]


@pytest.mark.parametrize("kind", KINDS)
def test_a_refusal_with_the_same_credentials_is_an_authentication_error(
    server: FakeServer, kind: str
) -> None:
    server.add_app(APP, NEW)
    provider = Secrets(OLD)
    client = make(server, kind, provider)
    (err,) = run(kind, client, get_thing)
    assert type(err) is rp.AuthenticationError
    assert provider.calls == 2  # asked once more, same answer: no second request
    assert token_statuses(server) == [401]


@pytest.mark.parametrize("kind", KINDS)
def test_a_rotation_during_a_flight_that_16_callers_wait_on(server: FakeServer, kind: str) -> None:
    provider = Secrets(OLD)
    client = make(server, kind, provider)
    run(kind, client, get_thing)
    # The secret changes (the old one stops working at once) and the token expires; the
    # provider still returns the old one once, slowly, while 16 callers wait for the flight.
    server.add_app(APP, NEW)
    server.expire_tokens()
    provider.secrets, provider.pause = [OLD, NEW], 0.2
    server.clear_requests()
    outcomes = run(kind, client, get_thing, crowd=16)
    assert all(not isinstance(o, Exception) for o in outcomes), outcomes
    assert provider.calls == 3  # the first token, then two for the one flight
    assert token_statuses(server) == [401, 200]


@pytest.mark.parametrize("kind", KINDS)
def test_the_repr_names_the_provider_without_calling_it(server: FakeServer, kind: str) -> None:
    provider = Secrets(OLD)
    client = make(server, kind, provider)
    assert "credentials provider Secrets" in repr(client)
    assert OLD not in repr(client)
    assert client.credentials is provider
    assert provider.calls == 0


def test_an_async_provider_is_awaited_on_the_loop(server: FakeServer) -> None:
    threads: list[int] = []

    async def read_secret() -> rp.AppCredentials:
        await asyncio.sleep(0.05)
        threads.append(threading.get_ident())
        return rp.AppCredentials(APP, OLD)

    async def main() -> int:
        client = server.async_client(credentials=read_secret)
        results = await asyncio.gather(*(client.get("/thing") for _ in range(8)))
        assert all(r["ok"] for r in results)
        return threading.get_ident()

    assert threads == [asyncio.run(main())]
    assert len(server.token_requests) == 1


def test_an_async_provider_that_raises_is_a_configuration_error(server: FakeServer) -> None:
    async def read_secret() -> rp.AppCredentials:
        raise PermissionError(OLD)

    async def main() -> BaseException:
        client = server.async_client(credentials=read_secret)
        with pytest.raises(rp.ConfigurationError) as caught:
            await client.get("/thing")
        return caught.value

    err = asyncio.run(main())
    assert "PermissionError" in str(err) and OLD not in str(err)
    assert isinstance(err.__cause__, PermissionError)


def test_a_sync_client_refuses_an_async_provider_without_a_warning(server: FakeServer) -> None:
    async def read_secret() -> rp.AppCredentials:
        return rp.AppCredentials(APP, OLD)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with server.client(credentials=read_secret) as client:
            with pytest.raises(rp.ConfigurationError, match="AsyncClient"):
                client.get("/thing")
        gc.collect()
    assert server.requests == []


def test_a_provider_that_is_not_callable_nor_credentials_is_refused(server: FakeServer) -> None:
    with pytest.raises(rp.ConfigurationError, match="provider"):
        server.client(credentials="rotating-app:old-secret")


def test_a_cancelled_call_leaves_the_client_usable(server: FakeServer) -> None:
    async def slow() -> rp.AppCredentials:
        await asyncio.sleep(0.3)
        return rp.AppCredentials(APP, OLD)

    async def main() -> Any:
        client = server.async_client(credentials=slow)
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(client.get("/thing"), 0.05)
        return await client.get("/thing")

    assert asyncio.run(main())["ok"] is True


@pytest.mark.parametrize("kind", KINDS)
def test_a_client_with_a_provider_never_travels(server: FakeServer, kind: str) -> None:
    client = make(server, kind, Secrets(OLD))
    for travel in (pickle.dumps, copy.deepcopy):
        with pytest.raises(TypeError):
            travel(client)


def test_ctrl_c_in_a_provider_is_raised_as_it_is_and_the_client_goes_on(
    server: FakeServer,
) -> None:
    answers: list[Any] = [KeyboardInterrupt, rp.AppCredentials(APP, OLD)]

    def interrupted() -> rp.AppCredentials:
        answer = answers.pop(0)
        if answer is KeyboardInterrupt:
            raise KeyboardInterrupt
        return answer  # type: ignore[no-any-return]

    with server.client(credentials=interrupted) as client:
        with pytest.raises(KeyboardInterrupt):
            client.get("/thing")
        assert server.requests == []
        assert client.get("/thing")["ok"] is True


@pytest.mark.parametrize("kind", KINDS)
def test_a_secret_file_rewritten_in_place_is_read_at_the_next_token_request(
    server: FakeServer, kind: str, tmp_path: Any
) -> None:
    class SecretFile:
        """Reads the mounted secret on each call, as a Kubernetes secret volume is read."""

        def __init__(self, path: Any) -> None:
            self.path = path

        def __call__(self) -> rp.AppCredentials:
            return rp.AppCredentials(APP, self.path.read_text().removesuffix("\n"))

    secret = tmp_path / "app_secret"
    secret.write_text(OLD + "\n")
    client = make(server, kind, SecretFile(secret))
    run(kind, client, get_thing)
    # Regenerated: the file is replaced (write and rename), the old secret stops working.
    server.add_app(APP, NEW)
    (tmp_path / "next").write_text(NEW + "\n")
    (tmp_path / "next").replace(secret)
    server.expire_tokens()
    outcomes = run(kind, client, get_thing, crowd=4)
    assert all(not isinstance(o, Exception) for o in outcomes), outcomes
    assert token_statuses(server) == [200, 200]
