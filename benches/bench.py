"""Client benchmarks, side by side with the peers, in one run (see BENCHMARKS.md).

Run by benches/run.sh, which starts the servers and passes them in the environment:
``BENCH_SANDBOX`` (base URL; with ``RECURRING_PAYMENTS_PROFILE``, ``_APP_NAME``, ``_APP_SECRET``),
``BENCH_NGINX`` (base URL of the static site, fixed token), ``BENCH_NGINX_TLS`` and ``BENCH_CA``
(the same site over HTTPS, and the CA bundle that signed its certificate), and the Rust floors
(benches/floor: reference columns, no target): ``BENCH_FLOOR`` (reqwest), ``BENCH_FLOOR_HYPER``
(hyper-util's client used directly), ``BENCH_FLOOR_UREQ`` (ureq, blocking) and
``BENCH_FLOOR_BLOCKING`` (a blocking socket, plain HTTP only). Every client does the same work
per follow: expand the entry point's templated ``bench-mandate`` link with a variable, GET it
(Accept with the profile, Bearer token), parse the JSON, read the ``status`` field and the
``creditor`` link's href.
Peers are measured interleaved, round after round, so background load hits them alike; medians
are reported, and at the end one table (BENCHMARKS.md's format) with each target and whether
it is met. A peer whose package is missing is left out with a note.

    python benches/bench.py [--quick] [--only sequential,collection,...] [--json OUT]
                            [--placement "one vCPU"]

``--placement`` names how the run was placed on the CPUs (``make bench`` runs the sequential
and async follows a second time under ``taskset -c 0``, client and servers on one vCPU); it is
added to the titles and the table's rows.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
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
    ca: str | None = None  # the CA bundle of an HTTPS server (benches/run.sh makes one)

    @property
    def accept(self) -> str:
        return f'application/hal+json; profile="{self.profile}"'

    @property
    def verify(self) -> str | bool:
        """requests' and niquests' `verify` (ours takes the same)."""
        return self.ca or True

    def ssl(self) -> Any:
        """An ssl.SSLContext that trusts the server's CA (httpx, aiohttp), or True."""
        import ssl

        return ssl.create_default_context(cafile=self.ca) if self.ca else True


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
        if os.environ.get("BENCH_NGINX_TLS"):  # the same site over HTTPS (same profile)
            tls = os.environ["BENCH_NGINX_TLS"]
            ca = os.environ["BENCH_CA"]
            found.append(Server("nginx-https", tls, base + "/alps/v1", ("bench", "bench"), ca))
    return found


def check(doc: dict[str, Any]) -> None:
    if not (doc["status"] and doc["_links"]["creditor"]["href"]):
        raise AssertionError(doc)


# -- the clients ----------------------------------------------------------------------------------

# The collections (benches/fixture.py): the entry point's relation, the embedded name, and
# what is read of each item: `status` ("status"), every field and the self href ("fields"),
# or its state as a new dict and the self href, as an export writes them ("export"). Each
# read returns the number of active items, so the clients can be checked to agree.
COLLECTIONS = {
    "mandates": ("bench-mandates", "mandates", "status"),
    "wide": ("bench-wide", "items", "status"),
    "wide-all": ("bench-wide", "items", "fields"),
    "export": ("bench-wide", "items", "export"),
}
WIDE_FIELDS = ("id", "reference", "status", "amount", "currency", "created", "debtor", "iban")


@dataclass
class Sync:
    follow: Callable[[int], None]  # follow(i): one templated follow, id number i
    collections: dict[str, Callable[[], int]]  # name (COLLECTIONS) -> fetch and read
    close: Callable[[], None]


def _count(
    items: Any,
    read: str,
    href: Callable[[Any], str],
    state: Callable[[Any], dict[str, Any]] | None = None,
) -> int:
    """Active items, each read as ``read`` says (COLLECTIONS): ``href`` gives its self href,
    ``state`` its state as a new dict (a peer's: its JSON object without ``_links``)."""
    if read == "status":
        return sum(1 for item in items if item["status"] == "active")
    active = 0
    if read == "export":
        state = state or _peer_state
        for item in items:
            row = state(item)
            if row["status"] == "active" and href(item):
                active += 1
        return active
    for item in items:
        values = [item[name] for name in WIDE_FIELDS]
        if values[2] == "active" and href(item):
            active += 1
    return active


def _peer_href(item: dict[str, Any]) -> str:
    return str(item["_links"]["self"]["href"])


