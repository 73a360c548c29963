"""Fleet mode (docs/guides/fleets.md): N processes x M threads for a fixed time against one sandbox
whose tokens expire every few seconds, with and without a Redis token store. Prints a markdown
table:
token requests per expiry for the whole fleet, p50/p99 request latency, and how long a renewal
holds the fleet up (the slowest request of each process in each renewal period).

    python benches/fleet.py [--processes 8] [--threads 4] [--seconds 12] [--ttl 4]

Needs redis-server on PATH (tests/fleet/redis_server.py starts it on a free port).
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import os
import statistics
import sys
import threading
import time
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fleet"))

import recurring_payments as rp
from recurring_payments.testing import FakeServer

LEEWAY = 1.0


def worker(
    settings: dict[str, Any], start_at: float, seconds: float, threads: int
) -> list[tuple[float, float]]:
    """(wall-clock start, latency) of every request of one process."""
    samples: list[tuple[float, float]] = []
    lock = threading.Lock()
    with rp.Client(**settings) as client:
        client.root()  # the entry point cached; tokens are what is measured
        time.sleep(max(0.0, start_at - time.time()))
        stop = time.time() + seconds

        def work() -> None:
            mine = []
            while (began := time.time()) < stop:
                t0 = time.perf_counter()
                client.get("/")
                mine.append((began, time.perf_counter() - t0))
            with lock:
                samples.extend(mine)

        pool = [threading.Thread(target=work) for _ in range(threads)]
        for t in pool:
            t.start()
        for t in pool:
            t.join()
    return samples


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))]


def run(args: argparse.Namespace, token_store: str | None) -> dict[str, float]:
    with FakeServer(token_ttl=args.ttl) as server:
        settings = {
            "base_url": server.base_url,
            "credentials": server.credentials,
            "profile": server.profile,
            "token_leeway": LEEWAY,
            "token_store": token_store,
        }
        context = multiprocessing.get_context("spawn")
        with context.Pool(args.processes) as pool:
            start_at = time.time() + 2.0 + 0.3 * args.processes
            jobs = [
                pool.apply_async(worker, (settings, start_at, args.seconds, args.threads))
                for _ in range(args.processes)
            ]
            # Count the token requests of the measured window only (not the warm-ups').
            time.sleep(max(0.0, start_at - time.time()))
            server.clear_requests()
            reports = [job.get(timeout=args.seconds + 120) for job in jobs]
        requests = len(server.token_requests)
    period = args.ttl - LEEWAY
    expiries = math.ceil(args.seconds / period)
    latencies = [lat for samples in reports for _, lat in samples]
    # Per process and renewal period, the slowest request: what a renewal costs that process.
    stalls = []
    for samples in reports:
        worst: dict[int, float] = {}
        for began, lat in samples:
            slot = int((began - start_at) // period)
            worst[slot] = max(worst.get(slot, 0.0), lat)
        stalls.extend(worst.values())
    return {
        "token requests": requests,
        "per expiry": requests / expiries,
        "requests": len(latencies),
        "p50": percentile(latencies, 0.50) * 1e3,
        "p99": percentile(latencies, 0.99) * 1e3,
        "renewal median": statistics.median(stalls) * 1e3,
        "renewal max": max(stalls) * 1e3,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=8)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=12.0)
    parser.add_argument("--ttl", type=float, default=4.0)
    args = parser.parse_args()
    from redis_server import RedisServer

    redis = RedisServer().start()
    try:
        rows = [("in process", run(args, None)), ("Redis store", run(args, redis.url))]
    finally:
        redis.close()
    period = args.ttl - LEEWAY
    print(
        f"\n{args.processes} processes x {args.threads} threads, {args.seconds:g} s, tokens of "
        f"{args.ttl:g} s renewed every {period:g} s ({math.ceil(args.seconds / period)} renewals)\n"
    )
    print(
        "| token_store | token requests (per renewal) | requests | p50 ms | p99 ms "
        "| slowest request per renewal, median / max ms |"
    )
    print("|---|---|---|---|---|---|")
    for name, r in rows:
        print(
            f"| {name} | {r['token requests']:.0f} ({r['per expiry']:.1f}) | {r['requests']:.0f} "
            f"| {r['p50']:.2f} | {r['p99']:.2f} "
            f"| {r['renewal median']:.2f} / {r['renewal max']:.2f} |"
        )


if __name__ == "__main__":
    main()
