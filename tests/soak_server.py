"""The soak's servers, in a process of their own so that the soak measures the client alone
(threads, file descriptors, memory). Two sandboxes (one per client), every token expired every
`expire_every` seconds. Prints one JSON line with their settings; on "stop" from stdin prints
one JSON line of figures (expiries, POSTs, POSTs seen twice) and exits."""

from __future__ import annotations

import json
import sys
import threading
from typing import Any

from recurring_payments.testing import FakeServer


class Orders:
    """POST /orders: remembers each POST number in a bitmap (no growth per request to speak
    of) and counts any number seen twice."""

    def __init__(self) -> None:
        self.seen = bytearray()
        self.posts = 0
        self.twice = 0
        self.lock = threading.Lock()

    def __call__(self, request: Any) -> tuple[int, dict[str, int]]:
        n = int(request.json["n"])
        with self.lock:
            if n >= len(self.seen):
                self.seen.extend(bytes(n + 65536 - len(self.seen)))
            self.twice += self.seen[n]
            self.seen[n] = 1
            self.posts += 1
        return 201, {"n": n}


def main(expire_every: float) -> None:
    servers, orders = {}, {}
    for side in ("sync", "async"):
        server = FakeServer(journal_limit=64).start()
        server.add_resource("/thing", {"ok": True, "_links": {"self": {"href": "/thing"}}})
        orders[side] = Orders()
        server.route("POST", "/orders", orders[side])
        servers[side] = server
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
    stop = threading.Event()
    expiries = 0

    def expire() -> None:
        nonlocal expiries
        while not stop.wait(expire_every):
            for server in servers.values():
                server.expire_tokens()
            expiries += 1

    ticker = threading.Thread(target=expire)
    ticker.start()
    sys.stdin.readline()
    stop.set()
    ticker.join()
    figures = {
        "expiries": expiries,
        **{side: {"posts": o.posts, "posts_twice": o.twice} for side, o in orders.items()},
    }
    for server in servers.values():
        server.stop()
    print(json.dumps(figures), flush=True)


if __name__ == "__main__":
    main(float(sys.argv[1]))
