"""The soak (issues 8 and 12): 64 threads on one `Client` and 256 asyncio tasks on one
`AsyncClient`, each against its own sandbox, for a sustained run while every token is expired
every few seconds — and, in windows of a random schedule, faults: drops, 5xx/429/401 storms,
redirects (after POST too, and a 401 on the hop after one), slow, hung and cut answers, a hung
or failing token endpoint. The sandboxes run in a process of their own (soak_server.py), which
plays the schedule with their own controls, so the figures are the client's.

What it measures, per side: calls, errors by class and `outcome_unknown`, which window each
error fell in (an error outside every window, or of a class its window's faults cannot
produce, is a failure of the client), successes in each fault-free gap (the client recovers),
POSTs that reached a server twice, token requests against what the run could need, the slowest
call against `total_timeout`; and threads, file descriptors and RSS sampled in fault-free gaps.

`tests/test_soak.py` runs it briefly and asserts; `make soak` runs it for SOAK_SECONDS (300 by
default). Run alone: `python tests/soak.py 60 [seed]`.
"""

from __future__ import annotations

import asyncio
import bisect
import ctypes
import itertools
import json
import logging
import os
import random
import re
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import recurring_payments as rp

THREADS = 64
TASKS = 256
# Seconds between two expire_tokens(). Far above the slowest request (measured: under 2 s with
# 256 tasks on 2 busy cores): a replay whose new token is expired before it arrives gets a
# second 401 by design, which would be the test's race, not the client's error.
EXPIRE_EVERY = 5.0
POST_EVERY = 16  # one request in POST_EVERY is a POST
# The clients' settings: a call's deadline, and each attempt's timeout below it.
TIMEOUT = 2.5
# How often the async side's event loop is probed for late wake-ups (seconds).
LAG_PROBE = 0.05
TOTAL_TIMEOUT = 5.0
# How late the server process may arm or disarm a window (it is asserted); an error is
# attributed to a window for calls that started up to this long after the window's end.
LATE = 1.0
FIRST_FAULT = 2.5  # seconds into the run
PATHS = (None, "/thing", "/orders")  # None: every API request (GET /thing and POST /orders)


@dataclass(frozen=True)
class Kind:
    """A kind of fault: the error classes it can cause (exact class names), how long after its
    window a call that only then starts can still feel it, and its random parameters."""

    errors: frozenset[str]
    params: Callable[[random.Random], dict[str, Any]]
    linger: float = 0.0


def _storm(status: int, *retry_after: str | None) -> Callable[[random.Random], dict[str, Any]]:
    """fail_next storms of `status` (0: a 5xx at random), `Retry-After` one of `retry_after`."""

    def params(rng: random.Random) -> dict[str, Any]:
        return {
            "status": status if status else rng.choice([500, 502, 503, 504]),
            "retry_after": rng.choice(retry_after) if retry_after else None,
            "count": rng.randint(10, 60),
            "path": rng.choice(PATHS),
            "every": 0.1,
        }

    return params