def _peer_state(item: dict[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in item.items() if name not in ("_links", "_embedded")}


def _our_url(item: Any) -> str:
    return str(item.url)  # the self href, resolved (the servers' hrefs are absolute already)


def _our_state(item: Any) -> dict[str, Any]:
    return dict(item.data)


def our_client(server: Server, **options: Any) -> Any:
    """Our sync client of ``server``, as every workload of ours uses it."""
    import recurring_payments as rp

    return rp.Client(
        server.base,
        credentials=rp.AppCredentials(*server.app),
        profile=server.profile,
        rel_namespace=server.base + "/alps#",
        **({"verify": server.ca} if server.ca else {}),
        **options,
    )


def ours(server: Server, **options: Any) -> Sync:
    client = our_client(server, **options)
    link = client.bench_mandate

    def follow(i: int) -> None:
        mandate = link(id=IDS[i & 15])
        if not (mandate["status"] and mandate.creditor.href):
            raise AssertionError(mandate)

    def reader(rel: str, name: str, every: str) -> Callable[[], int]:
        def read() -> int:
            page = client.root().links[rel]()
            return _count(page.embedded[name], every, _our_url, _our_state)

        return read

    return Sync(follow, {c: reader(*spec) for c, spec in COLLECTIONS.items()}, client.close)


def _token(server: Server, post: Callable[..., Any]) -> str:
    reply = post(
        server.base + "/oauth/token",
        data={"grant_type": "client_credentials", "scope": "api"},
        auth=server.app,
        headers={"Accept": "application/json"},
    )
    reply.raise_for_status()
    return str(reply.json()["access_token"])


def _token_httpx(server: Server) -> str:
    """A token for the peers that have no form POST of their own at hand."""
    import httpx

    return _token(server, functools.partial(httpx.post, verify=server.ssl()))


def _template(root: dict[str, Any], name: str) -> str:
    return next(v["href"] for k, v in root["_links"].items() if k.endswith("#" + name))


def requests_client(server: Server) -> Sync:
    import requests
    import uritemplate

    session = requests.Session()
    # verify= on each call: a session's own verify gives way to REQUESTS_CA_BUNDLE and
    # CURL_CA_BUNDLE when they are set (trust_env), as in many CI environments.
    get = functools.partial(session.get, verify=server.verify)
    token = _token(server, functools.partial(session.post, verify=server.verify))
    session.headers.update({"Accept": server.accept, "Authorization": f"Bearer {token}"})
    root = get(server.base + "/").json()
    template = uritemplate.URITemplate(_template(root, "bench-mandate"))

    def follow(i: int) -> None:
        reply = get(template.expand(id=IDS[i & 15]))
        reply.raise_for_status()
        check(reply.json())

    def reader(rel: str, name: str, every: str) -> Callable[[], int]:
        url = _template(root, rel)

        def read() -> int:
            reply = get(url)
            reply.raise_for_status()
            return _count(json.loads(reply.content)["_embedded"][name], every, _peer_href)

        return read

    return Sync(follow, {c: reader(*spec) for c, spec in COLLECTIONS.items()}, session.close)


def httpx_client(server: Server) -> Sync:
    import httpx
    import uritemplate

    token = _token_httpx(server)
    client = httpx.Client(
        headers={"Accept": server.accept, "Authorization": f"Bearer {token}"}, verify=server.ssl()
    )
    root = client.get(server.base + "/").json()
    template = uritemplate.URITemplate(_template(root, "bench-mandate"))

    def follow(i: int) -> None:
        reply = client.get(template.expand(id=IDS[i & 15]))
        reply.raise_for_status()
        check(reply.json())

    def reader(rel: str, name: str, every: str) -> Callable[[], int]:
        url = _template(root, rel)

        def read() -> int:
            items = client.get(url).raise_for_status().json()["_embedded"][name]
            return _count(items, every, _peer_href)

        return read

    return Sync(follow, {c: reader(*spec) for c, spec in COLLECTIONS.items()}, client.close)


def pyreqwest_client(server: Server) -> Sync:
    import uritemplate
    from pyreqwest.client import SyncClientBuilder

    token = _token_httpx(server)
    headers = {"Accept": server.accept, "Authorization": f"Bearer {token}"}
    builder = SyncClientBuilder().default_headers(headers).error_for_status(True)
    if server.ca:
        with open(server.ca, "rb") as pem:
            builder = builder.add_root_certificate_pem(pem.read())
    client = builder.build()
    root = client.get(server.base + "/").build().send().json()
    template = uritemplate.URITemplate(_template(root, "bench-mandate"))

    def follow(i: int) -> None:
        check(client.get(template.expand(id=IDS[i & 15])).build().send().json())

    def reader(rel: str, name: str, every: str) -> Callable[[], int]:
        url = _template(root, rel)

        def read() -> int:
            items = client.get(url).build().send().json()["_embedded"][name]
            return _count(items, every, _peer_href)

        return read

    return Sync(follow, {c: reader(*spec) for c, spec in COLLECTIONS.items()}, client.close)


def urllib3_client(server: Server) -> Sync:
    import uritemplate
    import urllib3

    pool = urllib3.PoolManager(ca_certs=server.ca)
    token = _token_urllib3(server, pool)
    headers = {"Accept": server.accept, "Authorization": f"Bearer {token}"}

    def get(url: str) -> bytes:
        reply = pool.request("GET", url, headers=headers)
        if reply.status != 200:
            raise AssertionError(f"{url}: {reply.status}")
        return reply.data  # type: ignore[no-any-return]

    root = json.loads(get(server.base + "/"))
    template = uritemplate.URITemplate(_template(root, "bench-mandate"))

    def follow(i: int) -> None:
        check(json.loads(get(template.expand(id=IDS[i & 15]))))

    def reader(rel: str, name: str, every: str) -> Callable[[], int]:
        url = _template(root, rel)

        def read() -> int:
            return _count(json.loads(get(url))["_embedded"][name], every, _peer_href)

        return read

    return Sync(follow, {c: reader(*spec) for c, spec in COLLECTIONS.items()}, pool.clear)


def _token_urllib3(server: Server, pool: Any) -> str:
    import urllib3

    reply = pool.request(
        "POST",
        server.base + "/oauth/token",
        fields={"grant_type": "client_credentials", "scope": "api"},
        encode_multipart=False,
        headers={
            **urllib3.make_headers(basic_auth=":".join(server.app)),
            "Accept": "application/json",
        },
    )
    if reply.status != 200:
        raise AssertionError(f"token: {reply.status}")
    return str(json.loads(reply.data)["access_token"])


def niquests_client(server: Server) -> Sync:
    import niquests
    import uritemplate

    session = niquests.Session()
    # verify= on each call: a session's own verify gives way to REQUESTS_CA_BUNDLE and
    # CURL_CA_BUNDLE when they are set (trust_env), as in many CI environments.
    get = functools.partial(session.get, verify=server.verify)
    token = _token(server, functools.partial(session.post, verify=server.verify))
    session.headers.update({"Accept": server.accept, "Authorization": f"Bearer {token}"})
    root = get(server.base + "/").json()
    template = uritemplate.URITemplate(_template(root, "bench-mandate"))

    def follow(i: int) -> None:
        reply = get(template.expand(id=IDS[i & 15]))
        reply.raise_for_status()
        check(reply.json())

    def reader(rel: str, name: str, every: str) -> Callable[[], int]:
        url = _template(root, rel)

        def read() -> int:
            reply = get(url)
            reply.raise_for_status()
            return _count(json.loads(reply.content or b"")["_embedded"][name], every, _peer_href)

        return read

    return Sync(follow, {c: reader(*spec) for c, spec in COLLECTIONS.items()}, session.close)


class Curl:
    """One pycurl handle (one keep-alive connection), as a user of libcurl would keep it: GET
    and POST into a list of chunks, the status checked."""

    def __init__(self, headers: list[str], ca: str | None) -> None:
        import pycurl

        self.pycurl = pycurl
        self.handle = pycurl.Curl()
        if ca:
            self.handle.setopt(pycurl.CAINFO, ca)
        self.chunks: list[bytes] = []
        self.handle.setopt(pycurl.WRITEFUNCTION, self.chunks.append)
        self.handle.setopt(pycurl.HTTPHEADER, headers)

    def request(self, url: str) -> bytes:
        handle, chunks = self.handle, self.chunks
        chunks.clear()
        handle.setopt(self.pycurl.URL, url)
        handle.perform()
        status = handle.getinfo(self.pycurl.RESPONSE_CODE)
        if status != 200:
            raise AssertionError(f"{url}: {status}")
        return b"".join(chunks)

    def token(self, server: Server) -> str:
        pycurl, handle = self.pycurl, self.handle
        handle.setopt(pycurl.USERPWD, ":".join(server.app))
        handle.setopt(pycurl.POSTFIELDS, "grant_type=client_credentials&scope=api")
        body = self.request(server.base + "/oauth/token")
        handle.setopt(pycurl.HTTPGET, 1)
        handle.unsetopt(pycurl.USERPWD)
        return str(json.loads(body)["access_token"])


def pycurl_client(server: Server) -> Sync:
    """libcurl through pycurl, the JSON parsed by orjson: the fastest pair a Python user can
    assemble by hand."""
    import orjson
    import uritemplate

    curl = Curl(["Accept: application/json"], server.ca)
    token = curl.token(server)
    curl.handle.setopt(
        curl.pycurl.HTTPHEADER, [f"Accept: {server.accept}", f"Authorization: Bearer {token}"]
    )
    root = orjson.loads(curl.request(server.base + "/"))
    template = uritemplate.URITemplate(_template(root, "bench-mandate"))

    def follow(i: int) -> None:
        check(orjson.loads(curl.request(template.expand(id=IDS[i & 15]))))

    def reader(rel: str, name: str, every: str) -> Callable[[], int]:
        url = _template(root, rel)

        def read() -> int:
            return _count(orjson.loads(curl.request(url))["_embedded"][name], every, _peer_href)

        return read

    return Sync(follow, {c: reader(*spec) for c, spec in COLLECTIONS.items()}, curl.handle.close)


SYNC_CLIENTS: dict[str, Callable[[Server], Sync]] = {
    "recurring_payments": ours,
    "requests+uritemplate": requests_client,
    "httpx": httpx_client,
    "urllib3": urllib3_client,
    "niquests": niquests_client,
    "pycurl+orjson": pycurl_client,
    "pyreqwest": pyreqwest_client,
}


# -- measuring ------------------------------------------------------------------------------------

OURS = "recurring_payments"
FLOOR = "rust reqwest (floor)"
# The same follow on the other candidate wires of the library (benches/floor/src/bin).
FLOOR_HYPER = "rust hyper-util (floor)"
FLOOR_UREQ = "rust ureq, blocking (floor)"
# The floor's follow over a blocking socket, no runtime nor reqwest (benches/floor/src/bin): what
# the floor's own time is made of, a reference beside it (BENCHMARKS.md), no target.
FLOOR_BLOCKING = "rust blocking socket (reference)"


def median(values: list[float]) -> float:
    return statistics.median(values)


def report(
    title: str,
    unit: str,
    results: dict[str, list[float]],
    lower_is_better: bool,
    ref: str = OURS,
    unit_of: str = "rounds",
) -> None:
    """Print the median per client and its ratio to ``ref`` (>1 means ``ref`` is better)."""
    count = len(results[ref])
    print(f"\n{title} ({unit}, median of {count} {unit_of}; ratio: median of the {unit_of}')")
    for name, values in results.items():
        m = median(values)
        ratio = paired(results[ref], values, lower_is_better)
        spread = f"{min(values):.1f}..{max(values):.1f}"
        who = "ours" if ref == OURS else ref
        print(f"  {name:32} {m:12.1f}   [{spread:>17}]   {who} is {ratio:5.2f}x")


def paired(ours: list[float], theirs: list[float], lower_is_better: bool) -> float:
    """How many times better ``ours`` is: the median of each round's (or block's) ratio. Both
    ran in the same round, seconds (a block: tens of milliseconds) apart, so a load that
    changes between rounds cancels out of a ratio."""
    pairs = [(o, t) for o, t in zip(ours, theirs, strict=False) if o == o and t == t]  # not NaN
    if not pairs:
        return float("nan")
    return median([_ratio(t, o) if lower_is_better else _ratio(o, t) for o, t in pairs])


def _ratio(a: float, b: float) -> float:
    return a / b if b else float("inf")


def rotated(names: list[str], r: int) -> list[str]:
    """Round r's order: every client runs first once in a while (background load is shared)."""
    return names[r % len(names) :] + names[: r % len(names)]


# 5-17x slower per follow: a quarter of the follows
SLOW = ("requests+uritemplate", "httpx", "urllib3", "niquests")


def installed(name: str, error: ImportError) -> None:
    """A peer whose package is missing is left out of the run, with a note (`make bench`
    installs every peer: the `bench` extra)."""
    print(f"  ({name}: not installed ({error.name}); left out of this run)")


def sync_clients(server: Server) -> dict[str, Sync]:
    clients = {}
    for name, make in SYNC_CLIENTS.items():
        try:
            clients[name] = make(server)
        except ImportError as error:
            installed(name, error)
    return clients


# A round of the sequential follow runs in blocks: each Python client's block of n / BLOCKS
# follows (~30 ms) next to the others', so that a ratio pairs measurements tens of milliseconds
# apart. Whole rounds of 2,000 follows paired them seconds apart, and this host's load moved the
# median ratio to pyreqwest between 1.05 and 1.71 from run to run. The floor
# runs once a round, n follows in its own process as before: a fresh process at each block ran
# in the scheduler's first placement, several times faster than a long run (24 µs against 140).
BLOCKS = 10

# How this run is placed on the CPUs (`--placement`), for the titles: "" when the scheduler
# places it. On this 2-vCPU VM, a reply that wakes the other, idle vCPU costs every client
# ~140 µs, the Rust floor too (BENCHMARKS.md, "One vCPU, and as placed"); on one vCPU the
# time is the CPU work of client, server and kernel.
PLACEMENT = ""


def placed(title: str) -> str:
    return f"{title} ({PLACEMENT})" if PLACEMENT else title


def sequential(server: Server, rounds: int, n: int, out: dict[str, Any]) -> None:
    clients = sync_clients(server)
    results: dict[str, list[float]] = {name: [] for name in clients}
    floors = {  # the blocking socket speaks plain HTTP only; the others take the CA bundle
        name: binary
        for name, binary in (
            (FLOOR, os.environ.get("BENCH_FLOOR")),
            (FLOOR_HYPER, os.environ.get("BENCH_FLOOR_HYPER")),
            (FLOOR_UREQ, os.environ.get("BENCH_FLOOR_UREQ")),
            (FLOOR_BLOCKING, os.environ.get("BENCH_FLOOR_BLOCKING")),
        )
        if binary and not (server.ca and name == FLOOR_BLOCKING)
    }
    token = _token_for_floor(server) if floors else ""
    floor_times: dict[str, list[float]] = {name: [] for name in floors}
    for client in clients.values():
        for i in range(200):  # warm-up: connections, caches, the token
            client.follow(i)
    block = max(n // BLOCKS, 1)
    for r in range(rounds):
        for name, binary in floors.items():
            command = [binary, server.base, server.profile, token, str(n)]
            command += [server.ca] if server.ca else []
            done = subprocess.run(command, check=True, capture_output=True, text=True)
            floor_times[name].append(float(done.stdout))
        for b in range(BLOCKS):
            for name in rotated(list(clients), r * BLOCKS + b):
                follow = clients[name].follow
                count = max(block // 4, 1) if name in SLOW else block  # 5-15x slower: fewer
                start = time.perf_counter()
                for i in range(count):
                    follow(i)
                results[name].append((time.perf_counter() - start) * 1e6 / count)
    for client in clients.values():
        client.close()
    for name, times in floor_times.items():  # a round's time stands for each of its blocks
        results[name] = [t for t in times for _ in range(BLOCKS)]
    title = placed(f"[{server.name}] sequential follow")
    report(title, "µs per follow", results, True, unit_of="blocks")
    out[f"sequential/{server.name}"] = results


def _token_for_floor(server: Server) -> str:
    return _token_httpx(server)


COLLECTION_TITLES = {
    "mandates": "5,000 mandates (5 fields, a nested object, 3 links each): read `status` of each",
    "wide": "5,000 wide items (8 fields, 2 links each): read `status` of each",
    "wide-all": "5,000 wide items: read all 8 fields and the self href of each",
    "export": "5,000 wide items: each one's state as a new dict and its self href (an export)",
}


def collection(server: Server, rounds: int, n: int, out: dict[str, Any]) -> None:
    """ms per fetch of each collection: each round is n blocks, and in a block every client
    fetches and reads the page once, in an order rotated block by block. A ratio is the median
    of the blocks' ratios, so the two fetches of a pair are tens of milliseconds apart: a
    client's n fetches in a row, seconds from the others', let the host's load move a ratio by
    up to 2x between rounds."""
    clients = sync_clients(server)
    for which in COLLECTIONS:
        results: dict[str, list[float]] = {name: [] for name in clients}
        expected = {client.collections[which]() for client in clients.values()}
        if len(expected) != 1:
            raise AssertionError(f"the clients disagree on {which}: {expected}")
        for r in range(rounds):
            for b in range(n):
                for name in rotated(list(clients), r * n + b):
                    read = clients[name].collections[which]
                    start = time.perf_counter()
                    read()
                    results[name].append((time.perf_counter() - start) * 1e3)
        title = f"[{server.name}] {COLLECTION_TITLES[which]}"
        report(title, "ms per fetch", results, True, unit_of="blocks")
        out[f"collection-{which}/{server.name}"] = results
    for client in clients.values():
        client.close()


# -- telemetry (issue 15) --------------------------------------------------------------------------

TELEMETRY_OFF = "telemetry=False"
TELEMETRY_ON = "telemetry=True, no SDK"
TELEMETRY_SDK = "telemetry=True, SDK + batch processor"


def has_telemetry() -> bool:
    import inspect

    import recurring_payments as rp

    return "telemetry" in inspect.signature(rp.Client).parameters


def _interleave(
    follows: dict[str, Callable[[int], None]], rounds: int, n: int
) -> dict[str, list[float]]:
    """µs per follow of each, after a warm-up: each round in BLOCKS blocks of n / BLOCKS
    follows, interleaved and rotated block by block, as the sequential follow's: whole rounds
    of n, seconds apart, let the host's load drift into each ratio (BLOCKS, above), and the
    telemetry target is about 3%."""
    for follow in follows.values():
        for i in range(200):
            follow(i)
    results: dict[str, list[float]] = {name: [] for name in follows}
    block = max(n // BLOCKS, 1)
    for r in range(rounds):
        for b in range(BLOCKS):
            for name in rotated(list(follows), r * BLOCKS + b):
                follow = follows[name]
                start = time.perf_counter()
                for i in range(block):
                    follow(i)
                results[name].append((time.perf_counter() - start) * 1e6 / block)
    return results


def telemetry(server: Server, rounds: int, n: int, out: dict[str, Any]) -> None:
    """A follow with telemetry on (no SDK: OpenTelemetry's no-op tracer) vs off; then, in a
    fresh process (a tracer provider is set once per process), with the SDK installed and a
    batch span processor whose exporter drops the spans."""
    if not has_telemetry():
        print(
            f"\n[{server.name}] telemetry: skipped: rp.Client has no `telemetry` parameter yet "
            "(issue 15 adds it)"
        )
        return
    try:
        import opentelemetry.trace  # noqa: F401
    except ImportError:
        print(f"\n[{server.name}] telemetry: note: opentelemetry-api is not installed")
    clients = {TELEMETRY_OFF: ours(server, telemetry=False), TELEMETRY_ON: ours(server)}
    results = _interleave({name: c.follow for name, c in clients.items()}, rounds, n)
    for client in clients.values():
        client.close()
    done = subprocess.run(
        [sys.executable, "-c", _SDK_CHILD.format(here=HERE, rounds=rounds, n=n)],
        capture_output=True,
        text=True,
        env=_child_env(server),
    )
    if done.returncode == 0:
        results.update(json.loads(done.stdout.splitlines()[-1]))
    else:
        print(f"  (with an SDK: not measured: {done.stderr.strip().splitlines()[-1]})")
    report(
        f"[{server.name}] sequential follow, telemetry",
        "µs per follow",
        results,
        True,
        TELEMETRY_OFF,
        unit_of="blocks",
    )
    out[f"telemetry/{server.name}"] = results


_SDK_CHILD = """
import json, sys
sys.path.insert(0, {here!r})
import bench
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

class Drop(SpanExporter):
    def export(self, spans):
        return SpanExportResult.SUCCESS

provider = TracerProvider()
provider.add_span_processor(BatchSpanProcessor(Drop()))
trace.set_tracer_provider(provider)
server = bench.child_server()
off, on = bench.ours(server, telemetry=False), bench.ours(server, telemetry=True)
results = bench._interleave(
    {{bench.TELEMETRY_OFF + " (same process)": off.follow, bench.TELEMETRY_SDK: on.follow}},
    {rounds}, {n},
)
off.close(); on.close(); provider.shutdown()
print(json.dumps(results))
"""


# -- async ----------------------------------------------------------------------------------------

AsyncFollow = Callable[[int], Awaitable[None]]


async def ours_async(server: Server, concurrency: int) -> tuple[AsyncFollow, Callable[[], Any]]:
    import recurring_payments as rp

    client = rp.AsyncClient(
        server.base,
        credentials=rp.AppCredentials(*server.app),
        profile=server.profile,
        rel_namespace=server.base + "/alps#",
        **({"verify": server.ca} if server.ca else {}),
    )
    link = await client.bench_mandate.link()

    async def follow(i: int) -> None:
        mandate = await link.get(id=IDS[i & 15])
        if not (mandate["status"] and mandate.creditor.href):
            raise AssertionError(mandate)

    return follow, client.aclose


async def aiohttp_async(server: Server, concurrency: int) -> tuple[AsyncFollow, Callable[[], Any]]:
    import aiohttp
    import uritemplate

    token = _token_httpx(server)
    session = aiohttp.ClientSession(
        headers={"Accept": server.accept, "Authorization": f"Bearer {token}"},
        connector=aiohttp.TCPConnector(limit=concurrency, ssl=server.ssl()),
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

    token = _token_httpx(server)
    client = httpx.AsyncClient(
        headers={"Accept": server.accept, "Authorization": f"Bearer {token}"},
        verify=server.ssl(),
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
    import uritemplate
    from pyreqwest.client import ClientBuilder

    token = _token_httpx(server)
    headers = {"Accept": server.accept, "Authorization": f"Bearer {token}"}
    builder = (
        ClientBuilder().default_headers(headers).error_for_status(True).max_connections(concurrency)
    )
    if server.ca:
        with open(server.ca, "rb") as pem:
            builder = builder.add_root_certificate_pem(pem.read())
    client = builder.build()
    root = await (await client.get(server.base + "/").build().send()).json()
    template = uritemplate.URITemplate(_template(root, "bench-mandate"))

    async def follow(i: int) -> None:
        reply = await client.get(template.expand(id=IDS[i & 15])).build().send()
        check(await reply.json())

    return follow, client.close


async def niquests_async(server: Server, concurrency: int) -> tuple[AsyncFollow, Callable[[], Any]]:
    import niquests
    import uritemplate

    session = niquests.AsyncSession(pool_connections=1, pool_maxsize=concurrency)
    # verify= on each call: a session's own verify gives way to REQUESTS_CA_BUNDLE and
    # CURL_CA_BUNDLE when they are set (trust_env), as in many CI environments.
    get = functools.partial(session.get, verify=server.verify)
    reply = await session.post(
        server.base + "/oauth/token",
        data={"grant_type": "client_credentials", "scope": "api"},
        auth=server.app,
        headers={"Accept": "application/json"},
        verify=server.verify,
    )
    reply.raise_for_status()
    token = reply.json()["access_token"]
    session.headers.update({"Accept": server.accept, "Authorization": f"Bearer {token}"})
    root = (await get(server.base + "/")).json()
    template = uritemplate.URITemplate(_template(root, "bench-mandate"))

    async def follow(i: int) -> None:
        reply = await get(template.expand(id=IDS[i & 15]))
        reply.raise_for_status()
        check(reply.json())

    return follow, session.close


async def rnet_async(server: Server, concurrency: int) -> tuple[AsyncFollow, Callable[[], Any]]:
    import pathlib

    import rnet
    import uritemplate

    token = _token_httpx(server)
    client = rnet.Client(
        default_headers={"Accept": server.accept, "Authorization": f"Bearer {token}"},
        pool_max_idle_per_host=concurrency,
        **({"verify": pathlib.Path(server.ca)} if server.ca else {}),
    )

    async def get(url: str) -> Any:
        reply = await client.get(url)
        if reply.status != 200:
            raise AssertionError(f"{url}: {reply.status}")
        return await reply.json()

    template = uritemplate.URITemplate(_template(await get(server.base + "/"), "bench-mandate"))

    async def follow(i: int) -> None:
        check(await get(template.expand(id=IDS[i & 15])))

    async def close() -> None:  # rnet's client has no close: its pool goes with it
        pass

    return follow, close


ASYNC_CLIENTS = {
    "recurring_payments": ours_async,
    "aiohttp": aiohttp_async,
    "httpx": httpx_async,
    "niquests": niquests_async,
    "rnet": rnet_async,
    "pyreqwest": pyreqwest_async,
}


async def _drive(follow: AsyncFollow, concurrency: int, seconds: float) -> float:
    """Requests per second of `concurrency` workers following for `seconds`."""
    done = 0
    deadline = time.perf_counter() + seconds

    async def worker(w: int) -> None:
        # At least one follow each: on a loaded host a worker may first run after the deadline,
        # and a round with no follow at all has no rate.
        nonlocal done
        i = w
        while True:
            await follow(i)
            i += 1
            done += 1
            if time.perf_counter() >= deadline:
                break

    start = time.perf_counter()
    await asyncio.gather(*(worker(w) for w in range(concurrency)))
    return done / (time.perf_counter() - start)


async def _async_main(server: Server, rounds: int, seconds: float, out: dict[str, Any]) -> None:
    for concurrency in (32, 256):
        clients = {}
        for name, make in ASYNC_CLIENTS.items():
            try:
                clients[name] = await make(server, concurrency)
            except ImportError as error:
                installed(name, error)
        results: dict[str, list[float]] = {name: [] for name in clients}
        failed: dict[str, str] = {}
        for follow, _ in clients.values():
            await _drive(follow, concurrency, seconds / 2)  # warm-up: connections, token
        for r in range(rounds):
            for name in rotated(list(clients), r):
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
            placed(f"[{server.name}] async follows at concurrency {concurrency}"),
            "requests/s",
            results,
            False,
        )
        out[f"async-c{concurrency}/{server.name}"] = results


def async_throughput(server: Server, rounds: int, seconds: float, out: dict[str, Any]) -> None:
    asyncio.run(_async_main(server, rounds, seconds, out))


# -- threads --------------------------------------------------------------------------------------


def threads(server: Server, rounds: int, per_thread: int, out: dict[str, Any]) -> None:
    """8 threads: sharing one of our clients, or each with its own client of a sync peer (a
    requests session, a pycurl handle, ...: none of them promises more across threads)."""
    n_threads = 8
    shared = ours(server)
    owned: dict[str, list[Sync]] = {}
    for name, make in SYNC_CLIENTS.items():
        if name == OURS:
            continue
        try:
            owned[name] = [make(server) for _ in range(n_threads)]
        except ImportError as error:
            installed(name, error)
    plans: dict[str, list[Callable[[int], None]]] = {
        OURS: [shared.follow] * n_threads,
        **{name: [c.follow for c in clients] for name, clients in owned.items()},
    }

    def run(name: str) -> float:
        follows = plans[name]
        count = max(per_thread // 4, 1) if name in SLOW else per_thread  # as the sequential's
        barrier = threading.Barrier(n_threads + 1)

        def work(follow: Callable[[int], None]) -> None:
            barrier.wait()
            for i in range(count):
                follow(i)

        workers = [threading.Thread(target=work, args=(f,)) for f in follows]
        for w in workers:
            w.start()
        barrier.wait()
        start = time.perf_counter()
        for w in workers:
            w.join()
        return n_threads * count / (time.perf_counter() - start)

    results: dict[str, list[float]] = {name: [] for name in plans}
    for name in plans:
        run(name)  # warm-up: one connection per thread
    for r in range(rounds):
        for name in rotated(list(plans), r):
            results[name].append(run(name))
    shared.close()
    for clients in owned.values():
        for client in clients:
            client.close()
    report(f"[{server.name}] 8 threads", "requests/s", results, False)
    out[f"threads/{server.name}"] = results


# -- memory and import time -----------------------------------------------------------------------

HERE = os.path.dirname(os.path.abspath(__file__))


def _child_env(server: Server) -> dict[str, str]:
    """The environment of a child process that benchmarks ``server`` (see child_server)."""
    return dict(
        os.environ,
        BENCH_CHILD_SERVER=json.dumps(
            [server.name, server.base, server.profile, list(server.app), server.ca]
        ),
    )


def child_server() -> Server:
    # [name, base, profile, [app, secret]], and the CA bundle of an HTTPS server if any
    name, base, profile, app, *ca = json.loads(os.environ["BENCH_CHILD_SERVER"])
    return Server(name, base, profile, (app[0], app[1]), *ca)


_RSS_CHILD = """
import sys
sys.path.insert(0, {here!r})
import bench
client = bench.ours(bench.child_server())

def rss():
    with open("/proc/self/status") as status:
        return next(int(l.split()[1]) for l in status if l.startswith("VmRSS")) / 1024

for i in range(1_000):
    client.follow(i)
first = rss()
for i in range({n} - 1_000):
    client.follow(i)
print(first, rss())
client.close()
"""
RSS_FLAT_MB = 1.0  # "flat": what 99,000 more follows may add


def memory(server: Server, n: int, out: dict[str, Any]) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _RSS_CHILD.format(here=HERE, n=n)],
        check=True,
        capture_output=True,
        text=True,
        env=_child_env(server),
    )
    first, last = map(float, done.stdout.split())
    print(f"\n[{server.name}] RSS after 1,000 follows {first:.1f} MB, after {n:,} {last:.1f} MB:")
    print(f"  growth {last - first:+.2f} MB (target: flat, < {RSS_FLAT_MB} MB)")
    out[f"rss/{server.name}"] = {"after_1000": first, f"after_{n}": last, "n": n}


IMPORT_TARGET_MS = 60.0


def import_time(rounds: int, out: dict[str, Any]) -> None:
    # Wall and CPU time of the import: on a loaded host the wall clock counts the time spent
    # waiting for a core, so the target is judged on CPU time (the two agree on a quiet host).
    code = (
        "import time; t, c = time.perf_counter(), time.process_time(); import recurring_payments; "
        "print((time.perf_counter() - t) * 1e3, (time.process_time() - c) * 1e3)"
    )
    # As after `pip install` (which compiles the modules): bytecode written once, then read.
    # PYTHONDONTWRITEBYTECODE in the caller's environment would time the compiler instead.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, env=env)
    both = [
        subprocess.run(
            [sys.executable, "-c", code], check=True, capture_output=True, text=True, env=env
        ).stdout.split()
        for _ in range(rounds)
    ]
    times, cpu = [float(w) for w, _ in both], [float(c) for _, c in both]
    print(
        f"\nimport recurring_payments: median {median(times):.1f} ms wall "
        f"[{min(times):.1f}..{max(times):.1f}], {median(cpu):.1f} ms CPU "
        f"[{min(cpu):.1f}..{max(cpu):.1f}] over {rounds} fresh processes "
        f"(target < {IMPORT_TARGET_MS:.0f} ms)"
    )
    # Where it goes: `python -X importtime`, the largest cumulative times under our package.
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import recurring_payments"],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    rows = []
    for line in done.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            rows.append((int(parts[1]), parts[2].rstrip()))
    for cumulative, name in sorted(rows, reverse=True)[:8]:
        print(f"  {cumulative / 1e3:7.1f} ms cumulative  {name}")
    out["import_ms"] = times
    out["import_cpu_ms"] = cpu


COLD_PYTHON = "python alone (reference)"


def cold_start(server: Server, rounds: int, out: dict[str, Any]) -> None:
    """ms from a fresh process' start to its exit, after importing a client, getting a token,
    the entry point and one follow (benches/cold_start.py); interleaved, rotated each round."""
    import importlib.util

    import cold_start as cold

    env = {k: v for k, v in _child_env(server).items() if k != "PYTHONDONTWRITEBYTECODE"}
    script = os.path.join(HERE, "cold_start.py")
    names = []
    for name in cold.CLIENTS:
        missing = [m for m in cold.NEEDS[name] if importlib.util.find_spec(m) is None]
        if missing:
            print(f"  ({name}: not installed ({', '.join(missing)}); left out of the cold start)")
            continue
        names.append(name)

    def run(name: str) -> float:
        start = time.perf_counter()
        subprocess.run([sys.executable, script, name], check=True, env=env)
        return (time.perf_counter() - start) * 1e3

    for name in names:  # bytecode written once, as after `pip install`
        run(name)
    results: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        for name in rotated(names, r):
            results[name].append(run(name))
    report(f"[{server.name}] cold start", "ms per process", results, True)
    out[f"cold/{server.name}"] = results


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
    peers = [
        "recurring-payments",
        "requests",
        "uritemplate",
        "httpx",
        "urllib3",
        "niquests",
        "urllib3-future",
        "pycurl",
        "orjson",
        "aiohttp",
        "rnet",
        "pyreqwest",
    ]
    return {
        "commit": _commit(),
        "machine": f"{os.cpu_count()} x {cpu}, {platform.platform()}",
        "python": sys.version.split()[0],
        "packages": ", ".join(f"{name} {version(name)}" for name in peers),
        "nginx": _nginx_version(),
        "load average": " ".join(f"{x:.2f}" for x in os.getloadavg()),
    }


def _nginx_version() -> str:
    try:  # `nginx -v` writes "nginx version: nginx/1.22.1" to stderr
        done = subprocess.run(["nginx", "-v"], capture_output=True, text=True)
    except OSError:
        return "missing"
    return done.stderr.strip().rpartition("/")[2] or "?"


def _commit() -> str:
    """The commit measured, "+ changes" when the code differs from it ("?" outside git)."""
    git = ["git", "-C", os.path.dirname(HERE)]
    code = ["crates", "python", "benches", "Cargo.toml", "Cargo.lock", "pyproject.toml"]
    try:
        head = subprocess.run(
            [*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        )
        changed = subprocess.run(
            [*git, "status", "--porcelain", "--untracked-files=no", "--", *code],
            capture_output=True,
            text=True,
        )
    except OSError:
        return "?"
    if head.returncode != 0:
        return "?"
    return head.stdout.strip() + (" + changes" if changed.stdout.strip() else "")


# -- the table: every target, and what telemetry costs ---------------------------------------------

SERVER_NAMES = ("sandbox", "nginx", "nginx-https")
# Over HTTPS only the workloads of the comparison table run: the others ask nothing of TLS.
TLS_WORKLOADS = ("sequential", "collection", "async")

# (workload key prefix, row title, lower is better)
ROWS = [
    ("sequential", "sequential, µs/follow", True),
    ("collection-mandates", "collection, 5,000 mandates, ms/fetch", True),
    ("collection-wide", "collection, 5,000 wide items (8 fields, 2 links), ms/fetch", True),
    ("collection-wide-all", "the same, every field read, ms/fetch", True),
    ("collection-export", "the same, exported (state dict + self href), ms/fetch", True),
    ("async-c32", "async c=32, req/s", False),
    ("async-c256", "async c=256, req/s", False),
    ("threads", "8 threads (ours shared, a peer's client each), req/s", False),
    ("cold", "cold start (import, token, entry point, one follow), ms", True),
]
COLUMNS = [
    ("requests", ("requests+uritemplate",)),
    ("httpx", ("httpx",)),
    ("urllib3", ("urllib3",)),
    ("niquests", ("niquests",)),
    ("pycurl + orjson", ("pycurl+orjson",)),
    ("pyreqwest", ("pyreqwest",)),
    ("aiohttp", ("aiohttp",)),
    ("rnet", ("rnet",)),
    ("Rust floor", (FLOOR,)),
    ("Rust hyper-util floor", (FLOOR_HYPER,)),
    ("Rust ureq floor", (FLOOR_UREQ,)),
    ("Rust, blocking socket (reference)", (FLOOR_BLOCKING,)),
    ("Python alone (reference)", (COLD_PYTHON,)),
]
# The Rust programs and the bare interpreter are references, no peer: no target counts them.
REFERENCES = (FLOOR, FLOOR_HYPER, FLOOR_UREQ, FLOOR_BLOCKING, COLD_PYTHON)


def _peers(ratios: dict[str, float]) -> list[float]:
    return [r for name, r in ratios.items() if name not in REFERENCES and r == r]  # not NaN


def _every_peer(at_least: float) -> Callable[[dict[str, float]], bool]:
    return lambda r: bool(_peers(r)) and min(_peers(r)) >= at_least


def _sequential_target() -> tuple[str, Callable[[dict[str, float]], bool]]:
    # CPU work alone (one vCPU) is where ours can lead by most; as placed, every client also
    # pays the wake-up of an idle vCPU per round trip (BENCHMARKS.md: "One vCPU, and as placed").
    if PLACEMENT == "one vCPU":
        return f"≥ 1.5{X} every peer", _every_peer(1.5)
    return f"≥ 1.25{X} every peer", _every_peer(1.25)


# workload -> (target text, check(ratios) -> met); a ratio is how many times faster ours is.
X, DASH = "\u00d7", "\u2013"  # multiplication sign, en dash
TARGETS: dict[str, tuple[str, Callable[[dict[str, float]], bool]]] = {
    "collection-mandates": (f"≥ 2{X} every peer", _every_peer(2)),
    "collection-wide": (f"≥ 2{X} every peer", _every_peer(2)),
    "collection-wide-all": (f"≥ 1.5{X} every peer", _every_peer(1.5)),
    "collection-export": (f"≥ 1.5{X} every peer", _every_peer(1.5)),
    "async-c32": (
        f"≥ 3{X} aiohttp, ≥ 2.5{X} pyreqwest",
        lambda r: r.get("aiohttp", 0) >= 3 and r.get("pyreqwest", 0) >= 2.5,
    ),
    "cold": (f"≥ 2.5{X} requests", lambda r: r.get("requests+uritemplate", 0) >= 2.5),
}


def _fmt(value: float) -> str:
    return f"{value:,.0f}" if value >= 1000 else f"{value:.1f}"


def table(out: dict[str, Any]) -> str:
    """The results as BENCHMARKS.md's table, with each target and whether it is met. Values
    are medians; a ratio is the median of the rounds' ratios (see ``paired``)."""
    head = ["workload", "server", "ours", *(c for c, _ in COLUMNS), "target", "met"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for key, title, lower in ROWS:
        for name in SERVER_NAMES:
            results = out.get(f"{key}/{name}")
            if not results:
                continue
            ours_m = median(results[OURS])
            cells, ratios = [], {}
            for _, names in COLUMNS:
                found = next((n for n in names if n in results), None)
                if found is None or not results[found]:
                    cells.append(DASH)
                    continue
                m = median(results[found])
                if found in REFERENCES:  # ours' time over the reference's
                    ratios[found] = 1 / paired(results[OURS], results[found], True)
                    cells.append(f"{_fmt(m)} (ours {ratios[found]:.2f}{X} its time)")
                else:
                    ratios[found] = paired(results[OURS], results[found], lower)
                    cells.append(f"{_fmt(m)} ({ratios[found]:.2f}{X})")
            target, met = (
                _sequential_target() if key == "sequential" else TARGETS.get(key, ("", None))  # type: ignore[arg-type]
            )
            verdict = "" if met is None else ("met" if met(ratios) else "**not met**")
            row = [placed(title), name, f"**{_fmt(ours_m)}**", *cells, target, verdict]
            lines.append("| " + " | ".join(row) + " |")
    others = _other_targets(out)
    if others:
        lines += ["", "| target | measured | met |", "|---|---|---|", *others]
    return "\n".join(lines)


def _other_targets(out: dict[str, Any]) -> list[str]:
    rows = []
    for name in SERVER_NAMES:
        rss = out.get(f"rss/{name}")
        if rss:
            last = rss[f"after_{rss['n']}"]
            growth = last - rss["after_1000"]
            rows.append(
                f"| RSS flat from 1k to {rss['n'] // 1000}k follows ({name}; < {RSS_FLAT_MB} MB) "
                f"| {rss['after_1000']:.1f} → {last:.1f} MB ({growth:+.2f} MB) "
                f"| {'met' if growth < RSS_FLAT_MB else '**not met**'} |"
            )
    if "import_ms" in out:
        ms = median(out["import_ms"])
        cpu = median(out.get("import_cpu_ms") or out["import_ms"])
        rows.append(
            f"| `import recurring_payments` < {IMPORT_TARGET_MS:.0f} ms (median, fresh processes; "
            f"judged on CPU time) | {cpu:.1f} ms CPU ({ms:.1f} ms wall) "
            f"| {'met' if cpu < IMPORT_TARGET_MS else '**not met**'} |"
        )
    for name in SERVER_NAMES:
        tele = out.get(f"telemetry/{name}")
        if tele:
            off, on = median(tele[TELEMETRY_OFF]), median(tele[TELEMETRY_ON])
            # paired(off, on) is the median of the rounds' on / off: what telemetry costs.
            cost = paired(tele[TELEMETRY_OFF], tele[TELEMETRY_ON], True) - 1
            sdk = ""
            if TELEMETRY_SDK in tele:
                base = tele[TELEMETRY_OFF + " (same process)"]
                sdk = f"; with an SDK {paired(base, tele[TELEMETRY_SDK], True) - 1:+.1%}"
            rows.append(
                f"| telemetry on, no SDK, within 3% of off ({name}) "
                f"| {on:.1f} vs {off:.1f} µs ({cost:+.1%}){sdk} "
                f"| {'met' if cost <= 0.03 else '**not met**'} |"
            )
    return rows


# -- main -----------------------------------------------------------------------------------------

WORKLOADS = (
    "sequential",
    "collection",
    "async",
    "threads",
    "telemetry",
    "memory",
    "cold",
    "import",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes: a smoke test")
    parser.add_argument("--only", default=",".join(WORKLOADS), help="comma-separated workloads")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--json", help="also write every measurement to this file")
    parser.add_argument("--placement", default="", help='how the run is placed: "one vCPU"')
    args = parser.parse_args()
    global PLACEMENT
    PLACEMENT = args.placement
    only = set(args.only.split(","))
    rounds = 1 if args.quick else args.rounds
    scale = 0.01 if args.quick else 1.0
    out: dict[str, Any] = {"environment": environment()}
    if PLACEMENT:
        out["environment"]["placement"] = PLACEMENT
    print("\n".join(f"# {k}: {v}" for k, v in out["environment"].items()))
    found = servers()
    if not found:
        sys.exit("no server: run benches/run.sh (it sets BENCH_SANDBOX / BENCH_NGINX)")
    for server in found:
        run = only if not server.ca else only & set(TLS_WORKLOADS)
        if "sequential" in run:
            sequential(server, rounds, int(2_000 * scale) or 20, out)
        if "collection" in run:
            collection(server, rounds, 3 if not args.quick else 1, out)
        if "async" in run:
            async_throughput(server, rounds, 1.0 if not args.quick else 0.2, out)
        if "threads" in run:
            threads(server, rounds, int(300 * scale) or 10, out)
        if "telemetry" in run:
            telemetry(server, rounds, int(2_000 * scale) or 20, out)
        if "memory" in run:
            memory(server, 100_000 if not args.quick else 2_000, out)
        if "cold" in run:
            cold_start(server, 1 if args.quick else 3 * rounds, out)
    if "import" in only:
        import_time(rounds if args.quick else 11, out)
    print("\n" + table(out))
    if args.json:
        with open(args.json, "w") as file:
            json.dump(out, file, indent=1)


if __name__ == "__main__":
    main()
