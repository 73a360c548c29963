"""`python -m recurring_payments serve` as a subprocess, shared by the CLI and TLS tests: a
server that does not stop is killed and reported, so it cannot outlive its test."""

from __future__ import annotations

import shlex
import signal
import subprocess
import sys

import pytest

# Generous: a loaded machine; a stop takes well under a second otherwise.
STOP_TIMEOUT = 30


def start(*args: str) -> tuple[subprocess.Popen[str], dict[str, str]]:
    """Start ``serve ARGS`` and read its exports until the last one it prints for ``ARGS``."""
    process = subprocess.Popen(
        [sys.executable, "-m", "recurring_payments", "serve", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    last = "SSL_CERT_FILE" if "--tls" in args else "RECURRING_PAYMENTS_APP_SECRET"
    settings: dict[str, str] = {}
    assert process.stdout is not None
    try:
        for line in process.stdout:
            if line.startswith("export "):
                name, _, value = line.removeprefix("export ").strip().partition("=")
                settings[name] = shlex.split(value)[0]
            if last in settings:
                break
    except BaseException:
        kill(process)
        raise
    return process, settings


def stop(process: subprocess.Popen[str], sig: int = signal.SIGTERM) -> tuple[str, str]:
    """Send ``sig`` and return what the server printed; fail (after killing it) if it does
    not exit in time."""
    process.send_signal(sig)
    try:
        return process.communicate(timeout=STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        _, err = kill(process)
        pytest.fail(f"serve did not stop within {STOP_TIMEOUT} s of signal {sig}: {err[-2000:]}")


def kill(process: subprocess.Popen[str]) -> tuple[str, str]:
    if process.poll() is None:
        process.kill()
    return process.communicate()