# An attempt still in flight at the deadline is cut: a storm whose Retry-After pauses bring a
# GET's last attempt near the deadline may end in TimeoutError rather than the status.
KINDS: dict[str, Kind] = {
    "drop": Kind(
        frozenset({"TransportError"}),
        lambda rng: {"count": rng.randint(2, 8), "path": rng.choice(PATHS), "every": 0.1},
    ),
    "storm5xx": Kind(
        frozenset({"ServerError", "TimeoutError"}), _storm(0, None, None, "0", "1", "2")
    ),
    "storm429": Kind(frozenset({"RateLimitError", "TimeoutError"}), _storm(429, None, "1", "2")),
    "storm401": Kind(frozenset({"AuthenticationError"}), _storm(401)),
    # Redirects alone must cost nothing: every call succeeds.
    "redirect": Kind(
        frozenset(),
        lambda rng: {
            "get_status": rng.choice([301, 302, 303, 307, 308]),
            "post_status": rng.choice([301, 302, 303, 307, 308]),
            "handler": rng.choice(["201", "303", "307"]),
            "spelling": rng.choice(["absolute", "relative"]),
            "count": rng.randint(20, 80),
            "every": 0.1,
        },
    ),
    "redirect401": Kind(
        frozenset({"AuthenticationError"}),
        lambda rng: {
            "mode": rng.choice(["303", "307"]),
            "count": rng.randint(10, 40),
            "every": 0.1,
        },
    ),
    # Slower answers, well within `timeout`: no errors either.
    "slow": Kind(
        frozenset(),
        lambda rng: {
            "delay": round(rng.uniform(0.2, 0.6), 2),
            "count": rng.randint(20, 80),
            "path": rng.choice(PATHS),
            "every": 0.1,
        },
    ),
    "hang": Kind(
        frozenset({"TimeoutError"}),
        lambda rng: {
            "delay": TIMEOUT + 1.0,
            "count": rng.randint(5, 20),
            "path": rng.choice(PATHS),
            "every": 0.2,
        },
    ),
    # A body of blanks, one chunk at a time: not JSON once whole, or cut by `timeout`.
    "slow_body": Kind(
        frozenset({"ProtocolError", "TimeoutError"}),
        lambda rng: {
            "status": rng.choice([200, 201]),
            "repeat": rng.randint(2, 5),
            "chunk_delay": round(rng.uniform(0.3, 1.0), 2),
            "count": rng.randint(5, 20),
            "path": rng.choice(PATHS),
            "every": 0.2,
        },
    ),
    "cut_body": Kind(
        frozenset({"TransportError"}),
        lambda rng: {
            "status": rng.choice([200, 201]),
            "cut_after": rng.randint(0, 20),
            "count": rng.randint(5, 30),
            "path": rng.choice(PATHS),
            "every": 0.1,
        },
    ),
    # Tokens expired and the token endpoint hung past `timeout`: a caller that starts after the
    # window may still wait for (and share) a token request that started in it. The expiries
    # that force a token request (each second, besides EXPIRE_EVERY's) may expire a fresh token
    # before a replay carrying it arrives: a second 401, an AuthenticationError by design.
    "token_hang": Kind(
        frozenset({"TimeoutError", "AuthenticationError"}),
        lambda rng: {"delay": TIMEOUT + 1.5, "count": rng.randint(1, 2), "every": 1.0},
        linger=TIMEOUT + 0.5,
    ),
    "token_fail": Kind(
        frozenset({"ServerError", "TransportError", "AuthenticationError"}),
        lambda rng: {
            "status": rng.choice([500, 503, 401, "drop"]),
            "count": rng.randint(1, 3),
            "every": 1.0,
        },
        linger=TIMEOUT + 0.5,
    ),
}


@dataclass
class Window:
    start: float  # time.monotonic()
    end: float
    faults: list[dict[str, Any]]
    allowed: frozenset[str]
    until: float  # calls that start after this cannot feel the window

    def figures(self, origin: float) -> dict[str, Any]:
        return {
            "at_s": round(self.start - origin, 2),
            "length_s": round(self.end - self.start, 2),
            "faults": self.faults,
        }


