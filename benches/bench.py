"""Client benchmarks, side by side with the peers, in one run (see BENCHMARKS.md).

Run by benches/run.sh, which starts the servers and passes them in the environment:
``BENCH_SANDBOX`` (base URL; with ``RECURRING_PAYMENTS_PROFILE``, ``_APP_NAME``, ``_APP_SECRET``),
``BENCH_NGINX`` (base URL of the static site, fixed token) and ``BENCH_FLOOR`` (the Rust floor
binary). Every client does the same work per follow: expand the entry point's templated
``bench-mandate`` link with a variable, GET it (Accept with the profile, Bearer token), parse
the JSON, read the ``status`` field and the ``creditor`` link's href. Peers are measured
interleaved, round after round, so background load hits them alike; medians are reported.

    python benches/bench.py [--quick] [--only sequential,collection,...] [--json OUT]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

IDS = [f"MD{n:04d}" for n in range(16)]
ENV = "RECURRING_PAYMENTS_"


@dataclass
class Server:
    name: str
    base: str
    profile: str
    app: tuple[str, str]

    @property
    def accept(self) -> str:
        return f'application/hal+json; profile="{self.profile}"'


def servers() -> list[Server]:
    found = []
    if os.environ.get("BENCH_SANDBOX"):
        found.append(
            Server(
                "sandbox",
                os.environ["BENCH_SANDBOX"],
                os.environ[ENV + "PROFILE"],
                (os.environ[ENV + "APP_NAME"], os.environ[ENV + "APP_SECRET"]),
            )
        )
    if os.environ.get("BENCH_NGINX"):
        base = os.environ["BENCH_NGINX"]
        found.append(Server("nginx", base, base + "/alps/v1", ("bench", "bench")))
    return found


def check(doc: dict[str, Any]) -> None:
    if not (doc["status"] and doc["_links"]["creditor"]["href"]):
        raise AssertionError(doc)


# -- the clients: each returns (follow(i), collection(), close()) ---------------------------------

Sync = tuple[Callable[[int], None], Callable[[], int], Callable[[], None]]


def ours(server: Server) -> Sync:
    import recurring_payments as rp

    client = rp.Client(
        server.base,
        credentials=rp.AppCredentials(*server.app),
        profile=server.profile,
        rel_namespace=server.base + "/alps#",
    )
    link = client.bench_mandate

    def follow(i: int) -> None:
        mandate = link(id=IDS[i & 15])
        if not (mandate["status"] and mandate.creditor.href):
            raise AssertionError(mandate)

    def collection() -> int:
        page = client.bench_mandates()
        return sum(1 for item in page.embedded["mandates"] if item["status"] == "active")

    return follow, collection, client.close


def _token(server: Server, post: Callable[..., Any]) -> str:
    reply = post(
        server.base + "/oauth/token",
        data={"grant_type": "client_credentials", "scope": "api"},
        auth=server.app,
        headers={"Accept": "application/json"},
    )
    reply.raise_for_status()
    return str(reply.json()["access_token"])


def _template(root: dict[str, Any], name: str) -> str:
    return next(v["href"] for k, v in root["_links"].items() if k.endswith("#" + name))


def requests_client(server: Server) -> Sync:
    import requests
    import uritemplate

    session = requests.Session()
    token = _token(server, session.post)
    session.headers.update({"Accept": server.accept, "Authorization": f"Bearer {token}"})
    root = session.get(server.base + "/").json()
    template = uritemplate.URITemplate(_template(root, "bench-mandate"))
    every = _template(root, "bench-mandates")

    def follow(i: int) -> None:
        reply = session.get(template.expand(id=IDS[i & 15]))
        reply.raise_for_status()
        check(reply.json())

    def collection() -> int:
        reply = session.get(every)
        reply.raise_for_status()
        items = json.loads(reply.content)["_embedded"]["mandates"]
        return sum(1 for item in items if item["status"] == "active")

    return follow, collection, session.close


def httpx_client(server: Server) -> Sync:
    import httpx
    import uritemplate

    token = _token(server, httpx.post)
    client = httpx.Client(headers={"Accept": server.accept, "Authorization": f"Bearer {token}"})
    root = client.get(server.base + "/").json()
    template = uritemplate.URITemplate(_template(root, "bench-mandate"))
    every = _template(root, "bench-mandates")

    def follow(i: int) -> None:
        reply = client.get(template.expand(id=IDS[i & 15]))
        reply.raise_for_status()
        check(reply.json())

    def collection() -> int:
        items = client.get(every).raise_for_status().json()["_embedded"]["mandates"]
        return sum(1 for item in items if item["status"] == "active")

    return follow, collection, client.close


def pyreqwest_client(server: Server) -> Sync:
    import httpx  # only for the one token request
    import uritemplate
    from pyreqwest.client import SyncClientBuilder

    token = _token(server, httpx.post)
    headers = {"Accept": server.accept, "Authorization": f"Bearer {token}"}
    client = SyncClientBuilder().default_headers(headers).error_for_status(True).build()
    root = client.get(server.base + "/").build().send().json()
    template = uritemplate.URITemplate(_template(root, "bench-mandate"))
    every = _template(root, "bench-mandates")

    def follow(i: int) -> None:
        check(client.get(template.expand(id=IDS[i & 15])).build().send().json())

    def collection() -> int:
        items = client.get(every).build().send().json()["_embedded"]["mandates"]
        return sum(1 for item in items if item["status"] == "active")

    return follow, collection, client.close


SYNC_CLIENTS: dict[str, Callable[[Server], Sync]] = {
    "recurring_payments": ours,
    "requests+uritemplate": requests_client,
    "httpx": httpx_client,
    "pyreqwest": pyreqwest_client,
}


# -- measuring ------------------------------------------------------------------------------------


def median(values: list[float]) -> float:
    return statistics.median(values)


def report(title: str, unit: str, results: dict[str, list[float]], lower_is_better: bool) -> None:
    """Print the median per client and its ratio to ours (>1 means ours is better)."""
    ref = median(results["recurring_payments"])
    print(f"\n{title} ({unit}, median of {len(ref_list(results))} rounds)")
    for name, values in results.items():
        m = median(values)
        ratio = (m / ref) if lower_is_better else (ref / m)
        spread = f"{min(values):.1f}..{max(values):.1f}"
        print(f"  {name:32} {m:12.1f}   [{spread:>17}]   ours is {ratio:5.2f}x")


def ref_list(results: dict[str, list[float]]) -> list[float]:
    return results["recurring_payments"]


def sequential(server: Server, rounds: int, n: int, out: dict[str, Any]) -> None:
    clients = {name: make(server) for name, make in SYNC_CLIENTS.items()}
    results: dict[str, list[float]] = {name: [] for name in clients}
    floor = os.environ.get("BENCH_FLOOR")
    if floor:
        results["rust reqwest (floor)"] = []
    token = _token_for_floor(server)
    for follow, _, _ in clients.values():
        for i in range(200):  # warm-up: connections, caches, the token
            follow(i)
    for r in range(rounds):
        names = list(clients)
        names = names[r % len(names) :] + names[: r % len(names)]  # rotate the order
        for name in names:
            follow = clients[name][0]
            start = time.perf_counter()
            for i in range(n):
                follow(i)
            results[name].append((time.perf_counter() - start) * 1e6 / n)
        if floor:
            done = subprocess.run(
                [floor, server.base, server.profile, token, str(n)],
                check=True,
                capture_output=True,
                text=True,
            )
            results["rust reqwest (floor)"].append(float(done.stdout))
    for _, _, close in clients.values():
        close()
    report(f"[{server.name}] sequential follow", "µs per follow", results, True)
    out[f"sequential/{server.name}"] = results


def _token_for_floor(server: Server) -> str:
    import httpx

    return _token(server, httpx.post)


def collection(server: Server, rounds: int, n: int, out: dict[str, Any]) -> None:
    clients = {name: make(server) for name, make in SYNC_CLIENTS.items()}
    results: dict[str, list[float]] = {name: [] for name in clients}
    expected = {get() for _, get, _ in clients.values()}
    if len(expected) != 1:
        raise AssertionError(f"the clients disagree: {expected}")
    for r in range(rounds):
        names = list(clients)
        names = names[r % len(names) :] + names[: r % len(names)]
        for name in names:
            get = clients[name][1]
            start = time.perf_counter()
            for _ in range(n):
                get()
            results[name].append((time.perf_counter() - start) * 1e3 / n)
    for _, _, close in clients.values():
        close()
    report(
        f"[{server.name}] 5,000-item collection: fetch, read one field of each",
        "ms per fetch",
        results,
        True,
    )
    out[f"collection/{server.name}"] = results


# -- async ----------------------------------------------------------------------------------------

AsyncFollow = Callable[[int], Awaitable[None]]


async def ours_async(server: Server, concurrency: int) -> tuple[AsyncFollow, Callable[[], Any]]:
    import recurring_payments as rp

    client = rp.AsyncClient(
        server.base,
        credentials=rp.AppCredentials(*server.app),
        profile=server.profile,
        rel_namespace=server.base + "/alps#",
    )
    link = await client.bench_mandate.link()

    async def follow(i: int) -> None:
        mandate = await link.get(id=IDS[i & 15])
        if not (mandate["status"] and mandate.creditor.href):
            raise AssertionError(mandate)

    return follow, client.aclose


async def aiohttp_async(server: Server, concurrency: int) -> tuple[AsyncFollow, Callable[[], Any]]:
    import aiohttp
    import httpx
    import uritemplate

    token = _token(server, httpx.post)
    session = aiohttp.ClientSession(
        headers={"Accept": server.accept, "Authorization": f"Bearer {token}"},
        connector=aiohttp.TCPConnector(limit=concurrency),
    )
    async with session.get(server.base + "/") as reply:
        root = json.loads(await reply.read())
    template = uritemplate.URITemplate(_template(root, "bench-mandate"))

    async def follow(i: int) -> None:
        async with session.get(template.expand(id=IDS[i & 15])) as reply:
            reply.raise_for_status()
            check(json.loads(await reply.read()))

    return follow, session.close


async def httpx_async(server: Server, concurrency: int) -> tuple[AsyncFollow, Callable[[], Any]]:
    import httpx
    import uritemplate

    token = _token(server, httpx.post)
    client = httpx.AsyncClient(
        headers={"Accept": server.accept, "Authorization": f"Bearer {token}"},
        limits=httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency),
        timeout=60.0,
    )
    root = (await client.get(server.base + "/")).json()
    template = uritemplate.URITemplate(_template(root, "bench-mandate"))

    async def follow(i: int) -> None:
        reply = await client.get(template.expand(id=IDS[i & 15]))
        reply.raise_for_status()
        check(reply.json())

    return follow, client.aclose


async def pyreqwest_async(
    server: Server, concurrency: int
) -> tuple[AsyncFollow, Callable[[], Any]]:
    import httpx
    import uritemplate
    from pyreqwest.client import ClientBuilder

    token = _token(server, httpx.post)
    headers = {"Accept": server.accept, "Authorization": f"Bearer {token}"}
    client = (
        ClientBuilder()
        .default_headers(headers)
        .error_for_status(True)
        .max_connections(concurrency)
        .build()
    )
    root = await (await client.get(server.base + "/").build().send()).json()
    template = uritemplate.URITemplate(_template(root, "bench-mandate"))

    async def follow(i: int) -> None:
        reply = await client.get(template.expand(id=IDS[i & 15])).build().send()
        check(await reply.json())

    return follow, client.close


ASYNC_CLIENTS = {
    "recurring_payments": ours_async,
    "aiohttp": aiohttp_async,
    "httpx": httpx_async,
    "pyreqwest": pyreqwest_async,
}


async def _drive(follow: AsyncFollow, concurrency: int, seconds: float) -> float:
    """Requests per second of `concurrency` workers following for `seconds`."""
    done = 0
    deadline = time.perf_counter() + seconds

    async def worker(w: int) -> None:
        nonlocal done
        i = w
        while time.perf_counter() < deadline:
            await follow(i)
            i += 1
            done += 1

    start = time.perf_counter()
    await asyncio.gather(*(worker(w) for w in range(concurrency)))
    return done / (time.perf_counter() - start)


async def _async_main(server: Server, rounds: int, seconds: float, out: dict[str, Any]) -> None:
    for concurrency in (32, 256):
        clients = {name: await make(server, concurrency) for name, make in ASYNC_CLIENTS.items()}
        results: dict[str, list[float]] = {name: [] for name in clients}
        failed: dict[str, str] = {}
        for follow, _ in clients.values():
            await _drive(follow, concurrency, seconds / 2)  # warm-up: connections, token
        for r in range(rounds):
            names = list(clients)
            names = names[r % len(names) :] + names[: r % len(names)]
            for name in names:
                if name in failed:
                    continue
                try:
                    results[name].append(await _drive(clients[name][0], concurrency, seconds))
                except Exception as exc:  # a peer that breaks under load is reported, not fatal
                    failed[name] = f"{type(exc).__name__}: {exc}"
        for name, why in failed.items():
            print(f"  ({name} failed: {why}; its rounds before that are kept)")
            if not results[name]:
                results[name].append(float("nan"))
        for _, close in clients.values():
            await close()
        report(
            f"[{server.name}] async follows at concurrency {concurrency}",
            "requests/s",
            results,
            False,
        )
        out[f"async-c{concurrency}/{server.name}"] = results


def async_throughput(server: Server, rounds: int, seconds: float, out: dict[str, Any]) -> None:
    asyncio.run(_async_main(server, rounds, seconds, out))


# -- threads --------------------------------------------------------------------------------------


def threads(server: Server, rounds: int, per_thread: int, out: dict[str, Any]) -> None:
    """8 threads: sharing one of our clients, or each with its own requests session."""
    n_threads = 8
    shared = ours(server)
    sessions = [requests_client(server) for _ in range(n_threads)]
    plans: dict[str, list[Callable[[int], None]]] = {
        "recurring_payments": [shared[0]] * n_threads,
        "requests (a session per thread)": [s[0] for s in sessions],
    }

    def run(follows: list[Callable[[int], None]]) -> float:
        barrier = threading.Barrier(n_threads + 1)

        def work(follow: Callable[[int], None]) -> None:
            barrier.wait()
            for i in range(per_thread):
                follow(i)

        workers = [threading.Thread(target=work, args=(f,)) for f in follows]
        for w in workers:
            w.start()
        barrier.wait()
        start = time.perf_counter()
        for w in workers:
            w.join()
        return n_threads * per_thread / (time.perf_counter() - start)

    results: dict[str, list[float]] = {name: [] for name in plans}
    for follows in plans.values():
        run(follows)  # warm-up: one connection per thread
    for r in range(rounds):
        names = list(plans)[r % 2 :] + list(plans)[: r % 2]
        for name in names:
            results[name].append(run(plans[name]))
    shared[2]()
    for s in sessions:
        s[2]()
    report(f"[{server.name}] 8 threads", "requests/s", results, False)
    out[f"threads/{server.name}"] = results


# -- memory and import time -----------------------------------------------------------------------

_RSS_CHILD = """
import sys
sys.path.insert(0, {here!r})
import bench
server = bench.servers()[0]
follow, _, close = bench.ours(server)

