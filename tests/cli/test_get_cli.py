"""`python -m recurring_payments get` as a subprocess, configured by the environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from recurring_payments.cli.demo import ORDER
from recurring_payments.testing import FakeServer

PREFIX = "RECURRING_PAYMENTS_"


def environment(server: FakeServer | None, **extra: str) -> dict[str, str]:
    """This process's environment without our variables, plus the server's settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(PREFIX)}
    if server is not None:
        env |= {
            PREFIX + "BASE_URL": server.base_url,
            PREFIX + "PROFILE": server.profile,
            PREFIX + "REL_NAMESPACE": server.rel_namespace,
            PREFIX + "APP_NAME": server.credentials.app_name,
            PREFIX + "APP_SECRET": server.credentials.app_secret,
        }
    return env | extra


def get(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "recurring_payments", "get", *args],
        capture_output=True,
        text=True,
        timeout=30,
        env=env,
    )


def assert_clean_failure(done: subprocess.CompletedProcess[str], secret: str = "") -> None:
    """One line on stderr, no traceback, nothing secret, nothing on stdout."""
    assert done.stdout == ""
    assert done.stderr.startswith("recurring-payments get: ")
    assert done.stderr.count("\n") == 1, done.stderr
    assert "Traceback" not in done.stderr
    if secret:
        assert secret not in done.stderr


@pytest.fixture(scope="module")
def demo() -> Iterator[FakeServer]:
    # One sandbox for the module: every test here only reads (or adds its own order).
    with FakeServer(demo=True) as server:
        yield server


@pytest.fixture(scope="module")
def env(demo: FakeServer) -> dict[str, str]:
    return environment(demo)


def test_a_relation_chain_with_template_variables(demo: FakeServer, env: dict[str, str]) -> None:
    demo.clear_requests()
    done = get(env, "get-creditors", "reference=democreditor", "get-mandates", "size=5")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    base = demo.base_url
    assert lines[0] == f"GET {base}/mandates?creditorReference=democreditor&size=5"
    assert lines[1] == "HTTP 200 OK"
    assert "  mandates  5 items" in lines
    following = "/mandates?creditorReference=democreditor&page=1&size=5"
    assert any(line.split()[:2] == ["next", following] for line in lines)
    assert [(r.method, r.path, r.query) for r in demo.requests if r.path != "/oauth/token"] == [
        ("GET", "/", {}),
        ("GET", "/creditors", {"reference": "democreditor"}),
        ("GET", "/mandates", {"creditorReference": "democreditor", "size": "5"}),
    ]
    # 80 columns, but for a URL too long to cut, which is the last word of its line
    assert all(len(line) <= 80 or line.split()[-1].startswith(("/", "http")) for line in lines)
    assert not any(len(line) > 80 and len(line.split()) > 2 for line in lines)


def test_state_links_and_templates_are_shown(demo: FakeServer, env: dict[str, str]) -> None:
    # the full relation URI and the attribute form name the same relation
    full = get(env, demo.rel_namespace + "get-creditors", "reference=democreditor")
    attribute = get(env, "get_creditors", "reference=democreditor")
    assert full.returncode == attribute.returncode == 0, full.stderr + attribute.stderr
    assert full.stdout == attribute.stdout
    out = full.stdout
    assert f"self {demo.base_url}/creditors/democreditor" in out
    assert "  name       Demo Creditor SAS" in out
    assert (
        "  get-mandates   /mandates?creditorReference=democreditor{&page,size}\n"
        "      (vars: page, size)\n" in out
    )


def test_an_array_of_links_is_indexed(env: dict[str, str]) -> None:
    steps = ["get-creditors", "reference=democreditor", "get-documents"]
    listing = get(env, *steps)
    assert listing.returncode == 0, listing.stderr
    assert "  get-document[3]    /documents/doc-mnd-0004  (title: Signed mandate MND-0004)" in (
        listing.stdout
    )
    mandate = get(env, *steps, "get-document[3]", "get-mandate")
    assert mandate.returncode == 0, mandate.stderr
    assert "  reference            MND-0004" in mandate.stdout
    ambiguous = get(env, *steps, "get-document")
    assert ambiguous.returncode == 1
    assert_clean_failure(ambiguous)
    assert "120 links; pick one with get-document[N]" in ambiguous.stderr