class Plan:
    """The run's fault windows (random from `seed`, in the cycle of every kind, one or two
    kinds at once) and the fault-free gaps between them."""

    def __init__(self, seconds: float, origin: float, seed: int) -> None:
        rng = random.Random(seed)
        self.origin = origin
        self.windows: list[Window] = []
        cycle: list[str] = []
        at = FIRST_FAULT
        while True:
            if len(cycle) < 2:
                cycle += rng.sample(sorted(KINDS), len(KINDS))
            names = [cycle.pop(0) for _ in range(rng.choice([1, 2]))]
            length = rng.uniform(1.0, 2.0)
            linger = max(KINDS[name].linger for name in names)
            # The gap after it: past any lingering effect, then long enough to see recovery.
            after = at + length + LATE + linger + rng.uniform(1.5, 2.5)
            if after > seconds:
                break
            self.windows.append(
                Window(
                    start=origin + at,
                    end=origin + at + length,
                    faults=[{"kind": name, "params": KINDS[name].params(rng)} for name in names],
                    allowed=frozenset().union(*(KINDS[name].errors for name in names)),
                    until=origin + at + length + LATE + linger,
                )
            )
            at = after
        # Gap i: from window i-1's `until` (the run's start for i = 0) to window i's start.
        self.gap_starts = [origin] + [w.until for w in self.windows]
        self.gap_ends = [w.start for w in self.windows] + [float("inf")]

    def gap_of(self, moment: float) -> int:
        """The fault-free gap `moment` falls in, or -1."""
        i = bisect.bisect_right(self.gap_starts, moment) - 1
        return i if i >= 0 and moment < self.gap_ends[i] else -1

    def windows_during(self, started: float, ended: float) -> list[int]:
        return [i for i, w in enumerate(self.windows) if started <= w.until and ended >= w.start]

    def to_json(self) -> str:
        windows = [{"start": w.start, "end": w.end, "faults": w.faults} for w in self.windows]
        return json.dumps({"windows": windows})


def _release_free_heap() -> None:
    """glibc keeps freed memory in its per-thread arenas (64 threads here: up to 16 arenas), so
    RSS also counts what the faults' bursts allocated and freed. `malloc_trim(0)` hands the
    free pages back, so the snapshots measure live memory, which is what a leak grows."""
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:  # not glibc: the figures keep the allocator's slack
        return
    libc.malloc_trim(0)


def process_figures() -> dict[str, int]:
    """OS threads, open file descriptors (and how many are sockets) and resident memory (KiB)
    of this process."""
    _release_free_heap()
    with open("/proc/self/status") as status:
        text = status.read()

    def kib(name: str) -> int:
        found = re.search(rf"^{name}:\s+(\d+)", text, re.MULTILINE)
        return int(found.group(1)) if found else -1

    fds = os.listdir("/proc/self/fd")
    sockets = 0
    for fd in fds:
        try:
            sockets += os.readlink(f"/proc/self/fd/{fd}").startswith("socket:")
        except OSError:  # closed meanwhile
            pass
    return {
        "threads": kib("Threads"),
        "fds": len(fds),
        "sockets": sockets,
        "rss_kib": kib("VmRSS"),
    }


class _TokenCounter(logging.Handler):
    """Counts token requests through the library's one DEBUG line per attempt, per server (the
    client's own count; the journals give each arrival's time, see soak_server.py)."""

    def __init__(self, servers: dict[str, str]) -> None:
        super().__init__(logging.DEBUG)
        self.servers = servers  # base_url -> side
        self.counts = dict.fromkeys(servers.values(), 0)
        self.lock_ = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if not message.startswith("POST ") or "/oauth/token " not in message:
            return
        for base_url, side in self.servers.items():
            if message.startswith(f"POST {base_url}/oauth/token "):
                with self.lock_:
                    self.counts[side] += 1


def _sample(samples: list[str], text: str) -> None:
    if len(samples) < 10:
        samples.append(text[:300])


