"""Run by tests/test_green_threads.py in a subprocess (monkey-patching must come first):
``python green_scenario.py gevent|eventlet|none client|bare``. Prints one JSON line.

N greenlets each GET a resource whose answer the sandbox holds back DELAY seconds, while a
ticker greenlet ticks every 10 ms. ``client`` calls go through the public API; ``bare`` calls
the native client directly, without the library's green-thread helper (the control run).
"""

from __future__ import annotations

import sys

HUB, MODE = sys.argv[1], sys.argv[2]
if HUB == "gevent":
    from gevent import monkey

    monkey.patch_all()
elif HUB == "eventlet":
    import warnings

    warnings.simplefilter("ignore")  # EventletDeprecationWarning on import
    import eventlet

    eventlet.monkey_patch()

import io  # noqa: E402 (after monkey-patching, as gevent and eventlet require)
import json  # noqa: E402
import logging  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

from recurring_payments.testing import FakeServer  # noqa: E402

N, DELAY = 6, 0.3
# DEBUG logging on: the native layer logs from the pool's threads through patched locks.
logging.basicConfig(level=logging.DEBUG, stream=io.StringIO())

if HUB == "gevent":
    import gevent

    def spawn(fn: Callable[[], Any]) -> Any:
        return gevent.spawn(fn)

    def join(jobs: list[Any]) -> None:
        gevent.joinall(jobs, raise_error=True)

    sleep = gevent.sleep
elif HUB == "eventlet":

    def spawn(fn: Callable[[], Any]) -> Any:
        return eventlet.spawn(fn)

    def join(jobs: list[Any]) -> None:
        for job in jobs:
            job.wait()

    sleep = eventlet.sleep
else:

    def spawn(fn: Callable[[], Any]) -> Any:
        thread = threading.Thread(target=fn)
        thread.start()
        return thread

    def join(jobs: list[Any]) -> None:
        for job in jobs:
            job.join()

    sleep = time.sleep


def watched(calls: list[Callable[[], Any]]) -> dict[str, float]:
    """Run `calls` at once beside a ticker: elapsed time and the longest pause of the ticker."""
    ticks: list[float] = []
    done = False

    def ticker() -> None:
        while not done:
            ticks.append(time.monotonic())
            sleep(0.01)

    tick_job = spawn(ticker)
    sleep(0.05)
    started = time.monotonic()
    join([spawn(call) for call in calls])
    elapsed = time.monotonic() - started
    done = True
    join([tick_job])
    window = [t for t in ticks if t >= started] + [started + elapsed]
    gaps = [b - a for a, b in zip([started, *window], window, strict=False)]
    return {"elapsed": elapsed, "longest_pause": max(gaps), "ticks": len(window) - 1}


with FakeServer(demo=True) as server, server.client(timeout=10.0) as client:
    results: dict[str, Any] = {"hub": HUB, "mode": MODE}
    if MODE == "client":
        # authenticate() and the entry point (root) while the token endpoint/GET / are slow.
        server.delay_next(DELAY, path="/oauth/token")
        results["authenticate"] = watched([client.authenticate])
        server.delay_next(DELAY, path="/")
        results["root"] = watched([client.root])
        assert client.get_creditors is not None

        def call() -> None:
            assert client.get("/creditors/democreditor")["name"] == "Demo Creditor SAS"
    else:
        client.root()
        native = client._live()

        def call() -> None:
            assert native.send(("GET", "/creditors/democreditor", *(None,) * 7))[0] == 200

    server.delay_next(DELAY, count=N, path="/creditors/democreditor")
    results["calls"] = watched([call] * N)
    results["sent"] = sum(r.path == "/creditors/democreditor" for r in server.requests)

if HUB == "none":  # no hub: the helper calls straight through, on the caller's thread
    from recurring_payments._green import _blocking

    results["same_thread"] = _blocking(threading.get_ident) == threading.get_ident()
results["imported"] = sorted(
    {name.split(".")[0] for name in sys.modules} & {"gevent", "eventlet", "greenlet"}
)
print(json.dumps(results))
