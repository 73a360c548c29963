"""The public API as a `mypy --strict` user sees it.

`make lint` type-checks this file with mypy --strict: every `assert_type` pins the type a user
gets, and an assignment to an annotated name checks a type a user may write. pytest also runs
it against the sandbox (through the plugin's fixtures, as a user's suite would), so every line
is true at run time too. `misuse.py` beside it holds the mistakes mypy must catch.
"""

from __future__ import annotations

import asyncio
import pickle
import sys
from collections.abc import (
    AsyncIterator,
    Callable,
    Coroutine,
    Iterator,
    KeysView,
    Mapping,
)
from typing import Any

import pytest

import recurring_payments as rp
from recurring_payments.testing import FakeServer, SandboxRequest

if sys.version_info >= (3, 11):
    from typing import assert_type
else:  # pragma: no cover
    from typing_extensions import assert_type


def test_credentials_and_construction(rp_server: FakeServer) -> None:
    app = rp.AppCredentials("shop-app", "s3cr3t")
    assert_type(app.app_name, str)
    assert_type(app.app_secret, str)
    admin = rp.AdminCredentials("democreditor", "admin", "pw")
    assert_type((admin.creditor, admin.login, admin.password), tuple[str, str, str])
    with rp.Client(
        rp_server.base_url,
        credentials=admin,
        profile=rp_server.profile,
        rel_namespace=None,
        timeout=5,
        connect_timeout=1.5,
        retries=0,
        token_leeway=10.0,
        max_response_size=2**20,
        allow_http=False,
        verify=True,  # or False, or a CA bundle path (str or os.PathLike)
        user_agent="shop/1.0",
    ) as client:
        assert_type(client, rp.Client)
        assert_type(
            client.credentials,
            rp.AppCredentials
            | rp.AdminCredentials
            | Callable[[], rp.AppCredentials | rp.AdminCredentials],
        )
        assert_type(client.base_url, str)
        assert_type(client.profile, str)
        assert_type(client.token, rp.Token | None)


def test_credentials_providers_and_identities(rp_server: FakeServer) -> None:
    def read_secret() -> rp.AppCredentials:
        return rp_server.credentials

    async def read_secret_async() -> rp.AppCredentials:
        return rp_server.credentials

    base_url, profile = rp_server.base_url, rp_server.profile
    with rp.Client(base_url, credentials=read_secret, profile=profile) as client:
        tenant = client.with_options(credentials=rp.AppCredentials("other", "pw"), retries=0)
        assert_type(tenant, rp.Client)
        assert_type(client.with_options(credentials=read_secret), rp.Client)
        assert client.authenticate().scope == "api"
    for provider in (read_secret, read_secret_async):
        aclient = rp.AsyncClient(base_url, credentials=provider, profile=profile)
        assert_type(aclient.with_options(credentials=read_secret_async), rp.AsyncClient)
        assert asyncio.run(aclient.authenticate()).scope == "api"


def test_from_env_keeps_the_class(monkeypatch: pytest.MonkeyPatch, rp_server: FakeServer) -> None:
    monkeypatch.setenv("RP_BASE_URL", rp_server.base_url)
    monkeypatch.setenv("RP_PROFILE", rp_server.profile)
    monkeypatch.setenv("RP_APP_NAME", rp_server.credentials.app_name)
    monkeypatch.setenv("RP_APP_SECRET", rp_server.credentials.app_secret)
    assert_type(rp.Client.from_env("RP_"), rp.Client)
    assert_type(rp.AsyncClient.from_env("RP_", timeout=3.0), rp.AsyncClient)


