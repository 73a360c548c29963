"""Resources travel (docs/concepts.md#resources-that-travel): a `Resource` or `AsyncResource`
survives pickle (what a Django cache, Celery's pickle serializer and multiprocessing do) and
`copy.deepcopy`/`copy.copy` with its document and response facts, without its client, token or
credentials; the copy is detached until `client.attach(res)` binds it again, and then the origin
rules of docs/concepts.md#tokens are those of that client."""

from __future__ import annotations

import asyncio
import copy
import pickle
import subprocess
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from conftest import api_requests, header

import recurring_payments as rp
from recurring_payments.testing import FakeServer

Travel = Callable[[Any], Any]
TRAVELS: dict[str, Travel] = {
    "pickle": lambda res: pickle.loads(pickle.dumps(res)),
    "pickle-0": lambda res: pickle.loads(pickle.dumps(res, protocol=0)),
    "deepcopy": copy.deepcopy,
    "copy": copy.copy,
}


@pytest.fixture(params=list(TRAVELS))
def travel(request: pytest.FixtureRequest) -> Travel:
    return TRAVELS[request.param]


@pytest.fixture
def aclient(demo: FakeServer) -> Iterator[rp.AsyncClient]:
    client = demo.async_client()
    yield client
    asyncio.run(client.aclose())


def same_reading(copied: Any, original: Any) -> None:
    """Everything a reader sees of `original` is the same on `copied`."""
    assert type(copied) is type(original)
    assert copied is not original
    assert dict(copied) == dict(original) and copied.data == original.data
    assert copied.to_dict() == original.to_dict()
    assert (copied.url, copied.status, copied.etag) == (
        original.url,
        original.status,
        original.etag,
    )
    assert dict(copied.headers) == dict(original.headers)
    assert copied.partial == original.partial
    assert list(copied.links) == list(original.links)
    for rel, link in original.links.items():
        twin = copied.links[rel]
        pairs = zip(twin, link, strict=True) if isinstance(link, list) else [(twin, link)]
        for a, b in pairs:
            assert (a.rel, a.href, a.templated, a.variables) == (
                b.rel,
                b.href,
                b.templated,
                b.variables,
            )
            assert a.expand(**dict.fromkeys(a.variables, "x")) == b.expand(
                **dict.fromkeys(b.variables, "x")
            )
    assert list(copied.embedded) == list(original.embedded)
    assert repr(copied) == repr(original)
    assert dir(copied) == dir(original)


def test_a_page_travels_with_its_state_links_embedded_and_response_facts(
    demo: FakeServer, demo_client: rp.Client, travel: Travel
) -> None:
    page = demo_client.get_creditors(reference="democreditor").get_mandates(size=5)
    copied = travel(page)
    same_reading(copied, page)
    items, originals = copied.embedded["mandates"], page.embedded["mandates"]
    assert [m.data for m in items] == [m.data for m in originals]
    for item, original in zip(items, originals, strict=True):
        same_reading(item, original)
    # Relations by every name, as on the original.
    assert copied.links["next"].href == page.links["next"].href
    assert copied.mandates[0]["reference"] == page.mandates[0]["reference"]


def test_an_embedded_resource_travels_alone_with_its_inherited_curies(
    server: FakeServer, client: rp.Client, travel: Travel
) -> None:
    # The CURIE is declared by the page only: the item's `ex:owner` resolves through it.
    server.add_resource(
        "/things",
        {
            "_links": {
                "self": {"href": "/things"},
                "curies": [{"name": "ex", "href": "https://rels.example/{rel}", "templated": True}],
            },
            "_embedded": {
                "ex:thing": [
                    {
                        "id": 1,
                        "_links": {
                            "self": {"href": "/things/1"},
                            "ex:owner": {"href": "/owners/9"},
                        },
                    }
                ]
            },
        },
    )
    item = client.get("/things").embedded["ex:thing"][0]
    copied = travel(item)
    same_reading(copied, item)
    assert copied.partial is True and copied.status is None
    assert copied.links["https://rels.example/owner"].href == "/owners/9"
    assert copied.owner.href == "/owners/9"


