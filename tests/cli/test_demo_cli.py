"""`python -m recurring_payments demo` walks the whole flow on the sandbox and exits 0."""

from __future__ import annotations

import subprocess
import sys

import pytest

from recurring_payments import cli


def test_demo_walks_the_flow(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["demo"]) == 0
    out = capsys.readouterr().out
    for step in (
        "access token",
        "entry point",
        "creditor",
        "order",
        "mandates",
        "Patch",
        "expires",
    ):
        assert step in out, step
    assert "POST  /orders" in out and " 201 " in out
    assert "120 mandates in all" in out
    assert "checkout.sandbox.invalid" in out  # the user-approval link, another origin
    renewal = out[out.index("7. ") :]
    assert [
        line.split()[0]
        for line in renewal.splitlines()
        if line.startswith("    ") and "->" not in line
    ] == ["GET", "POST", "GET"]
    assert max(len(line) for line in out.splitlines()) <= 100
    assert "sandbox-secret" not in out and "Bearer" not in out


def test_demo_as_a_module_in_a_subprocess() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "recurring_payments", "demo"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "Done in" in done.stdout


def test_demo_against_an_environment_without_credentials(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("APP_NAME", "APP_SECRET", "CREDITOR", "LOGIN", "PASSWORD", "PROFILE"):
        monkeypatch.delenv(f"RECURRING_PAYMENTS_{name}", raising=False)
    assert cli.main(["demo", "--base-url", "https://api.example.com"]) == 1
    assert "ConfigurationError" in capsys.readouterr().err
