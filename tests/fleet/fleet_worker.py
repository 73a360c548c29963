"""One process of a fleet (tests/fleet, benches/fleet.py): requests for a fixed time through
its own Client, then reports what it saw. Run by multiprocessing with the spawn method."""

from __future__ import annotations

import threading
import time
from typing import Any

import recurring_payments as rp


def run(settings: dict[str, Any], start_at: float, duration: float, threads: int) -> dict[str, Any]:
    """From wall-clock ``start_at`` for ``duration`` seconds, ``threads`` threads send GETs of
    the entry point through one client built from ``settings``; returns the latencies (s), the
    failures and the span of wall time covered."""
    latencies: list[float] = []
    failures: list[str] = []
    lock = threading.Lock()
    with rp.Client(**settings) as client:
        time.sleep(max(0.0, start_at - time.time()))
        began = time.time()
        stop = began + duration

        def work() -> None:
            mine: list[float] = []
            while time.time() < stop:
                t0 = time.perf_counter()
                try:
                    client.root(refresh=True)
                except rp.Error as err:
                    with lock:
                        failures.append(type(err).__name__)
                mine.append(time.perf_counter() - t0)
                time.sleep(0.005)  # paced: the sandbox's journal keeps every token request
            with lock:
                latencies.extend(mine)

        workers = [threading.Thread(target=work) for _ in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        ended = time.time()
    return {"began": began, "ended": ended, "latencies": latencies, "failures": failures}
