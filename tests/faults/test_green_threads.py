"""Green threads (docs/guides/web-frameworks.md#worker-classes): under gevent's `monkey.patch_all()`
or eventlet's `monkey_patch()`, a sync call waits without blocking the hub, so the other greenlets
of the worker run (before: 2 gevent workers served 19 requests/s at 200 ms API latency). Without
monkey-patching nothing changes and neither library is imported.

Each case runs tests/green_scenario.py in a subprocess, since patching must come first: N
greenlets GET a resource held back DELAY seconds by the sandbox while a ticker greenlet ticks
every 10 ms; the same for `authenticate()` and the entry point. The control run calls the
native client without the library's helper and shows the hub frozen and the calls serialised.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

SCENARIO = Path(__file__).with_name("green_scenario.py")
N, DELAY = 6, 0.3  # as in the scenario


def run(hub: str, mode: str) -> dict[str, Any]:
    if hub != "none" and importlib.util.find_spec(hub) is None:  # not imported here
        pytest.skip(f"{hub} is not installed (pip install -e '.[dev]')")
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    done = subprocess.run(
        [sys.executable, str(SCENARIO), hub, mode],
        capture_output=True,
        text=True,
        timeout=50,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return result


@pytest.mark.parametrize("hub", ["gevent", "eventlet"])
def test_sync_calls_do_not_block_the_hub(hub: str) -> None:
    result = run(hub, "client")
    for step in ("authenticate", "root", "calls"):
        # The ticker kept ticking while the call waited on the slow server.
        assert result[step]["longest_pause"] < DELAY / 2, (step, result)
    # The N calls overlapped: about one DELAY in all, not N of them.
    assert result["calls"]["elapsed"] < N * DELAY / 2, result
    assert result["sent"] == N


@pytest.mark.parametrize("hub", ["gevent", "eventlet"])
def test_control_without_the_helper_the_hub_is_blocked(hub: str) -> None:
    # What the library did before: the native wait held the hub's only thread.
    result = run(hub, "bare")
    assert result["calls"]["elapsed"] >= N * DELAY * 0.9, result
    assert result["calls"]["longest_pause"] >= 2 * DELAY, result


def test_without_monkey_patching_nothing_changes() -> None:
    result = run("none", "client")
    assert result["imported"] == []  # neither gevent, eventlet nor greenlet was imported
    assert result["same_thread"] is True  # the call runs on the caller's thread
    assert result["calls"]["elapsed"] < N * DELAY / 2  # plain threads overlap as before
    assert result["sent"] == N
