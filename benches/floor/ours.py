"""Our client's follow timed like a floor's (benches/floor/measure.sh runs it in the floors'
rounds): ``python ours.py N`` against the server of ``BENCH_CHILD_SERVER`` (bench.child_server),
WARMUP follows first, then prints microseconds per follow of N more."""

from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import bench

WARMUP = 200  # as the floors (src/lib.rs)


def main(n: int) -> None:
    client = bench.ours(bench.child_server())
    for i in range(WARMUP):
        client.follow(i)
    start = time.perf_counter()
    for i in range(n):
        client.follow(i)
    print(f"{(time.perf_counter() - start) * 1e6 / max(n, 1):.2f}")
    client.close()


if __name__ == "__main__":
    main(int(sys.argv[1]))
