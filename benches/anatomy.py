"""Where the µs of a warm templated follow go, by wall clock: each step of `link(id=...)`,
`mandate["status"]`, `mandate.creditor.href` timed alone, in-process, medians of rounds.

    python benches/anatomy.py [ROUNDS] [N]       (server from BENCH_CHILD_SERVER)

It reaches below the public API to time the steps alone: the client's `Session` (`_session`),
its native client (`Session.live()`, whose `send` checks, expands and resolves the target,
then requests and indexes the body) and `Resource(session, document, ...)` as `_resource._send`
builds it. So it describes the code it was written for (issue 13's one `send` per request);
the callgrind counts of benches/profile.sh are the stable numbers, this is their wall-clock
companion.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench

# The rest of a request value (`_core._Call`) after its method and href: no variables, body,
# templated flag, name, If-Match, headers or options.
_NOTHING = (None,) * 7


def timed(op: Callable[[int], object], n: int) -> float:
    start = time.perf_counter()
    for i in range(n):
        op(i)
    return (time.perf_counter() - start) * 1e6 / n


def main(rounds: int, n: int) -> None:
    import recurring_payments as rp
    from recurring_payments._headers import Headers
    from recurring_payments._resource import Resource

    server = bench.child_server()
    ours = bench.ours(server)
    client = bench.our_client(server)
    link = client.bench_mandate
    session = client._session
    native = session.live()
    href, templated, rel = link.href, link.templated, link.rel
    variables = [{"id": bench.IDS[i]} for i in range(16)]
    urls = [link.expand(**variables[i]) for i in range(16)]
    replies = [native.send(("GET", url, *_NOTHING)) for url in urls]

    def resource(i: int) -> Resource:
        status, headers, document = replies[i & 15]
        doc = {} if document is None else document
        return Resource(session, doc, status=status, headers=Headers(headers))

    def read(i: int) -> None:
        mandate = resource(i)
        if not (mandate["status"] and mandate.creditor.href):
            raise AssertionError

    steps: dict[str, Callable[[int], object]] = {
        "whole follow (bench.py's)": ours.follow,
        "send(template, variables): check, expand, resolve, HTTP, index, 3-tuple": lambda i: (
            native.send(("GET", href, variables[i & 15], None, templated, rel, None, None, None))
        ),
        "send(absolute URL): HTTP, index, 3-tuple": lambda i: native.send(
            ("GET", urls[i & 15], *_NOTHING)
        ),
        "link.expand(id=...) alone (Session.expand: _core.expand_target)": lambda i: link.expand(
            **variables[i & 15]
        ),
        "_core.expand_uri_template alone": lambda i: rp._core.expand_uri_template(
            href, variables[i & 15]
        ),
        "Resource(...) + Headers(...) from a reply": resource,
        "Resource(...), then ['status']": lambda i: resource(i)["status"],
        "Resource(...), then .creditor (the Link)": lambda i: resource(i).creditor,
        "Resource(...), then ['status'] and .creditor.href": read,
    }
    report(steps, rounds, n, "µs", 1.0)

    # The 5,000-item collections: the request alone, then the embedded list, then one field each.
    for rel_name, name in (("bench-mandates", "mandates"), ("bench-wide", "items")):
        url = client.root().links[rel_name].href
        print(f"\n{rel_name} (ms per fetch):")

        def page(i: int, url: str = url) -> Resource:
            status, headers, document = native.send(("GET", url, *_NOTHING))
            doc = {} if document is None else document
            return Resource(session, doc, status=status, headers=Headers(headers))

        def listed(i: int, name: str = name) -> object:
            return page(i).embedded[name]

        def one_field(i: int, name: str = name) -> object:
            return sum(1 for item in page(i).embedded[name] if item["status"] == "active")

        report(
            {
                "NativeClient.send (HTTP, the index) + Resource": page,
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
