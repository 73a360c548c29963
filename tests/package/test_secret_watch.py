"""The secret watch (secret_watch.py) can fail: a pytest run in a subprocess whose tests leak a
token, an app secret, a Basic header and an admin password fails and names each test, without
printing the secrets; a clean run passes."""

from __future__ import annotations

from pathlib import Path

from watched_session import run_watched

LEAKS = """
import logging

import pytest

import recurring_payments as rp
from recurring_payments.testing import FakeServer


def test_logs_a_token():
    with FakeServer() as server, server.client() as client:
        client.root()
        bearer = server.requests[-1].headers["authorization"]
        logging.getLogger("app").debug("calling with %s", bearer.split()[1])


def test_raises_with_the_app_secret():
    with FakeServer() as server:
        with pytest.raises(rp.ProtocolError):
            raise rp.ProtocolError(f"bad answer for {server.credentials.app_secret}")


def test_logs_a_basic_header():
    with FakeServer() as server, server.client() as client:
        client.root()
        basic = server.token_requests[0].headers["authorization"]
        logging.getLogger("app").info("sent %s", basic)


def test_admin_password_in_a_warning():
    with FakeServer() as server:
        server.add_admin("democreditor", "boss", "correct-horse-battery")
        logging.getLogger("app").warning("login with correct-horse-battery")
"""

CLEAN = """
import logging

import pytest

import recurring_payments as rp
from recurring_payments.testing import FakeServer


def test_errors_and_logs_without_secrets():
    with FakeServer() as server, server.client() as client:
        client.root()
        with pytest.raises(rp.NotFoundError):
            client.get("/nowhere")
        logging.getLogger("app").info("client %r token %r", client, client.token)
"""


def test_the_watch_flags_each_leak(tmp_path: Path) -> None:
    run = run_watched(tmp_path / "leaks", LEAKS)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "4 passed" in run.stdout  # the tests pass; the session fails on the leaks
    summary = run.stdout.split("secret watch: LEAKS", 1)[1]
    for test in (
        "test_logs_a_token",
        "test_raises_with_the_app_secret",
        "test_logs_a_basic_header",
        "test_admin_password_in_a_warning",
    ):
        assert f"test_it.py::{test}:" in summary, run.stdout
    assert "correct-horse-battery" not in summary  # a leak is named, never shown


def test_a_clean_run_passes(tmp_path: Path) -> None:
    run = run_watched(tmp_path / "clean", CLEAN)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "secret watch:" in run.stdout and "no leak" in run.stdout
