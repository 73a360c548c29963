"""Every example of examples/ runs against the sandbox: the Django and Flask apps through their
test clients, the merchant's pytest suite and the asyncio script as subprocesses, and the
notebook's code cells as a script (with the display of each cell's last expression)."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from recurring_payments.testing import FakeServer

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
PREFIX = "RECURRING_PAYMENTS_"
FORM = {
    "reference": "cust-7",
    "email": "jane@example.com",
    "given_name": "Jane",
    "family_name": "Doe",
}


def settings_of(server: FakeServer) -> dict[str, str]:
    return {
        "BASE_URL": server.base_url,
        "PROFILE": server.profile,
        "REL_NAMESPACE": server.rel_namespace,
        "APP_NAME": server.credentials.app_name,
        "APP_SECRET": server.credentials.app_secret,
    }


def environment(server: FakeServer | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(PREFIX)}
    if server is not None:
        env |= {PREFIX + k: v for k, v in settings_of(server).items()}
    return env


@pytest.fixture
def examples_importable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(EXAMPLES))


def orders_posted(server: FakeServer) -> list[Any]:
    return [r for r in server.requests if r.method == "POST" and r.path == "/orders"]


# -- Django ------------------------------------------------------------------------------------


@pytest.fixture
def django_views(examples_importable: None) -> Iterator[ModuleType]:
    import django
    from django.conf import settings

    if not settings.configured:
        settings.configure(
            DEBUG=False,
            SECRET_KEY="only-for-the-example-tests",
            ALLOWED_HOSTS=["testserver"],
            ROOT_URLCONF="django_app.urls",
            INSTALLED_APPS=[],
            MIDDLEWARE=[],
            USE_TZ=True,
        )
        django.setup()
    from django_app import views

    try:
        yield views
    finally:
        views.close_client()


def test_django_view_redirects_to_the_approval_page(
    demo: FakeServer, django_views: ModuleType
) -> None:
    from django.test import Client, override_settings

    with override_settings(RECURRING_PAYMENTS=settings_of(demo)):
        browser = Client()
        started = browser.post("/onboarding/", FORM)
        assert started.status_code == 302
        assert started["Location"].startswith("https://checkout.sandbox.invalid/userApproval?")
        (posted,) = orders_posted(demo)
        assert posted.json["subscriber"] == {"reference": "cust-7"}
        assert posted.json["started"] is True
        assert demo.requests[-1].path == "/orders"  # the browser, not we, goes to checkout
        assert len(demo.token_requests) == 1
        order_id = _last_order_id(demo)  # (another client: a second token)
        order = browser.get(f"/orders/{order_id}/")
        assert order.status_code == 200
        assert order.json()["state"] == "open.running"

        assert browser.get("/orders/nope/").status_code == 404
        missing = browser.post("/onboarding/", {"reference": "x"})
        assert (missing.status_code, missing.content) == (400, b"missing field 'email'")
        demo.fail_next(status=503, path="/orders")
        failed = browser.post("/onboarding/", FORM)
        assert failed.status_code == 502
        assert b"unavailable" in failed.content
        assert len(orders_posted(demo)) == 2  # the failed POST was not retried
        assert len(demo.token_requests) == 2  # one shared client, one token (and the other)
        assert django_views.get_client() is django_views.get_client()


def test_django_client_from_the_environment(
    demo: FakeServer, django_views: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    from django.test import Client

    for name, value in settings_of(demo).items():
        monkeypatch.setenv(PREFIX + name, value)
    assert Client().post("/onboarding/", FORM).status_code == 302
    assert django_views.get_client().base_url == demo.base_url


def test_django_notification_view(
    demo: FakeServer, django_views: ModuleType, caplog: pytest.LogCaptureFixture
) -> None:
    # The notifications guide's Django view, end to end through Django's test client: the
    # sandbox gives the body the API would POST, the view verifies it through the API.
    from django.test import Client, override_settings

    hal = f'application/hal+json; profile="{demo.profile}"'
    with override_settings(RECURRING_PAYMENTS=settings_of(demo)), demo.client() as api:
        order = api.create_orders.post({"reference": "o-notified", "started": True})
        assert order.url is not None
        body = demo.notification_body(order.url.removeprefix(demo.base_url))
        demo.clear_requests()
        browser = Client()
        assert browser.post("/notifications/", body, content_type=hal).status_code == 204
        assert django_views.notified[order.url] == "open.running"
        assert [r.path for r in demo.requests if r.path != "/oauth/token"] == [
            order.url.removeprefix(demo.base_url)
        ]
        # A forged body: its self elsewhere is refused before anything is sent.
        demo.clear_requests()
        forged = b'{"state": "paid", "_links": {"self": {"href": "https://evil.example/o/1"}}}'
        assert browser.post("/notifications/", forged, content_type=hal).status_code == 400
        assert browser.post("/notifications/", b"not json", content_type=hal).status_code == 400
        assert demo.requests == []
        # A self on the API that it does not serve: one GET, 404, refused.
        missing = b'{"_links": {"self": {"href": "/orders/999999"}}}'
        assert browser.post("/notifications/", missing, content_type=hal).status_code == 400
        # Each refusal is logged once, its reason saying "notification refused" once.
        refusals = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
        assert len(refusals) == 3, refusals
        assert all(m.count("notification refused") == 1 for m in refusals), refusals
        assert "HTTP 404" in refusals[-1]
        # The API unavailable: 503, so that the sender posts it again.
        demo.fail_next(503, count=3)  # the first attempt and its two retries
        assert browser.post("/notifications/", body, content_type=hal).status_code == 503
        assert browser.get("/notifications/").status_code == 405


GUIDE = ROOT / "docs" / "guides" / "notifications.md"


def files_printed_in(page: Path) -> dict[str, str]:
    """The ```python blocks of a page that are files: those whose first line names one
    (`# conftest.py`), by name."""
    blocks = re.findall(r"^```python\n# ([\w/]+\.py)\n(.*?)^```$", page.read_text(), re.M | re.S)
    return dict(blocks)