def test_an_empty_response_travels(server: FakeServer, client: rp.Client, travel: Travel) -> None:
    server.route("POST", "/things", lambda request: (204, None, {"X-Thing": "made"}))
    made = client.post("/things", {})
    copied = travel(made)
    assert (copied.status, copied.headers["x-thing"], dict(copied)) == (204, "made", {})
    assert copied.url is None


def test_the_copy_is_detached_and_every_navigation_names_attach(
    demo: FakeServer, demo_client: rp.Client, travel: Travel
) -> None:
    creditor = demo_client.get_creditors(reference="democreditor")
    page = creditor.get_mandates(size=50)
    copied, copied_page = travel(creditor), travel(page)
    demo.clear_requests()
    attempts: list[Callable[[], Any]] = [
        copied.fetch,
        lambda: copied.follow("get-mandates"),
        lambda: copied.get_mandates(size=5),
        lambda: copied.get_mandates.get(size=5),
        lambda: copied.links["self"].post({}),
        lambda: copied.links["self"].patch({"name": "x"}),
        lambda: list(copied_page.pages()),
        lambda: list(copied_page.all("mandates")),
        lambda: next(copied_page.all("mandates")),
        lambda: next(copied_page.pages()),
        lambda: copied_page.embedded["mandates"][0].fetch(),
    ]
    for attempt in attempts:
        with pytest.raises(rp.ConfigurationError, match=r"client\.attach\(res\)"):
            attempt()
    assert demo.requests == []  # nothing was sent
    # Reading still works, the original is untouched and still follows its links.
    assert copied["name"] == "Demo Creditor SAS"
    assert creditor.fetch()["name"] == "Demo Creditor SAS"


@pytest.mark.attack("secrets")
def test_nothing_secret_travels(demo: FakeServer, demo_client: rp.Client) -> None:
    creditor = demo_client.get_creditors(reference="democreditor")
    page = creditor.get_mandates(size=5)
    token = demo_client.token
    assert token is not None
    secrets = [demo.credentials.app_secret, *demo._native.issued_tokens()]
    for res in (creditor, page, page.embedded["mandates"][0], list(page.all("mandates"))):
        for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
            data = pickle.dumps(res, protocol=protocol)
            for secret in secrets:
                assert secret.encode() not in data
            assert b"NativeClient" not in data and b"AppCredentials" not in data
            assert b"sandbox-app" not in data  # not even the app's name


@pytest.mark.attack("secrets")
def test_a_client_never_travels(demo: FakeServer, demo_client: rp.Client) -> None:
    aclient = demo.async_client()
    try:
        for client in (demo_client, aclient):
            with pytest.raises(TypeError, match="attach"):
                pickle.dumps(client)
            with pytest.raises(TypeError, match="attach"):
                copy.deepcopy(client)
            assert copy.copy(client)._session is client._session  # a shallow copy shares it
    finally:
        asyncio.run(aclient.aclose())


@pytest.mark.attack("process")
def test_a_pickle_loads_in_a_fresh_process(demo: FakeServer, demo_client: rp.Client) -> None:
    page = demo_client.get_creditors(reference="democreditor").get_mandates(size=3)
    script = (
        "import pickle, sys\n"
        "import recurring_payments as rp\n"
        "page = pickle.loads(sys.stdin.buffer.read())\n"
        "print(type(page).__name__, page.status, page.url)\n"
        "print([m['reference'] for m in page.embedded['mandates']])\n"
        "try:\n"
        "    page.fetch()\n"
        "except rp.ConfigurationError as err:\n"
        "    print('detached', 'client.attach(res)' in str(err))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        input=pickle.dumps(page),
        capture_output=True,
        timeout=60,
        check=True,
    )
    lines = done.stdout.decode().splitlines()
    assert lines == [
        f"Resource 200 {page.url}",
        str([m["reference"] for m in page.embedded["mandates"]]),
        "detached True",
    ]


