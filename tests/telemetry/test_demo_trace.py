"""`recurring-payments demo --trace` prints the spans of its walk: every request a CLIENT span
under the walk's span, the templated ones named by their template, the 401 and its replay."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("opentelemetry.sdk")


def test_demo_trace_prints_the_spans_of_the_walk() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "recurring_payments", "demo", "--trace"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "Done in" in out
    tree = out[out.index("Spans (OpenTelemetry") :].splitlines()[1:]
    assert tree[0].split()[:2] == ["demo", "walk"]
    requests = tree[1:]
    assert requests and all(line.startswith("    ") for line in requests)  # children of the walk
    assert requests[0].split()[:3] == ["POST", "/oauth/token", "200"]
    assert any(line.split()[:2] == ["GET", "/creditors{?reference}"] for line in requests)
    assert any(" 401 " in line for line in requests)  # the expired token...
    assert any("(resend 1)" in line for line in requests)  # ...and its replay
    assert max(len(line) for line in out.splitlines()) <= 100
    assert "sandbox-secret" not in out and "Bearer" not in out