@dataclass
class Side:
    """One client's run. Errors are tallied as they happen (nothing kept per error but a few
    samples, so that the RSS figures stay the client's)."""

    plan: Plan
    calls: int = 0
    ok: int = 0
    slowest: float = 0.0  # seconds
    slowest_outcome: str = ""
    errors: Counter[str] = field(default_factory=Counter)
    outcome_unknown: Counter[str] = field(default_factory=Counter)
    foreign: list[str] = field(default_factory=list)  # not an rp.Error
    violations: list[str] = field(default_factory=list)  # outcome_unknown where it cannot be
    unattributed: int = 0
    unattributed_samples: list[str] = field(default_factory=list)
    unexpected: int = 0
    unexpected_samples: list[str] = field(default_factory=list)
    per_window: list[Counter[str]] = field(default_factory=list)
    gap_ok: list[int] = field(default_factory=list)
    # The async side: the longest an event-loop wake-up came late (a task's sleep overshoot).
    # A call's time, measured by the task, includes this wait, which is not the client's.
    loop_lag_max: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.per_window = [Counter() for _ in self.plan.windows]
        self.gap_ok = [0] * len(self.plan.gap_starts)

    def error(self, error: BaseException, method: str, started: float, ended: float) -> str:
        name = type(error).__name__
        at = f"{method} at {started - self.plan.origin:.2f}+{ended - started:.2f}s: {error!r}"
        with self.lock:
            self.errors[name] += 1
            if not isinstance(error, rp.Error):
                _sample(self.foreign, at)
                return name
            unknown = getattr(error, "outcome_unknown", None)
            self.outcome_unknown[{True: "true", False: "false", None: "absent"}[unknown]] += 1
            # Every rp.Error carries it; True only for a POST: one that failed in transport,
            # or any later failure of a call whose POST a 303 answered (processed:
            # docs/guarantees.md#outcome,
            # amended), e.g. a 401 that stays on the GET, which the redirect windows can
            # combine with a token fault.
            if unknown is None or (unknown is True and method != "POST"):
                _sample(self.violations, f"outcome_unknown={unknown}: {at}")
            windows = self.plan.windows_during(started, ended)
            if not windows:
                self.unattributed += 1
                _sample(self.unattributed_samples, at)
                return name
            for i in windows:
                self.per_window[i][name] += 1
            if not any(name in self.plan.windows[i].allowed for i in windows):
                self.unexpected += 1
                _sample(self.unexpected_samples, f"{at} in windows {windows}")
        return name

    def finish(self, calls: int, ok: int, slowest: float, outcome: str, gap_ok: list[int]) -> None:
        with self.lock:
            self.calls += calls
            self.ok += ok
            if slowest > self.slowest:
                self.slowest, self.slowest_outcome = slowest, outcome
            for i, n in enumerate(gap_ok):
                self.gap_ok[i] += n


def _client(cls: type[Any], settings: dict[str, str]) -> Any:
    return cls(
        settings["base_url"],
        credentials=rp.AppCredentials(settings["app_name"], settings["app_secret"]),
        profile=settings["profile"],
        rel_namespace=settings["rel_namespace"],
        timeout=TIMEOUT,
        total_timeout=TOTAL_TIMEOUT,
    )


