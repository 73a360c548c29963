"""Many apps in one process: `with_options(credentials=…)`, sync and async. A derived client acts
as that app or dashboard user over the original's connections and settings, with its own
token, token flight and entry point; clients derived with equal credentials share them, the
last 1,024 distinct credentials kept (docs/guarantees.md)."""

from __future__ import annotations

import asyncio
import copy
import pickle
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from conftest import basic_pairs

import recurring_payments as rp
from recurring_payments.testing import FakeServer

pytestmark = pytest.mark.attack("token")
KINDS = ["sync", "async"]
ADMIN = rp.AdminCredentials("democreditor", "admin", "admin-password-31c")


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer(demo=True) as s:
        s.add_admin(ADMIN.creditor, ADMIN.login, ADMIN.password)
        yield s


def tenant(n: int) -> rp.AppCredentials:
    return rp.AppCredentials(f"tenant-{n}", f"tenant-secret-{n:04d}-x")


def make(server: FakeServer, kind: str, **settings: Any) -> Any:
    settings.setdefault("retries", 0)
    return server.client(**settings) if kind == "sync" else server.async_client(**settings)


def call(kind: str, awaitable_or_value: Any) -> Any:
    if kind == "sync":
        return awaitable_or_value

    async def wait() -> Any:
        return await awaitable_or_value

    return asyncio.run(wait())


def authenticate(kind: str, client: Any) -> rp.Token:
    token: rp.Token = call(kind, client.authenticate())
    return token


def token_apps(server: FakeServer) -> list[str]:
    """The Basic user of each token request, in order."""
    return [pair.split(":")[0] for pair in basic_pairs(server)]


@pytest.mark.parametrize("kind", KINDS)
def test_an_admin_identity_has_its_own_token_and_entry_point(server: FakeServer, kind: str) -> None:
    client = make(server, kind)
    admin = client.with_options(credentials=ADMIN)
    assert type(admin) is type(client)
    assert admin.credentials == ADMIN and client.credentials == server.credentials
    assert call(kind, admin.root()) is not call(kind, client.root())
    # An api_admin entry point has more links: they are the admin's attributes only.
    assert {"get_apps", "generate_app_secret"} <= set(dir(admin))
    assert "get_apps" not in dir(client)
    with pytest.raises(rp.LinkNotFoundError):
        call(kind, client.get_apps()) if kind == "sync" else call(kind, client.get_apps.get())
    assert admin.token.scope == "api_admin" and client.token.scope == "api"
    assert len(server.token_requests) == 2


@pytest.mark.parametrize("kind", KINDS)
def test_equal_credentials_share_one_token_and_entry_point_after_the_client_is_gone(
    server: FakeServer, kind: str
) -> None:
    server.add_app(tenant(1).app_name, tenant(1).app_secret)
    client = make(server, kind)
    first = client.with_options(credentials=tenant(1))
    token = authenticate(kind, first)
    root = call(kind, first.root())
    del first
    again = client.with_options(credentials=tenant(1))
    assert again.token == token
    assert call(kind, again.root()).url == root.url
    assert token_apps(server) == ["tenant-1"]
    # Derived from a derived client: the same identity, the derived client's options kept.
    quick = client.with_options(timeout=3.0).with_options(credentials=tenant(1))
    assert quick.token == token
    assert quick._call_settings[0] == 3.0


@pytest.mark.parametrize("kind", KINDS)
def test_credentials_equal_to_the_originals_share_its_token(server: FakeServer, kind: str) -> None:
    client = make(server, kind)
    token = authenticate(kind, client)
    same = client.with_options(
        credentials=rp.AppCredentials(server.credentials.app_name, server.credentials.app_secret)
    )
    assert same.token == token
    call(kind, same.root())
    assert len(server.token_requests) == 1


def test_many_threads_for_many_tenants_one_token_request_per_tenant(server: FakeServer) -> None:
    tenants = [tenant(n) for n in range(24)]
    for credentials in tenants:
        server.add_app(credentials.app_name, credentials.app_secret)
    with server.client(retries=0) as client:

        def view(n: int) -> str:
            # A view deriving its client on every request.
            derived = client.with_options(credentials=tenants[n % len(tenants)], timeout=5.0)
            return str(derived.get_creditors(reference="democreditor")["name"])

        with ThreadPoolExecutor(16) as pool:
            names = list(pool.map(view, range(24 * 8)))
    assert set(names) == {"Demo Creditor SAS"}
    assert sorted(token_apps(server)) == sorted(c.app_name for c in tenants)
    roots = [r for r in server.requests if r.path == "/"]
    assert len(roots) == len(tenants)  # one entry point per identity


