"""The soak's servers, in a process of their own so that the soak measures the client alone
(threads, file descriptors, memory). Two sandboxes (one per client), every token expired every
`expire_every` seconds.

Protocol on stdin/stdout: prints one JSON line with the sandboxes' settings; reads one JSON line,
the fault schedule (soak.py's `Plan.to_json`: windows in `time.monotonic()` seconds, which is
one clock for every process on Linux), and plays it on both sandboxes with their own controls;
on "stop" prints one JSON line of figures and exits.

Every POST body that reaches a sandbox is counted from its journal (fault_kit's rule: an arrival
answered 401, 307 or 308 may be followed by a second one, any other may not), so a POST that a
fault answered before the route handler ran and that the client then sent again is caught too.
"""

from __future__ import annotations

import bisect
import json
import math
import operator
import sys
import threading
import time
from collections import Counter
from typing import Any

from recurring_payments.testing import FakeServer

TOKEN_PATH = "/oauth/token"
# The journal must still hold an entry when the poller first reads it: 131,072 entries are
# ~10 s of a side's traffic (the async side answers ~12,000 calls a second), so a poll that
# a loaded machine delays by seconds still misses none; the poller reads every POLL_EVERY s
# and counts any gap.
JOURNAL_LIMIT = 131_072
POLL_EVERY = 0.5
# An arrival stays pending until its answer is known; one still unanswered after SETTLE s
# (dropped, or its client gave up) counts as it is.
SETTLE = 10.0
# Entries are journaled in arrival order up to the small race between stamping and recording.
REORDER = 0.5
THING = b'{"ok": true, "_links": {"self": {"href": "/thing"}}}'


class Orders:
    """POST /orders and POST /orders-moved: remembers each POST number the handler processed in
    a bitmap (no growth per request to speak of) and counts any number processed twice.

    `mode` is set by the fault schedule: "201" (created), "303" (processed, then See Other to
    GET /thing) or "307" (not processed, Temporary Redirect to POST /orders-moved)."""

    def __init__(self) -> None:
        self.seen = bytearray()
        self.posts = 0
        self.twice = 0
        self.mode = "201"
        self.lock = threading.Lock()

    def _process(self, request: Any) -> int:
        n = int(request.json["n"])
        with self.lock:
            if n >= len(self.seen):
                self.seen.extend(bytes(n + 65536 - len(self.seen)))
            self.twice += self.seen[n]
            self.seen[n] = 1
            self.posts += 1
        return n

    def __call__(self, request: Any) -> Any:
        mode = self.mode
        if mode == "307":
            return 307, None, {"Location": "/orders-moved"}
        n = self._process(request)
        if mode == "303":
            return 303, None, {"Location": "/thing"}
        return 201, {"n": n}

    def moved(self, request: Any) -> Any:
        return 201, {"n": self._process(request)}


def _clock_offset(server: FakeServer) -> tuple[float, float]:
    """The sandbox's clock and what turns its times into `time.monotonic()` seconds.

    The journal stamps arrivals with the sandbox's clock. Read between two readings of
    `time.monotonic()`, the offset is off by at most half their interval; a thread switch
    between the readings (5 ms of GIL switch interval, more under load) would move every token
    request that many ms earlier, and one that a window's arming caused into the gap before it.
    So the tightest of a few readings is kept."""
    best = (math.inf, 0.0, 0.0)
    for _ in range(5):
        before = time.monotonic()
        clock = server.clock
        after = time.monotonic()
        best = min(best, (after - before, clock, (before + after) / 2 - clock))
    return best[1], best[2]