def test_sync_client_resources_and_links(rp_server: FakeServer, rp_client: rp.Client) -> None:
    rp_server.add_link("get-thing", "/things/{id}", templated=True)
    rp_server.add_resource("/things/1", {"id": 1, "_links": {"self": {"href": "/things/1"}}})
    rp_server.route("POST", "/things", lambda request: (201, {"id": 2}))
    rp_server.route("PATCH", "/things/1", lambda request: {"id": 1, **request.json})

    token = rp_client.authenticate()
    assert_type(token, rp.Token)
    assert_type((token.scope, token.jti, token.token_type), tuple[str, str, str])
    assert_type((token.expires_at, token.expires_in), tuple[float, float])

    root = rp_client.root()
    assert_type(root, rp.Resource)
    assert_type(rp_client.root(refresh=True), rp.Resource)
    link = rp_client.get_thing
    assert_type(link, rp.Link)
    assert_type((link.rel, link.href, link.templated), tuple[str, str, bool])
    assert_type(link.variables, list[str])
    assert_type(link.title, str | None)
    assert_type(link.expand(id=1), str)

    thing = link(id=1)
    assert_type(thing, rp.Resource)
    assert_type(link.get(id=1), rp.Resource)
    assert_type(rp_client.get("/things/{id}", id=1), rp.Resource)
    assert_type(rp_client.post("/things", {"name": "x"}), rp.Resource)
    assert_type(rp_client.patch("/things/1", {"name": "y"}), rp.Resource)
    assert_type(thing["id"], Any)
    assert_type(thing.get("missing", 0), Any)
    assert_type("id" in thing, bool)
    assert_type(len(thing), int)
    assert_type(thing.keys(), KeysView[str])
    assert_type(thing.data, dict[str, Any])
    assert_type(thing.to_dict(), dict[str, Any])
    assert_type(thing.url, str | None)
    assert_type(thing.status, int | None)
    assert_type(thing.etag, str | None)
    assert_type(thing.partial, bool)
    headers = thing.headers
    assert_type(headers, rp.Headers)
    assert_type(headers["content-type"], str)
    links: Mapping[str, rp.Link | list[rp.Link]] = root.links
    embedded: Mapping[str, rp.Resource | list[rp.Resource]] = thing.embedded
    assert links and not embedded
    assert_type(thing.fetch(), rp.Resource)
    assert_type(root.follow("get-thing", id=1), rp.Resource)
    pages = thing.pages()
    assert_type(pages, Iterator[rp.Resource])
    assert [page["id"] for page in pages] == [1]
    items = root.all("things")
    assert_type(items, Iterator[rp.Resource])
    assert list(items) == []
    travelled = pickle.loads(pickle.dumps(thing))
    assert_type(rp_client.attach(travelled), rp.Resource)
    body = rp_server.notification_body("/things/1")
    assert_type(body, bytes)
    assert_type(rp_client.parse_notification(body), rp.Resource)
    assert_type(rp_client.verify_notification(body.decode()), rp.Resource)
    assert_type(rp.expand_uri_template("/t{?q}", {"q": 1}), str)
    assert_type(rp.__version__, str)


def test_errors_carry_typed_details(rp_client: rp.Client) -> None:
    with pytest.raises(rp.NotFoundError) as caught:
        rp_client.get("/nowhere")
    err = caught.value
    assert_type(err.status, int)
    assert_type((err.method, err.url, err.body), tuple[str, str, str])
    assert_type(err.headers, rp.Headers)
    assert_type(err.retry_after, float | None)
    assert_type(err.outcome_unknown, bool)
    assert_type(err.json, Any)
    assert_type(err.code, int | str | None)
    assert_type(err.message, str | None)
    assert err.status == 404 and err.code == 902
    problem: rp.Error = rp.AuthenticationError("x", status=401, method="POST", url="u")
    if isinstance(problem, rp.AuthenticationError):
        assert_type(problem.error, str | None)
        assert_type(problem.error_description, str | None)
    transport = rp.TimeoutError("slow", method="GET", url="u")
    assert_type(transport.url, str | None)
    builtin_timeout: TimeoutError = transport  # also the builtin TimeoutError
    value_errors: tuple[ValueError, ValueError] = (
        rp.ConfigurationError("bad"),
        rp.TemplateError("bad"),
    )
    lookups: tuple[AttributeError, KeyError] = (
        rp.LinkNotFoundError("x"),
        rp.LinkNotFoundError("x"),
    )
    assert builtin_timeout and value_errors and lookups


