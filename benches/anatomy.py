"""Where the µs of a warm templated follow go, by wall clock: each step of `link(id=...)`,
`mandate["status"]`, `mandate.creditor.href` timed alone, in-process, medians of rounds.

    python benches/anatomy.py [ROUNDS] [N]       (server from BENCH_CHILD_SERVER)

It calls private members of the client (`_target`, `_live().request`, `Resource(...)`), so it
describes the code it was written for (the workspace layout of issue 13, step 1); the callgrind
counts of benches/profile.sh are the stable numbers, this is their wall-clock companion.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench


def timed(op: Callable[[int], object], n: int) -> float:
    start = time.perf_counter()
    for i in range(n):
        op(i)
    return (time.perf_counter() - start) * 1e6 / n


def main(rounds: int, n: int) -> None:
    import recurring_payments as rp
    from recurring_payments._resource import Headers, Resource

    server = bench.child_server()
    ours = bench.ours(server)
    client = rp.Client(
        server.base,
        credentials=rp.AppCredentials(*server.app),
        profile=server.profile,
        rel_namespace=server.base + "/alps#",
    )
    link = client.bench_mandate
    native = client._live()
    urls = [link._target({"id": bench.IDS[i]}) for i in range(16)]
    replies = [native.request("GET", url, None, if_match=None) for url in urls]

    def resource(i: int) -> Resource:
        status, _, headers, document = replies[i & 15]
        return Resource(client, document or {}, status=status, headers=Headers(headers))

    def read(i: int) -> None:
        mandate = resource(i)
        if not (mandate["status"] and mandate.creditor.href):
            raise AssertionError

    steps: dict[str, Callable[[int], object]] = {
        "whole follow (bench.py's)": ours.follow,
        "expand: link._target(id=...) (Python checks + _core.expand_uri_template)": lambda i: (
            link._target({"id": bench.IDS[i & 15]})
        ),
        "_core.expand_uri_template alone": lambda i: rp._core.expand_uri_template(
            link.href, {"id": bench.IDS[i & 15]}
        ),
        "request: NativeClient.request(url) (resolve, HTTP, index, 4-tuple)": lambda i: (
            native.request("GET", urls[i & 15], None, if_match=None)
        ),
        "Resource(...) + Headers(...) from a reply": resource,
        "Resource(...), then ['status']": lambda i: resource(i)["status"],
        "Resource(...), then .creditor (the Link)": lambda i: resource(i).creditor,
        "Resource(...), then ['status'] and .creditor.href": read,
    }
    report(steps, rounds, n, "µs", 1.0)

    # The 5,000-item collections: the request alone, then the embedded list, then one field each.
    for rel, name in (("bench-mandates", "mandates"), ("bench-wide", "items")):
        url = client.root().links[rel].href
        print(f"\n{rel} (ms per fetch):")

        def page(i: int, url: str = url) -> Resource:
            status, _, headers, document = native.request("GET", url, None, if_match=None)
            return Resource(client, document or {}, status=status, headers=Headers(headers))

        def listed(i: int, name: str = name) -> object:
            return page(i).embedded[name]

        def one_field(i: int, name: str = name) -> object:
            return sum(1 for item in page(i).embedded[name] if item["status"] == "active")

        report(
            {
                "NativeClient.request (HTTP, the index) + Resource": page,
                "+ .embedded[...] (5,000 Resources)": listed,
                "+ item['status'] of each": one_field,
            },
            rounds,
            max(n // 200, 3),
            "ms",
            1e-3,
        )
    ours.close()
    client.close()


def report(
    steps: dict[str, Callable[[int], object]], rounds: int, n: int, unit: str, scale: float
) -> None:
    results: dict[str, list[float]] = {name: [] for name in steps}
    for op in steps.values():
        timed(op, max(n // 10, 1))
    for r in range(rounds):
        for name in bench.rotated(list(steps), r):
            results[name].append(timed(steps[name], n) * scale)
    for name, values in results.items():
        print(f"  {statistics.median(values):8.2f} {unit}  {name}")


if __name__ == "__main__":
    main(
        int(sys.argv[1]) if len(sys.argv) > 1 else 9,
        int(sys.argv[2]) if len(sys.argv) > 2 else 2000,
    )