class Arrivals:
    """Every POST body that reached one sandbox, read from its journal: how many arrivals
    count (all but those answered 401/307/308), the statuses they got, and any POST number that
    arrived twice. Also when each token request arrived (in `time.monotonic()` seconds)."""

    def __init__(self, server: FakeServer) -> None:
        self.server = server
        self.seen = bytearray()
        self.arrivals = 0
        self.twice = 0
        self.twice_samples: list[str] = []
        self.unreadable = 0
        self.gaps = 0
        self.statuses: Counter[str] = Counter()
        self.newest = -math.inf
        self.pending: dict[tuple[float, bytes], Any] = {}
        self.done: dict[tuple[float, bytes], float] = {}
        self.token_times: list[float] = []

    def poll(self, final: bool = False) -> None:
        now, to_monotonic = _clock_offset(self.server)
        for key, entry in list(self.pending.items()):
            if entry.status is not None or final or now - key[0] > SETTLE:
                del self.pending[key]
                self._count(entry, entry.status)
        entries = self.server.requests
        if not entries:
            return
        horizon = self.newest - REORDER
        if len(entries) >= JOURNAL_LIMIT and entries[0].time > horizon:
            self.gaps += 1  # entries may have left the journal unread
        start = bisect.bisect_left(entries, horizon, key=operator.attrgetter("time"))
        for entry in entries[start:]:
            arrived = entry.time
            self.newest = max(self.newest, arrived)
            if entry.path == TOKEN_PATH:
                if (arrived, b"") not in self.done:
                    self.done[arrived, b""] = arrived
                    self.token_times.append(arrived + to_monotonic)
                continue
            if entry.method != "POST":
                continue
            key = (arrived, bytes(entry.body))
            if key in self.done or key in self.pending:
                continue
            self.done[key] = arrived
            if entry.status is not None or final:
                self._count(entry, entry.status)
            else:
                self.pending[key] = entry
        for key in [key for key, arrived in self.done.items() if arrived < horizon - 1.0]:
            del self.done[key]

    def _count(self, entry: Any, status: int | None) -> None:
        self.statuses[str(status)] += 1
        if status in (401, 307, 308):
            return
        body = entry.json
        n = body.get("n") if isinstance(body, dict) else None
        if not isinstance(n, int) or n < 0:
            self.unreadable += 1
            return
        self.arrivals += 1
        if n >= len(self.seen):
            self.seen.extend(bytes(n + 65536 - len(self.seen)))
        if self.seen[n]:
            self.twice += 1
            if len(self.twice_samples) < 10:
                self.twice_samples.append(f"n={n} {entry.path} -> {status}")
        self.seen[n] = 1


