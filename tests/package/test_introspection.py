"""Jupyter and introspection (issue 6): what IPython, pydoc and tab completion do to our objects
must send no request and create no coroutine; reprs are one line with the URL and no secret;
the HTML table shows state, links (templates, variables) and embedded counts, escaped."""

from __future__ import annotations

import asyncio
import gc
import html as html_module
import inspect
import pydoc
import threading
import time
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import api_requests, header

import recurring_payments as rp
from recurring_payments.testing import FakeServer

# What IPython looks up on any object it displays or documents (`obj?`, `obj<tab>`, Out[]).
IPYTHON_PROBES = (
    "_ipython_canary_method_should_not_exist_",
    "_ipython_display_",
    "_repr_mimebundle_",
    "_repr_html_",
    "_repr_markdown_",
    "_repr_pretty_",
    "_ipython_key_completions_",
    "__wrapped__",
    "__signature__",
    "__custom_documentations__",
)


def introspect(obj: Any) -> None:
    """Do to `obj` what IPython's `obj?`, display and completion, pydoc and jedi do."""
    assert getattr(obj, "_ipython_canary_method_should_not_exist_", None) is None
    for name in IPYTHON_PROBES:
        getattr(obj, name, None)
    for name in ("getdoc", "trait_names"):  # IPython calls these when they exist
        method = getattr(obj, name, None)
        if callable(method):
            method()
    dir(obj)
    repr(obj)
    str(obj)
    pydoc.render_doc(obj)
    try:
        inspect.signature(obj)
    except (TypeError, ValueError):
        pass  # not callable: what IPython expects too
    inspect.getdoc(obj)


