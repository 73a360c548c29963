"""One of our client's workloads, repeated, for a profiler (benches/profile.sh runs it under
callgrind twice, N times and 0 times, so that start-up, imports and warm-up cancel out).

    python benches/profile.py WORKLOAD N

WORKLOAD: follow, mandates, wide, wide-all, export, async (ours); untraced-follow (ours with
``telemetry=False``: against ``follow``, what telemetry costs with no SDK configured, in
instructions). A peer's: PEER-follow or PEER-<page> (PEER one of pyreqwest, requests, urllib3,
pycurl; e.g. pycurl-wide-all), and pyreqwest-async, aiohttp-async (32 tasks, every thread
counted: pyreqwest's runtime runs on threads of its own). A peer's count against ours is a
ratio that the host's load does not move.

The server comes from ``BENCH_CHILD_SERVER`` (bench.child_server). Before the N repetitions
one untimed round warms everything a repetition uses (token, entry point, connection, the
link's parsed template, the relation index).
"""

from __future__ import annotations

import asyncio
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench

CONCURRENCY = 32


ASYNC_CLIENTS = {
    "async": bench.ours_async,
    "pyreqwest-async": bench.pyreqwest_async,
    "aiohttp-async": bench.aiohttp_async,
}


def run_async(workload: str, n: int) -> None:
    async def main() -> None:
        follow, aclose = await ASYNC_CLIENTS[workload](bench.child_server(), CONCURRENCY)

        async def worker(w: int, count: int) -> None:
            for i in range(count):
                await follow(w + i)

        await asyncio.gather(*(worker(w, 2) for w in range(CONCURRENCY)))  # warm-up
        await asyncio.gather(*(worker(w, n // CONCURRENCY) for w in range(CONCURRENCY)))
        await aclose()

    asyncio.run(main())


def main(workload: str, n: int) -> None:
    if workload in ASYNC_CLIENTS:
        run_async(workload, n)
        return
    # "pycurl-wide-all": a peer's client and one of its workloads; a bare workload is ours.
    clients = {
        "untraced": lambda server: bench.ours(server, telemetry=False),
        "pyreqwest": bench.pyreqwest_client,
        "requests": bench.requests_client,
        "urllib3": bench.urllib3_client,
        "pycurl": bench.pycurl_client,
    }
    who, _, what = workload.partition("-")
    make = clients.get(who)
    if make is None:  # a bare workload: ours
        make, what = bench.ours, workload
    client = make(bench.child_server())
    if what == "follow":
        op = client.follow
    else:
        read = client.collections[what]
        op = lambda i: read()  # noqa: E731
    for i in range(2):  # warm-up
        op(i)
    for i in range(n):
        op(i)
    client.close()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