def test_a_path_or_url_with_variables(demo: FakeServer, env: dict[str, str]) -> None:
    with demo.client() as client:
        order = client.create_orders.post(ORDER | {"reference": "cli-order"})
    by_path = get(env, "/orders/{id}", f"id={order['id']}")
    assert by_path.returncode == 0, by_path.stderr
    assert by_path.stdout.startswith(f"GET {demo.base_url}/orders/{order['id']}\nHTTP 200 OK\n")
    assert "  reference         cli-order" in by_path.stdout
    assert "user-approval" in by_path.stdout
    by_url = get(env, f"{demo.base_url}/orders?reference=cli-order")
    assert by_url.returncode == 0, by_url.stderr
    assert "cli-order" in by_url.stdout


def test_json_prints_the_document(demo: FakeServer, env: dict[str, str]) -> None:
    big = 12345678901234567890123456789
    document = {"big": big, "amount": 0.1, "label": "héhé", "_links": {"self": {"href": "/n"}}}
    demo.route("GET", "/numbers", lambda request: document)  # sent with json.dumps: exact
    done = get(env, "/numbers", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == document
    assert f'"big": {big},' in done.stdout and '"amount": 0.1,' in done.stdout
    assert '"label": "héhé"' in done.stdout  # not \u-escaped
    chained = get(env, "--json", "get-creditors", "reference=democreditor", "get-mandates")
    document = json.loads(chained.stdout)
    assert len(document["_embedded"]["mandates"]) == 20
    assert document["page"]["totalElements"] == 120


def test_unknown_relation_suggests_the_near_one(demo: FakeServer, env: dict[str, str]) -> None:
    done = get(env, "get-creditors", "reference=democreditor", "get-mandatez")
    assert done.returncode == 1
    assert_clean_failure(done, demo.credentials.app_secret)
    assert "LinkNotFoundError" in done.stderr
    assert "'get-mandatez'" in done.stderr and "did you mean 'get-mandates'" in done.stderr


def test_api_errors_are_one_line_without_secrets(demo: FakeServer, env: dict[str, str]) -> None:
    missing = get(env, "/orders/{id}", "id=nope")
    assert missing.returncode == 1
    assert_clean_failure(missing, demo.credentials.app_secret)
    assert f"NotFoundError: GET {demo.base_url}/orders/nope: HTTP 404" in missing.stderr
    undeclared = get(env, "get-creditors", "colour=blue")
    assert undeclared.returncode == 1
    assert_clean_failure(undeclared)
    assert "unexpected variable(s) 'colour'; it declares reference" in undeclared.stderr
    wrong = environment(demo, **{PREFIX + "APP_SECRET": "not-the-secret"})
    refused = get(wrong, "get-creditors")
    assert refused.returncode == 1
    assert_clean_failure(refused, "not-the-secret")
    assert "AuthenticationError" in refused.stderr


def test_usage_errors_exit_2() -> None:
    env = environment(None)
    assert get(env, "reference=x").returncode == 2  # a variable before any relation
    unconfigured = get(env, "get-creditors")
    assert unconfigured.returncode == 2
    assert_clean_failure(unconfigured)
    assert "configuration: missing credentials: set RECURRING_PAYMENTS_APP_NAME" in (
        unconfigured.stderr
    )
    for name in ("APP_SECRET_FILE", "PASSWORD_FILE", "BASE_URL", "PROFILE"):  # all at once
        assert PREFIX + name in unconfigured.stderr
    partial = environment(None, **{PREFIX + "APP_NAME": "a", PREFIX + "APP_SECRET": "s3"})
    done = get(partial, "get-creditors")
    assert done.returncode == 2
    assert_clean_failure(done, "s3")
    assert "RECURRING_PAYMENTS_BASE_URL" in done.stderr


def test_another_prefix_and_help(demo: FakeServer) -> None:
    env = {
        k.replace(PREFIX, "SHOP_RP_"): v for k, v in environment(demo).items()
    }  # only SHOP_RP_* set
    assert get(env, "get-creditors").returncode == 2
    done = get(env, "--env-prefix", "SHOP_RP_", "get-creditors", "reference=democreditor")
    assert done.returncode == 0, done.stderr
    assert "Demo Creditor SAS" in done.stdout
    helped = get(env, "--help")
    assert helped.returncode == 0
    assert "name=value" in helped.stdout and "exit status" in helped.stdout
    assert max(len(line) for line in helped.stdout.splitlines()) <= 80


def test_an_unreachable_server_is_one_line() -> None:
    with FakeServer() as server:
        env = environment(server)
    done = get(env, "get-creditors")  # the server has stopped: connection refused
    assert done.returncode == 1
    assert_clean_failure(done, server.credentials.app_secret)
    assert "TransportError: POST " in done.stderr and "/oauth/token" in done.stderr
