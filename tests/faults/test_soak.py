"""The soak (issues 8 and 12), short: SOAK_SECONDS (25 by default) of 64 threads and 256 asyncio
tasks with every token expired every few seconds and faults injected in random windows.
`make soak` runs it for 300 s. SOAK_SEED replays a run's fault schedule. See soak.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SECONDS = float(os.environ.get("SOAK_SECONDS", "25"))
SEED = os.environ.get("SOAK_SEED")
# A call may outlast `total_timeout` by scheduling alone (a thread waiting for the GIL, a task
# for the event loop) on this loaded 2-core machine; a missed deadline would be seconds.
SLACK = 1.0


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc/self")
@pytest.mark.timeout(SECONDS + 90)
def test_soak() -> None:
    # A fresh interpreter: the figures of a process that already ran the rest of the suite would
    # mix in its allocator and pool history.
    seed = [SEED] if SEED else []
    done = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("soak.py")), str(SECONDS), *seed],
        capture_output=True,
        text=True,
        timeout=SECONDS + 80,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    figures = json.loads(done.stdout[done.stdout.index("{") :])
    print("\nsoak figures:", json.dumps(figures, indent=2))
    replay = f"replay with SOAK_SEED={figures['seed']} SOAK_SECONDS={SECONDS:g}"
    assert figures["alive"] == []
    # The server process played the schedule on time, so the windows the client attributes
    # errors to are the ones that were armed.
    for window in figures["windows"]:
        assert window["late_arm_s"] is not None, (replay, window)
        assert window["late_arm_s"] < figures["late_s"], (replay, window)
        assert window["late_clear_s"] < figures["late_s"], (replay, window)
    for side in ("sync", "async"):
        run = figures[side]
        assert run["not_rp_error"] == [], replay
        assert run["outcome_unknown_violations"] == [], replay
        # The fault-free share of the run has no errors at all; within a window, only what its
        # faults can cause (soak.KINDS); after each window, the client works again.
        assert run["errors_outside_windows"] == 0, (replay, run["errors_outside_windows_samples"])
        assert run["errors_unexpected_in_window"] == 0, (
            replay,
            run["errors_unexpected_in_window_samples"],
        )
        assert all(ok > 0 for ok in run["ok_per_gap"]), (replay, run["ok_per_gap"])
        assert run["ok"] > 1000 and run["posts"] > 0
        # No POST body reached a server twice (but after a 401, 307 or 308), none was
        # processed twice, and the journal watch missed nothing.
        assert run["posts_sent_twice"] == 0, (replay, run["posts_sent_twice_samples"])
        assert run["posts_processed_twice"] == 0, replay
        assert run["journal_gaps"] == 0 and run["unreadable_posts"] == 0, replay
        # One token request at the start, then at most one per need (single flight).
        assert 1 <= run["token_requests"] <= run["token_requests_bound"], (replay, run)
        for tokens, expiries in zip(
            run["token_requests_per_gap"], run["expiries_per_gap"], strict=True
        ):
            assert tokens <= expiries + 1, (replay, run)
        # An async call's time is measured by its task, so it includes how late the event
        # loop woke the task up (loop_lag_max_s, measured beside the tasks), which is the
        # interpreter's scheduling, not the client's deadline. Measured on CPython 3.11, 3.14
        # and 3.15 (5 runs each, load average ~20 on 2 cores): slowest calls 2.2-3.0 s, late
        # wake-ups up to 0.43 s, alike on the three.
        late_wakeup = run.get("loop_lag_max_s", 0.0)
        assert run["slowest_call_s"] <= figures["total_timeout_s"] + SLACK + late_wakeup, (
            replay,
            run,
        )
    warm, end = figures["process"]["warm"], figures["process"]["end"]
    # Both snapshots under the same load, in fault-free gaps. The runtime's blocking pool
    # breathes a little; a thread per request or per error would not fit.
    assert end["threads"] <= warm["threads"] + 4, figures["process"]
    # Open connections are bounded by the callers, not by the traffic: the pools keep idle
    # connections for 60 s, so each caller's pool holds at most the connection in use and one
    # that a fault left closing (the sync threads each have their own pool; the tasks share
    # one). How many that is at a snapshot depends on the faults' history (measured: -108 to
    # +339 fds between the two snapshots, every one gone once the clients are closed, below);
    # a leak per request or per error (tens of thousands of calls, hundreds of errors) would
    # exceed the bound.
    assert end["sockets"] <= 2 * figures["process"]["callers"], figures["process"]
    # Memory: the highest of the first two snapshots against the lowest of the last ones (the
    # end included). The first snapshot could come before the pools and caches had filled, and
    # the end's is taken wherever the schedule is (in a window, a fault's burst is still held):
    # each tripped the bound alone about once in ten runs. A leak raises every later snapshot.
    rss = [*figures["rss_kib_samples"], end["rss_kib"]]
    grown = min(rss[-3:]) - max(rss[:2])
    assert grown < 8 * 1024, (grown, rss, figures["process"])
    # Every connection is let go once the clients are closed.
    settled, before = figures["process"]["settled"], figures["process"]["before"]
    assert settled["fds"] <= before["fds"] + 8, figures["process"]