@pytest.fixture
def no_unawaited_coroutine() -> Iterator[None]:
    """Fails the test if a coroutine was created and dropped without being awaited."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
        gc.collect()
    messages = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert messages == []


@pytest.mark.usefixtures("no_unawaited_coroutine")
def test_async_client_introspection_before_the_entry_point(demo: FakeServer) -> None:
    client = demo.async_client()
    introspect(client)
    for name in ("getdoc", "trait_names", "_repr_mimebundle_", "_ipython_display_"):
        with pytest.raises(AttributeError):
            getattr(client, name)
    introspect(client.get_creditors)  # a relation not fetched yet: still nothing sent
    assert "get_creditors" not in dir(client)  # completion cannot await the entry point
    assert demo.requests == []


@pytest.mark.usefixtures("no_unawaited_coroutine")
def test_async_resource_introspection(demo: FakeServer) -> None:
    client = demo.async_client()

    async def fetch() -> rp.AsyncResource:
        return await client.get_creditors(reference="democreditor")

    creditor = asyncio.run(fetch())
    sent = len(demo.requests)
    for obj in (client, creditor, creditor.get_mandates, creditor.links, client.get_mandates):
        introspect(obj)
    assert "get_creditors" in dir(client) and "get_mandates" in dir(creditor)
    assert len(demo.requests) == sent


def test_sync_client_introspection_sends_nothing(demo: FakeServer) -> None:
    client = demo.client()
    with pytest.raises(AttributeError):
        client.getdoc  # noqa: B018 (what IPython's `client?` calls)
    introspect(client)
    assert "get_creditors" not in dir(client)  # completion does no I/O (docs/guides/jupyter.md)
    assert demo.requests == []
    client.root()
    assert "get_creditors" in dir(client)  # the cached entry point's relations
    assert len(api_requests(demo)) == 1


def test_ipython_inspects_an_async_client_without_side_effects(demo: FakeServer) -> None:
    interactive = pytest.importorskip("IPython.core.interactiveshell")
    shell = interactive.InteractiveShell.instance()
    client = demo.async_client()
    shell.user_ns["client"] = client
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        text = shell.object_inspect_text("client")
        shell.object_inspect_text("client.get_creditors")
        shell.display_formatter.format(client)
        gc.collect()
    assert "AsyncClient" in text
    assert not [w for w in caught if "never awaited" in str(w.message)]
    assert demo.requests == []


def test_reprs_are_one_line_with_the_url_and_no_secret(demo: FakeServer) -> None:
    secret = demo.credentials.app_secret
    demo.route("GET", "/cookie", lambda r: (200, {"a": 1}, {"Set-Cookie": "session=s3cr3t"}))
    client = demo.client()
    aclient = demo.async_client()
    creditor = client.get_creditors(reference="democreditor")
    mandates = creditor.get_mandates()
    token = client.token
    assert token is not None
    bearer = header(api_requests(demo)[0], "authorization")
    assert bearer is not None and bearer.startswith("Bearer ")
    with pytest.raises(rp.NotFoundError) as missing:
        client.get("/nowhere")
    cookie = client.get("/cookie")
    with_url = {
        "client": client,
        "async client": aclient,
        "relation": aclient.get_creditors,
        "resource": creditor,
        "link": creditor.get_mandates,
        "embedded": mandates.embedded["mandates"][0],
        "error": missing.value,
        "server": demo,
    }
    others = {
        "credentials": demo.credentials,
        "admin": rp.AdminCredentials("democreditor", "admin", "pw-s3cr3t"),
        "token": token,
        "headers": cookie.headers,
        "links": creditor.links,
        "journal entry": demo.requests[-1],
    }
    for what, obj in {**with_url, **others}.items():
        text = repr(obj)
        assert "\n" not in text and len(text) < 400, (what, text)
        for hidden in (secret, bearer[len("Bearer ") :], "pw-s3cr3t", "s3cr3t"):
            assert hidden not in text, (what, text)
    for what, obj in with_url.items():
        assert demo.base_url in repr(obj), what


def test_html_shows_state_links_with_variables_and_embedded_counts(demo_client: rp.Client) -> None:
    creditor = demo_client.get_creditors(reference="democreditor")
    html = creditor._repr_html_()
    assert html.count("<table>") == 2  # state, links; no embedded resources
    assert "<td><code>name</code></td><td>&#x27;Demo Creditor SAS&#x27;</td>" in html
    href = html_module.escape(creditor.get_mandates.href)  # a template: {&page,size}
    assert f"<td><code>get-mandates</code></td><td>{href}</td><td>page, size</td>" in html
    page = creditor.get_mandates()
    assert "<td><code>mandates</code></td><td>20</td>" in page._repr_html_()


def test_html_escapes_everything_it_shows(server: FakeServer, client: rp.Client) -> None:
    server.add_resource(
        "/evil",
        {
            "<b>key</b>": "<script>x</script>",
            "_links": {"self": {"href": "/evil?a=<i>"}, "next": {"href": "/n{?<x>}"}},
            "_embedded": {"<em>": {"x": 1}},
        },
    )
    html = client.get("/evil")._repr_html_()
    for raw in ("<b>", "<script>", "<i>", "<x>", "<em>"):
        assert raw not in html
    assert "&lt;script&gt;" in html and "&lt;em&gt;" in html


def test_key_completions(demo_client: rp.Client) -> None:
    creditor = demo_client.get_creditors(reference="democreditor")
    assert creditor._ipython_key_completions_() == ["reference", "name"]
    names = creditor.links._ipython_key_completions_()
    assert "get-mandates" in names and "self" in names
    for name in names:
        assert creditor.links[name] is not None


@pytest.mark.parametrize("sync", [True, False], ids=["sync", "async"])
def test_dir_does_no_io_against_a_hung_api(demo: FakeServer, sync: bool) -> None:
    server = demo
    # Before: dir(client) fetched a token and the entry point, and Tab froze for `timeout`.
    server.delay_next(5.0, count=10)
    client = server.client() if sync else server.async_client()
    started = time.monotonic()
    names = dir(client)
    assert time.monotonic() - started < 1.0
    assert "get_creditors" not in names and "root" in names
    assert server.requests == []
    server.clear_faults()


def test_sync_dir_does_not_wait_for_an_entry_point_in_flight(demo: FakeServer) -> None:
    server = demo
    client = server.client()
    client.authenticate()
    server.delay_next(1.5, path="/")
    fetch = threading.Thread(target=client.root)
    fetch.start()
    try:
        deadline = time.monotonic() + 5
        while not any(r.path == "/" for r in server.requests) and time.monotonic() < deadline:
            time.sleep(0.01)  # the GET / is on the wire, its answer held back
        started = time.monotonic()
        assert "get_creditors" not in dir(client)
        assert time.monotonic() - started < 0.5
    finally:
        fetch.join()
    assert "get_creditors" in dir(client)
    assert len(api_requests(server)) == 1


@pytest.mark.asyncio
async def test_async_dir_does_not_wait_for_an_entry_point_in_flight(demo: FakeServer) -> None:
    server = demo
    client = server.async_client()
    await client.authenticate()
    server.delay_next(1.5, path="/")
    fetch = asyncio.ensure_future(client.root())
    deadline = time.monotonic() + 5
    while not any(r.path == "/" for r in server.requests) and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    started = time.monotonic()
    assert "get_creditors" not in dir(client)
    assert time.monotonic() - started < 0.5
    await fetch
    assert "get_creditors" in dir(client)
    assert len(api_requests(server)) == 1


# Names tools probe and may call: never relations, even when the entry point has such a rel.
PROBED = ("close", "aclose", "getdoc", "trait_names", "_repr_html_", "__aenter__", "__await__")


@pytest.mark.usefixtures("no_unawaited_coroutine")
def test_async_client_close_is_not_a_relation(server: FakeServer) -> None:
    for rel in ("close", "getdoc", "trait-names"):
        server.add_link(rel, f"/{rel}")
    client = server.async_client()
    for _ in ("before the entry point", "after"):
        with pytest.raises(AttributeError, match=r"await aclient\.aclose\(\)"):
            client.close  # noqa: B018
        for name in PROBED:
            if name not in ("aclose", "__aenter__"):  # real members of AsyncClient
                with pytest.raises(AttributeError):
                    getattr(client, name)
        asyncio.run(client.root())
    root = asyncio.run(client.root())
    for rel in ("close", "getdoc", "trait-names"):  # still reachable by rel
        assert root.links[rel].href.endswith(f"/{rel}")
    assert not {"close", "getdoc", "trait_names"} & set(dir(client))  # completion offers none


def test_sync_client_probed_names_are_not_relations(server: FakeServer) -> None:
    for rel in ("aclose", "getdoc", "trait-names"):
        server.add_link(rel, f"/{rel}")
    client = server.client()
    with pytest.raises(AttributeError, match=r"client\.close\(\)"):
        client.aclose  # noqa: B018
    for name in PROBED:
        if name != "close":  # a real method of Client
            with pytest.raises(AttributeError):
                getattr(client, name)
    assert server.requests == []  # not even the entry point was fetched
    client.root()
    for name in PROBED:
        if name != "close":
            with pytest.raises(AttributeError):
                getattr(client, name)
    assert not {"aclose", "getdoc", "trait_names"} & set(dir(client))
    client.close()