def test_fake_server(rp_server: FakeServer) -> None:
    assert_type(rp_server.base_url, str)
    assert_type((rp_server.profile, rp_server.rel_namespace), tuple[str, str])
    assert_type(rp_server.credentials, rp.AppCredentials)
    assert_type(rp_server.running, bool)
    assert_type(rp_server.clock, float)

    def handler(request: SandboxRequest) -> tuple[int, dict[str, Any], dict[str, str]]:
        assert_type(request.json, Any)
        assert_type(request.query, dict[str, str])
        assert_type(request.path_params, dict[str, str])
        return 201, {"id": request.path_params["id"]}, {"Location": "/things/1"}

    rp_server.route("POST", "/things/{id}", handler)
    rp_server.add_app("other", "secret")
    rp_server.add_admin("democreditor", "admin", "pw")
    rp_server.fail_next(503, 1, headers={"Retry-After": "0"})
    rp_server.clear_faults()
    with rp_server.client(retries=0) as client:
        assert client.post("/things/1", {}).status == 201
    entries = rp_server.requests
    assert_type(entries, list[SandboxRequest])
    assert_type(entries[-1].status, int | None)
    assert_type(entries[-1].body, bytes)
    assert_type(rp_server.async_client(), rp.AsyncClient)
    with FakeServer(token_ttl=60.0, demo=True) as other:
        assert_type(other, FakeServer)


@pytest.mark.asyncio
async def test_async_client(rp_server: FakeServer, rp_async_client: rp.AsyncClient) -> None:
    rp_server.add_link("get-thing", "/things/{id}", templated=True)
    rp_server.add_resource(
        "/things/1",
        {"id": 1, "_links": {"self": {"href": "/things/1"}, "next": {"href": "/things/2"}}},
    )
    rp_server.add_resource("/things/2", {"id": 2, "_links": {"self": {"href": "/things/2"}}})
    rp_server.route("POST", "/things", lambda request: (201, {"id": 3}))

    assert_type(await rp_async_client.authenticate(), rp.Token)
    root = await rp_async_client.root()
    assert_type(root, rp.AsyncResource)
    thing = await rp_async_client.get_thing(id=1)
    assert_type(thing, rp.AsyncResource)
    link = await rp_async_client.get_thing.link()
    assert_type(link, rp.AsyncLink)
    call: Coroutine[Any, Any, rp.AsyncResource] = link(id=1)  # a coroutine: create_task() takes it
    assert_type(await call, rp.AsyncResource)
    assert_type(await link.get(id=1), rp.AsyncResource)
    assert_type(await rp_async_client.get("/things/{id}", id=1), rp.AsyncResource)
    assert_type(await rp_async_client.post("/things", {"name": "x"}), rp.AsyncResource)
    assert_type(await thing.fetch(), rp.AsyncResource)
    assert_type(await root.follow("get-thing", id=2), rp.AsyncResource)
    pages = thing.pages()
    assert_type(pages, AsyncIterator[rp.AsyncResource])
    assert [page["id"] async for page in pages] == [1, 2]
    items = thing.all("things")
    assert_type(items, AsyncIterator[rp.AsyncResource])
    assert [item async for item in items] == []
    assert_type(rp_async_client.attach(thing), rp.AsyncResource)
    body = rp_server.notification_body("/things/1")
    assert_type(rp_async_client.parse_notification(body), rp.AsyncResource)
    assert_type(await rp_async_client.verify_notification(body), rp.AsyncResource)
    embedded: Mapping[str, rp.AsyncResource | list[rp.AsyncResource]] = thing.embedded
    links: Mapping[str, rp.AsyncLink | list[rp.AsyncLink]] = root.links
    assert links and not embedded
    async with rp_server.async_client() as client:
        assert_type(client, rp.AsyncClient)