class Faults:
    """Plays the schedule: at each window's start arms its faults on both sandboxes, re-arms
    them every `every` s of each fault's parameters, and at its end disarms everything."""

    def __init__(self, servers: dict[str, FakeServer], orders: dict[str, Orders]) -> None:
        self.servers = servers
        self.orders = orders
        # Upper bounds for the token check: each injected 401 or failed token request, and each
        # forced expiry, may cost one token request.
        self.armed: Counter[str] = Counter()
        self.played: list[dict[str, float]] = []

    def play(self, windows: list[dict[str, Any]], stop: threading.Event) -> None:
        for window in windows:
            if stop.wait(max(0.0, window["start"] - time.monotonic())):
                return
            armed_at = time.monotonic()
            due = [armed_at] * len(window["faults"])
            while (now := time.monotonic()) < window["end"] and not stop.is_set():
                for i, fault in enumerate(window["faults"]):
                    if now >= due[i]:
                        for side in self.servers:
                            self.arm(side, fault["kind"], fault["params"])
                        due[i] += fault["params"]["every"]
                stop.wait(max(0.0, min([*due, window["end"]]) - time.monotonic()))
            self.disarm()
            self.played.append({"armed_at": armed_at, "cleared_at": time.monotonic()})

    def disarm(self) -> None:
        for server in self.servers.values():
            server.clear_faults()
        for orders in self.orders.values():
            orders.mode = "201"

    def arm(self, side: str, kind: str, p: dict[str, Any]) -> None:
        server = self.servers[side]
        count, path = p.get("count", 1), p.get("path")
        count_armed = side == "sync"  # both sides get the same faults; count them once

        def location(target: str) -> str:
            return {"absolute": server.base_url + target, "relative": target}[p["spelling"]]

        if kind == "drop":
            server.drop_next(count, path)
        elif kind in ("storm5xx", "storm429", "storm401"):
            retry_after = p.get("retry_after")
            headers = {"Retry-After": retry_after} if retry_after is not None else None
            server.fail_next(p["status"], count, path, headers=headers)
            if p["status"] == 401 and count_armed:
                self.armed["401"] += count
        elif kind == "redirect":
            server.respond_next(
                status=p["get_status"],
                headers={"Location": location("/thing-moved")},
                count=count,
                path="/thing",
            )
            post_target = "/orders-moved" if p["post_status"] in (307, 308) else "/thing-moved"
            server.respond_next(
                status=p["post_status"],
                headers={"Location": location(post_target)},
                count=max(1, count // 8),
                path="/orders",
            )
            self.orders[side].mode = p["handler"]
        elif kind == "redirect401":
            # The hop after the redirect gets the 401: it alone may be replayed, the POST never.
            if p["mode"] == "303":
                self.orders[side].mode = "303"
                server.fail_next(401, count, "/thing")
            else:
                moved = {"Location": "/orders-moved"}
                server.respond_next(status=307, headers=moved, count=count, path="/orders")
                server.fail_next(401, count, "/orders-moved")
            if count_armed:
                self.armed["401"] += count
        elif kind in ("slow", "hang"):
            server.delay_next(p["delay"], count, path)
        elif kind == "slow_body":
            server.respond_next(
                b" " * 64,
                status=p["status"],
                count=count,
                path=path,
                repeat=p["repeat"],
                chunk_delay=p["chunk_delay"],
            )
        elif kind == "cut_body":
            server.respond_next(
                THING, status=p["status"], count=count, path=path, cut_after=p["cut_after"]
            )
        elif kind in ("token_hang", "token_fail"):
            if kind == "token_hang":
                server.delay_next(p["delay"], count, TOKEN_PATH)
            elif p["status"] == "drop":
                server.drop_next(count, TOKEN_PATH)
            else:
                server.fail_next(p["status"], count, TOKEN_PATH)
            server.expire_tokens()  # so that a token is needed now
            if count_armed:
                self.armed["token_faults"] += count
                self.armed["expiries"] += 1
        else:
            raise ValueError(f"unknown fault {kind!r}")


def main(expire_every: float) -> None:
    servers, orders, arrivals = {}, {}, {}
    for side in ("sync", "async"):
        server = FakeServer(journal_limit=JOURNAL_LIMIT).start()
        for path in ("/thing", "/thing-moved", "/orders-moved"):
            server.add_resource(path, {"ok": True, "_links": {"self": {"href": path}}})
        orders[side] = Orders()
        server.route("POST", "/orders", orders[side])
        server.route("POST", "/orders-moved", orders[side].moved)
        servers[side] = server
        arrivals[side] = Arrivals(server)
    settings = {
        side: {
            "base_url": s.base_url,
            "profile": s.profile,
            "rel_namespace": s.rel_namespace,
            "app_name": s.credentials.app_name,
            "app_secret": s.credentials.app_secret,
        }
        for side, s in servers.items()
    }
    print(json.dumps(settings), flush=True)
    plan = json.loads(sys.stdin.readline() or "{}")
    stop = threading.Event()
    expiries: list[float] = []  # when, in time.monotonic()

    def expire() -> None:
        while not stop.wait(expire_every):
            # Stamped before: a token request it causes must not precede it.
            expiries.append(time.monotonic())
            for server in servers.values():
                server.expire_tokens()

    def watch() -> None:
        while not stop.wait(POLL_EVERY):
            for tally in arrivals.values():
                tally.poll()

    faults = Faults(servers, orders)
    threads = [
        threading.Thread(target=expire),
        threading.Thread(target=watch),
        threading.Thread(target=faults.play, args=(plan.get("windows", []), stop)),
    ]
    for thread in threads:
        thread.start()
    sys.stdin.readline()
    stop.set()
    for thread in threads:
        thread.join()
    faults.disarm()
    for tally in arrivals.values():
        tally.poll(final=True)
    figures = {
        "expiries": len(expiries),
        "expiry_times": expiries,
        "armed": dict(faults.armed),
        "played": faults.played,
        **{
            side: {
                "posts": orders[side].posts,
                "posts_processed_twice": orders[side].twice,
                "post_arrivals": arrivals[side].arrivals,
                "posts_sent_twice": arrivals[side].twice,
                "posts_sent_twice_samples": arrivals[side].twice_samples,
                "post_statuses": dict(sorted(arrivals[side].statuses.items())),
                "unreadable_posts": arrivals[side].unreadable,
                "journal_gaps": arrivals[side].gaps,
                "token_times": arrivals[side].token_times,
            }
            for side in servers
        },
    }
    for server in servers.values():
        server.stop()
    print(json.dumps(figures), flush=True)


if __name__ == "__main__":
    main(float(sys.argv[1]))