def rss():
    with open("/proc/self/status") as status:
        return next(int(l.split()[1]) for l in status if l.startswith("VmRSS")) / 1024

for i in range(1_000):
    follow(i)
first = rss()
for i in range({n} - 1_000):
    follow(i)
print(first, rss())
close()
"""


def memory(server: Server, n: int, out: dict[str, Any]) -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, BENCH_NGINX="") if server.name == "sandbox" else os.environ
    done = subprocess.run(
        [sys.executable, "-c", _RSS_CHILD.format(here=here, n=n)],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    first, last = map(float, done.stdout.split())
    print(f"\n[{server.name}] RSS after 1,000 follows {first:.1f} MB, after {n:,} {last:.1f} MB:")
    print(f"  growth {last - first:+.2f} MB (target < 5 MB)")
    out[f"rss/{server.name}"] = {"after_1000": first, f"after_{n}": last}


def import_time(rounds: int, out: dict[str, Any]) -> None:
    code = (
        "import time; t = time.perf_counter(); import recurring_payments; "
        "print((time.perf_counter() - t) * 1e3)"
    )
    times = [
        float(
            subprocess.run(
                [sys.executable, "-c", code], check=True, capture_output=True, text=True
            ).stdout
        )
        for _ in range(rounds)
    ]
    print(
        f"\nimport recurring_payments: median {median(times):.1f} ms "
        f"[{min(times):.1f}..{max(times):.1f}] over {rounds} fresh processes (target < 100 ms)"
    )
    out["import_ms"] = times


def environment() -> dict[str, str]:
    """The machine and the versions, for BENCHMARKS.md."""
    import platform
    from importlib import metadata

    def version(name: str) -> str:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return "missing"

    cpu = "?"
    try:
        with open("/proc/cpuinfo") as info:
            cpu = next(line.split(":", 1)[1].strip() for line in info if "model name" in line)
    except (OSError, StopIteration):
        pass
    peers = ["recurring-payments", "requests", "uritemplate", "httpx", "aiohttp", "pyreqwest"]
    return {
        "machine": f"{os.cpu_count()} x {cpu}, {platform.platform()}",
        "python": sys.version.split()[0],
        "packages": ", ".join(f"{name} {version(name)}" for name in peers),
        "load average": " ".join(f"{x:.2f}" for x in os.getloadavg()),
    }


# -- main -----------------------------------------------------------------------------------------

WORKLOADS = ("sequential", "collection", "async", "threads", "memory", "import")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes: a smoke test")
    parser.add_argument("--only", default=",".join(WORKLOADS), help="comma-separated workloads")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--json", help="also write every measurement to this file")
    args = parser.parse_args()
    only = set(args.only.split(","))
    rounds = 1 if args.quick else args.rounds
    scale = 0.01 if args.quick else 1.0
    out: dict[str, Any] = {"environment": environment()}
    print("\n".join(f"# {k}: {v}" for k, v in out["environment"].items()))
    found = servers()
    if not found:
        sys.exit("no server: run benches/run.sh (it sets BENCH_SANDBOX / BENCH_NGINX)")
    for server in found:
        if "sequential" in only:
            sequential(server, rounds, int(2_000 * scale) or 20, out)
        if "collection" in only:
            collection(server, rounds, 3 if not args.quick else 1, out)
        if "async" in only:
            async_throughput(server, rounds, 1.0 if not args.quick else 0.2, out)
        if "threads" in only:
            threads(server, rounds, int(300 * scale) or 10, out)
    if "memory" in only:
        memory(found[0], 100_000 if not args.quick else 2_000, out)
    if "import" in only:
        import_time(rounds if args.quick else 11, out)
    if args.json:
        with open(args.json, "w") as file:
            json.dump(out, file, indent=1)


if __name__ == "__main__":
    main()