def test_the_django_app_copied_alone_passes_the_guides_tests(tmp_path: Path) -> None:
    # What a reader does: copy examples/django_app into a project, add the notifications
    # guide's conftest.py and test module as printed, and run pytest (no RECURRING_PAYMENTS_*
    # set: the guide's fixture points the app at the plugin's demo sandbox).
    shutil.copytree(EXAMPLES / "django_app", tmp_path / "django_app")
    printed = files_printed_in(GUIDE)
    assert {"conftest.py", "test_notifications.py"} <= set(printed)
    for name in ("conftest.py", "test_notifications.py"):
        (tmp_path / name).write_text(printed[name])
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=environment(None),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout


def _last_order_id(server: FakeServer) -> str:
    with server.client() as client:
        page = client.search_orders(creditorReference="democreditor")
        orders = page.embedded["orders"]
        assert isinstance(orders, list)
        return str(orders[-1]["id"])


# -- Flask -------------------------------------------------------------------------------------


def test_flask_app(demo: FakeServer, examples_importable: None) -> None:
    import flask_app

    app = flask_app.create_app({"TESTING": True, "RECURRING_PAYMENTS": settings_of(demo)})
    try:
        browser = app.test_client()
        started = browser.post("/onboarding/", data=FORM)
        assert started.status_code == 302
        assert started.headers["Location"].startswith("https://checkout.sandbox.invalid/")
        order = browser.get(f"/orders/{_last_order_id(demo)}/")
        assert (order.status_code, order.json) == (
            200,
            {"id": _last_order_id(demo), "state": "open.running"},
        )
        assert browser.get("/orders/nope/").status_code == 404
        assert browser.post("/onboarding/", data={}).status_code == 400
        demo.fail_next(status=503, path="/orders")
        assert browser.post("/onboarding/", data=FORM).status_code == 502
        assert len(orders_posted(demo)) == 2
        with app.app_context():
            assert flask_app.get_client() is app.extensions[flask_app.EXTENSION]
    finally:
        client = app.extensions.get(flask_app.EXTENSION)
        if client is not None:
            client.close()


# -- the merchant's pytest suite, the asyncio script -------------------------------------------


def test_the_merchant_test_suite_passes() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "examples"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=environment(None),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "6 passed" in done.stdout  # collected once, the plugin's fixtures found


def run_script(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(EXAMPLES / "asyncio_onboarding.py")],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


def test_the_asyncio_script_starts_its_own_sandbox() -> None:
    done = run_script(environment(None))
    assert done.returncode == 0, done.stderr
    assert "using the sandbox" in done.stdout
    assert "Demo Creditor SAS: 120 mandates on 5 pages" in done.stdout
    assert "by state: {'active': 108, 'revoked': 12}" in done.stdout


def test_the_asyncio_script_reads_the_configured_environment(demo: FakeServer) -> None:
    done = run_script(environment(demo))
    assert done.returncode == 0, done.stderr
    assert "using the sandbox" not in done.stdout
    pages = sorted(r.query.get("page", "0") for r in demo.requests if r.path == "/mandates")
    assert pages == ["0", "1", "2", "3", "4"]
    assert len([r for r in demo.requests if r.path.startswith("/mandates/")]) == 5


# -- the notebook ------------------------------------------------------------------------------


def run_cells(cells: list[str]) -> tuple[dict[str, Any], list[Any]]:
    """Run code cells like a kernel: one namespace, each cell's last expression displayed."""
    namespace: dict[str, Any] = {"__name__": "__main__"}
    shown: list[Any] = []
    for number, source in enumerate(cells):
        tree = ast.parse(source, f"<cell {number}>")
        last = tree.body[-1] if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        if last is not None:
            tree.body.pop()
        exec(compile(tree, f"<cell {number}>", "exec"), namespace)
        if last is not None:
            value = eval(compile(ast.Expression(last.value), f"<cell {number}>", "eval"), namespace)
            if value is not None:
                repr(value)  # what a kernel shows: the HTML when there is one, else the repr
                html = getattr(value, "_repr_html_", None)
                shown.append(html() if html is not None else value)
    return namespace, shown


def test_the_notebook_runs() -> None:
    notebook = json.loads((EXAMPLES / "explore.ipynb").read_text(encoding="utf-8"))
    assert notebook["nbformat"] == 4
    code = [c for c in notebook["cells"] if c["cell_type"] == "code"]
    assert len(code) >= 5 and len(code) < len(notebook["cells"])  # markdown between them
    assert all(c["outputs"] == [] and c["execution_count"] is None for c in code)
    namespace: dict[str, Any] = {}
    try:
        namespace, shown = run_cells(["".join(c["source"]) for c in code])
    finally:
        server = namespace.get("server")
        if server is not None and server.running:
            server.stop()
    assert not namespace["server"].running  # the last cell cleaned up
    assert namespace["mandate"]["reference"] == "MND-0001"
    assert "get_creditors" in shown[2] and "get_mandates" in shown[2]  # tab completion
    assert shown[3] == ["page", "size"]
    creditor_html = shown[4]  # the cell `creditor`, shown as Jupyter does
    assert isinstance(creditor_html, str) and creditor_html.startswith("<div>")
    assert "<table>" in creditor_html and "Demo Creditor SAS" in creditor_html
    assert "get-mandates" in creditor_html and "page, size" in creditor_html