def test_many_tasks_for_many_tenants_one_token_request_per_tenant(server: FakeServer) -> None:
    tenants = [tenant(n) for n in range(12)]
    for credentials in tenants:
        server.add_app(credentials.app_name, credentials.app_secret)

    async def main() -> None:
        client = server.async_client(retries=0)

        async def view(n: int) -> Any:
            derived = client.with_options(credentials=tenants[n % len(tenants)])
            return await derived.get_creditors(reference="democreditor")

        await asyncio.gather(*(view(n) for n in range(12 * 6)))

    asyncio.run(main())
    assert sorted(token_apps(server)) == sorted(c.app_name for c in tenants)


@pytest.mark.parametrize("kind", KINDS)
def test_the_least_recently_used_identity_is_dropped_not_the_first_made(
    server: FakeServer, kind: str
) -> None:
    server.add_app(tenant(0).app_name, tenant(0).app_secret)
    client = make(server, kind)
    authenticate(kind, client.with_options(credentials=tenant(0)))
    for n in range(1, 1024):  # 1,024 distinct in all
        client.with_options(credentials=tenant(n))
    assert client.with_options(credentials=tenant(0)).token is not None  # used: the newest
    client.with_options(credentials=tenant(1024))  # the 1,025th drops tenant 1, not tenant 0
    assert client.with_options(credentials=tenant(0)).token is not None
    assert len(server.token_requests) == 1


@pytest.mark.parametrize("kind", KINDS)
def test_an_identity_dropped_from_the_1024_asks_for_a_new_token(
    server: FakeServer, kind: str
) -> None:
    server.add_app(tenant(0).app_name, tenant(0).app_secret)
    client = make(server, kind)
    authenticate(kind, client.with_options(credentials=tenant(0)))
    for n in range(1, 1025):  # 1,024 others, each more recent than tenant 0
        client.with_options(credentials=tenant(n))
    assert client.with_options(credentials=tenant(0)).token is None
    authenticate(kind, client.with_options(credentials=tenant(0)))
    assert token_apps(server) == ["tenant-0", "tenant-0"]


@pytest.mark.parametrize("kind", KINDS)
def test_providers_that_compare_equal_share_an_identity(server: FakeServer, kind: str) -> None:
    server.add_app(tenant(5).app_name, tenant(5).app_secret)

    class Vault:
        def read(self) -> rp.AppCredentials:
            return tenant(5)

    vault = Vault()
    client = make(server, kind)
    token = authenticate(kind, client.with_options(credentials=vault.read))
    assert client.with_options(credentials=vault.read).token == token
    assert client.with_options(credentials=Vault().read).token is None  # another object
    assert "Vault.read>" in repr(client.with_options(credentials=vault.read))


@pytest.mark.parametrize("kind", KINDS)
def test_closing_a_derived_client_closes_nothing_else_and_the_original_closes_all(
    server: FakeServer, kind: str
) -> None:
    client = make(server, kind)
    admin = client.with_options(credentials=ADMIN)
    authenticate(kind, admin)
    if kind == "sync":
        admin.close()
    else:
        call(kind, admin.aclose())
    assert "closed" in repr(admin)
    # The original and another client of the same identity go on.
    authenticate(kind, client)
    other = client.with_options(credentials=ADMIN)
    assert authenticate(kind, other).scope == "api_admin"
    if kind == "sync":
        client.close()
    else:
        call(kind, client.aclose())
    with pytest.raises(RuntimeError, match="closed"):
        authenticate(kind, other)
    with pytest.raises(RuntimeError, match="closed"):
        client.with_options(credentials=ADMIN)


@pytest.mark.parametrize("kind", KINDS)
def test_a_derived_identity_never_travels(server: FakeServer, kind: str) -> None:
    admin = make(server, kind).with_options(credentials=ADMIN)
    for travel in (pickle.dumps, copy.deepcopy):
        with pytest.raises(TypeError, match="cannot be pickled"):
            travel(admin)
    assert ADMIN.password not in repr(admin)


@pytest.mark.parametrize("kind", KINDS)
def test_bad_credentials_are_refused_and_not_kept_in_a_frame(server: FakeServer, kind: str) -> None:
    client = make(server, kind)
    secret = "bad\udcff-secret-0a9"
    with pytest.raises(rp.ConfigurationError) as caught:
        client.with_options(credentials=rp.AppCredentials("tenant", secret))
    assert secret not in str(caught.value)
    for frame, _ in __import__("traceback").walk_tb(caught.value.__traceback__):
        for value in frame.f_locals.values():
            assert secret not in repr(value)
    with pytest.raises(rp.ConfigurationError, match="provider"):
        client.with_options(credentials=42)


def test_a_view_per_thread_sees_its_own_tenant(server: FakeServer) -> None:
    tenants = [tenant(n) for n in range(4)]
    for credentials in tenants:
        server.add_app(credentials.app_name, credentials.app_secret)
    seen: dict[int, str] = {}
    with server.client() as client:

        def work(n: int) -> None:
            derived = client.with_options(credentials=tenants[n])
            derived.authenticate()
            seen[n] = threading.current_thread().name

        threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert sorted(token_apps(server)) == [c.app_name for c in tenants]