def test_attach_binds_the_same_document_to_a_client(
    demo: FakeServer, demo_client: rp.Client, aclient: rp.AsyncClient, travel: Travel
) -> None:
    page = demo_client.get_creditors(reference="democreditor").get_mandates(size=50)
    copied = travel(page)
    attached = demo_client.attach(copied)
    assert isinstance(attached, rp.Resource) and attached is not copied
    same_reading(attached, page)
    demo.clear_requests()
    assert len(list(attached.all("mandates"))) == 120
    assert [r.path for r in api_requests(demo)] == ["/mandates", "/mandates"]
    assert attached.embedded["mandates"][0].fetch().partial is False
    assert copied.partial is False and attached.status == 200

    # A sync resource attached to an async client is an AsyncResource, and back.
    mine = aclient.attach(copied)
    assert isinstance(mine, rp.AsyncResource)
    refetched = asyncio.run(mine.fetch())
    assert refetched.url == page.url and isinstance(refetched, rp.AsyncResource)
    assert isinstance(demo_client.attach(mine), rp.Resource)
    # An attached embedded item stays partial; attaching does no I/O.
    demo.clear_requests()
    item = demo_client.attach(travel(page.embedded["mandates"][0]))
    assert item.partial is True and demo.requests == []
    assert item.fetch()["reference"] == "MND-0001"


def test_attach_refuses_what_is_not_a_resource(demo_client: rp.Client) -> None:
    for value in ({"_links": {}}, None, demo_client.root().links["self"]):
        with pytest.raises(TypeError, match="Resource or AsyncResource"):
            demo_client.attach(value)  # type: ignore[arg-type]


def test_a_closed_clients_attached_resource_says_closed(demo: FakeServer) -> None:
    with demo.client() as first:
        copied = pickle.loads(pickle.dumps(first.root()))
    with pytest.raises(RuntimeError, match="closed"):
        first.attach(copied).fetch()


@pytest.mark.asyncio
async def test_async_resources_travel_and_attach(demo: FakeServer) -> None:
    async with demo.async_client() as client:
        creditor = await client.get_creditors(reference="democreditor")
        page = await creditor.get_mandates(size=50)
        for travel in TRAVELS.values():
            copied = travel(page)
            same_reading(copied, page)
            with pytest.raises(rp.ConfigurationError, match=r"client\.attach\(res\)"):
                await copied.fetch()
            with pytest.raises(rp.ConfigurationError, match=r"client\.attach\(res\)"):
                await copied.links["next"].get()
            with pytest.raises(rp.ConfigurationError, match=r"client\.attach\(res\)"):
                [p async for p in copied.pages()]
            with pytest.raises(rp.ConfigurationError, match=r"client\.attach\(res\)"):
                [m async for m in copied.all("mandates")]
            attached = client.attach(copied)
            assert isinstance(attached, rp.AsyncResource)
            assert len([m async for m in attached.all("mandates")]) == 120


# --- the origin rules of the attaching client ---------------------------------------------------


@pytest.mark.attack("origin")
def test_an_attached_resources_links_off_the_origin_never_get_the_token(
    server: FakeServer, client: rp.Client
) -> None:
    with FakeServer() as other:
        other.add_resource("/elsewhere", {"_links": {"self": {"href": "/elsewhere"}}})
        other.route("POST", "/elsewhere", lambda request: (201, {"made": True}))
        # Another origin serves it (another port of the same host is another origin).
        server.add_resource(
            "/pointer",
            {
                "_links": {
                    "self": {"href": "/pointer"},
                    "away": {"href": other.base_url + "/elsewhere"},
                }
            },
        )
        travelled = pickle.loads(pickle.dumps(client.get("/pointer")))
        with server.client() as fresh:
            attached = fresh.attach(travelled)
            attached.fetch()  # to its own origin: with its token
            assert (header(server.requests[-1], "authorization") or "").startswith("Bearer ")
            # The other sandbox refuses (another profile, no token of its own)...
            with pytest.raises(rp.ClientError):
                attached.away()
            with pytest.raises(rp.ClientError):
                attached.links["away"].post({})
        received = [r for r in other.requests if r.path == "/elsewhere"]
        assert [r.method for r in received] == ["GET", "POST"] and other.token_requests == []
        for request in received:  # ...and never gets our token, nor any credential
            assert header(request, "authorization") is None