def _thread_worker(client: Any, side: Side, stop: threading.Event, ids: Any) -> None:
    calls = ok = 0
    slowest, slowest_outcome = 0.0, ""
    gap_ok = [0] * len(side.plan.gap_starts)
    while not stop.is_set():
        n = next(ids)
        post = n % POST_EVERY == 0
        started = time.monotonic()
        try:
            if post:
                client.post("/orders", {"n": n // POST_EVERY})
            else:
                client.get("/thing")
        except Exception as error:
            ended = time.monotonic()
            outcome = side.error(error, "POST" if post else "GET", started, ended)
        else:
            ended = time.monotonic()
            outcome = "ok"
            ok += 1
            if (gap := side.plan.gap_of(started)) >= 0:
                gap_ok[gap] += 1
        calls += 1
        if ended - started > slowest:
            slowest, slowest_outcome = ended - started, outcome
    side.finish(calls, ok, slowest, slowest_outcome, gap_ok)


async def _async_side(client: Any, side: Side, stop: threading.Event) -> None:
    ids = itertools.count()

    async def task() -> None:
        calls = ok = 0
        slowest, slowest_outcome = 0.0, ""
        gap_ok = [0] * len(side.plan.gap_starts)
        while not stop.is_set():
            n = next(ids)
            post = n % POST_EVERY == 0
            started = time.monotonic()
            try:
                if post:
                    await client.post("/orders", {"n": n // POST_EVERY})
                else:
                    await client.get("/thing")
            except Exception as error:
                ended = time.monotonic()
                outcome = side.error(error, "POST" if post else "GET", started, ended)
            else:
                ended = time.monotonic()
                outcome = "ok"
                ok += 1
                if (gap := side.plan.gap_of(started)) >= 0:
                    gap_ok[gap] += 1
            calls += 1
            if ended - started > slowest:
                slowest, slowest_outcome = ended - started, outcome
        side.finish(calls, ok, slowest, slowest_outcome, gap_ok)

    async def loop_lag() -> None:
        while not stop.is_set():
            asked = time.monotonic()
            await asyncio.sleep(LAG_PROBE)
            side.loop_lag_max = max(side.loop_lag_max, time.monotonic() - asked - LAG_PROBE)

    await asyncio.gather(loop_lag(), *(task() for _ in range(TASKS)))
    await client.aclose()


def run(seconds: float, seed: int | None = None, warmup: float | None = None) -> dict[str, Any]:
    """Run the soak for `seconds`; returns the figures (see the module's docstring)."""
    seed = seed if seed is not None else random.randrange(2**32)
    warmup = warmup if warmup is not None else max(3.0, seconds / 5)
    server_script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "soak_server.py")
    servers = subprocess.Popen(
        [sys.executable, server_script, str(EXPIRE_EVERY)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert servers.stdin is not None and servers.stdout is not None
    logger = logging.getLogger("recurring_payments")
    old_level, old_propagate = logger.level, logger.propagate
    stop = threading.Event()
    workers: list[threading.Thread] = []
    counter: _TokenCounter | None = None
    try:
        settings = json.loads(servers.stdout.readline())
        counter = _TokenCounter(
            {settings["sync"]["base_url"]: "sync", settings["async"]["base_url"]: "async"}
        )
        logger.addHandler(counter)
        logger.setLevel(logging.DEBUG)
        # Only the counter sees the run's records: pytest's capture would keep every one.
        logger.propagate = False
        client = _client(rp.Client, settings["sync"])
        aclient = _client(rp.AsyncClient, settings["async"])
        before = process_figures()
        started = time.monotonic()
        plan = Plan(seconds, started, seed)
        servers.stdin.write(plan.to_json() + "\n")
        servers.stdin.flush()
        sync_side, async_side = Side(plan), Side(plan)
        ids = itertools.count()
        workers = [
            threading.Thread(target=_thread_worker, args=(client, sync_side, stop, ids))
            for _ in range(THREADS)
        ]
        workers.append(
            threading.Thread(target=asyncio.run, args=(_async_side(aclient, async_side, stop),))
        )
        for worker in workers:
            worker.start()
        # Snapshots in fault-free gaps only (a window holds connections and threads in waits).
        samples: list[dict[str, int]] = []
        next_sample = started + warmup
        while (now := time.monotonic()) < started + seconds:
            if now >= next_sample and plan.gap_of(now) >= 0:
                samples.append(process_figures())
                next_sample += max(1.0, (seconds - warmup) / 10)
            time.sleep(0.05)
        end = process_figures()
        stop.set()
        for worker in workers:
            worker.join(60)
        elapsed = time.monotonic() - started
        client.close()
        after = process_figures()
        # Connections closed under faults are let go a little later: wait for them, briefly.
        closed_by = time.monotonic() + 5.0
        while (settled := process_figures())["fds"] > before["fds"] + 8:
            if time.monotonic() > closed_by:
                break
            time.sleep(0.1)
        settled_s = time.monotonic() - closed_by + 5.0
        servers.stdin.write("stop\n")
        servers.stdin.flush()
        server_figures = json.loads(servers.stdout.readline())
    finally:
        stop.set()
        if counter is not None:
            logger.removeHandler(counter)
        logger.setLevel(old_level)
        logger.propagate = old_propagate
        if servers.poll() is None:
            servers.stdin.close()
            try:
                servers.wait(15)
            except subprocess.TimeoutExpired:
                servers.kill()
                servers.wait()
        servers.stdout.close()

    armed = server_figures["armed"]
    played = server_figures["played"]

    def per_gap(moments: list[float]) -> list[int]:
        counts = [0] * len(plan.gap_starts)
        for moment in moments:
            if (gap := plan.gap_of(moment)) >= 0:
                counts[gap] += 1
        return counts

    expiries_per_gap = per_gap(server_figures["expiry_times"])

    def side_figures(side: Side, name: str, **extra: int) -> dict[str, Any]:
        served = dict(server_figures[name])
        token_times = served.pop("token_times")
        return {
            **extra,
            "requests": side.calls,
            "ok": side.ok,
            "errors": dict(side.errors.most_common()),
            "outcome_unknown": dict(side.outcome_unknown),
            "not_rp_error": side.foreign,
            "outcome_unknown_violations": side.violations,
            "errors_outside_windows": side.unattributed,
            "errors_outside_windows_samples": side.unattributed_samples,
            "errors_unexpected_in_window": side.unexpected,
            "errors_unexpected_in_window_samples": side.unexpected_samples,
            "errors_per_window": [dict(c.most_common()) for c in side.per_window],
            "ok_per_gap": side.gap_ok,
            **{key: value for key, value in served.items()},
            "token_requests": counter.counts[name] if counter else 0,
            "token_requests_arrived": len(token_times),
            # In the fault-free gaps, from the journal: at most one per expiry (and one for
            # an expiry at the very end of a window).
            "token_requests_per_gap": per_gap(token_times),
            "expiries_per_gap": expiries_per_gap,
            # One at the start, one per expiry (ours and the faults'), one per injected 401 and
            # per failed token request: the most a single flight may need.
            "token_requests_bound": 1
            + server_figures["expiries"]
            + armed.get("expiries", 0)
            + armed.get("401", 0)
            + armed.get("token_faults", 0),
            "slowest_call_s": round(side.slowest, 3),
            "slowest_call_outcome": side.slowest_outcome,
        }

    return {
        "seconds": round(elapsed, 1),
        "seed": seed,
        "timeout_s": TIMEOUT,
        "total_timeout_s": TOTAL_TIMEOUT,
        "late_s": LATE,
        "expiries": server_figures["expiries"],
        "windows": [
            {
                **w.figures(started),
                "late_arm_s": round(p["armed_at"] - w.start, 3) if p else None,
                "late_clear_s": round(p["cleared_at"] - w.end, 3) if p else None,
            }
            for w, p in itertools.zip_longest(plan.windows, played[: len(plan.windows)])
            if w is not None
        ],
        "kinds_played": sorted({f["kind"] for w in plan.windows for f in w.faults}),
        "sync": side_figures(sync_side, "sync", threads=THREADS),
        "async": {
            **side_figures(async_side, "async", tasks=TASKS),
            "loop_lag_max_s": round(async_side.loop_lag_max, 3),
        },
        "process": {
            "callers": THREADS + TASKS,
            "before": before,
            "warm": samples[0] if samples else end,
            "end": end,
            "after": after,
            "settled": {**settled, "seconds": round(settled_s, 1)},
        },
        "rss_kib_samples": [sample["rss_kib"] for sample in samples],
        "fds_samples": [sample["fds"] for sample in samples],
        "alive": [w.name for w in workers if w.is_alive()],
    }


if __name__ == "__main__":
    arguments = sys.argv[1:]
    figures = run(
        float(arguments[0]) if arguments else 30.0,
        seed=int(arguments[1]) if len(arguments) > 1 else None,
    )
    print(json.dumps(figures, indent=2))
