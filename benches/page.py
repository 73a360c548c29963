"""BENCHMARKS.md's tables, from the JSON of one `make bench`: the run as placed and the run on
one vCPU (``bench.py --json``). Every number on the page comes from these two files, so the page
can be checked against them, or rebuilt after a new run.

    python benches/page.py AS_PLACED.json ONE_VCPU.json     (make bench writes both to
                                                              target/bench/ and runs this)

Values are medians of the rounds (of the blocks, for the sequential follow); a ratio is the
median of the rounds' ratios (bench.paired): for a peer how many times faster ours is, for a
reference (a Rust program, the bare interpreter) how many times its time ours takes.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench
from bench import COLD_PYTHON, DASH, FLOOR, FLOOR_BLOCKING, FLOOR_HYPER, FLOOR_UREQ, OURS, X

Results = dict[str, Any]

# The sync peers, as both the follow table and the cold-start table name them.
SYNC_PEERS = [
    ("requests+uritemplate", "`requests` + `uritemplate`"),
    ("httpx", "`httpx`"),
    ("urllib3", "`urllib3`"),
    ("niquests", "`niquests`"),
    ("pycurl+orjson", "`pycurl` + `orjson`"),
    ("pyreqwest", "`pyreqwest`"),
]
SYNC_ROWS = [
    (OURS, "`recurring_payments` `Client`"),
    *SYNC_PEERS,
    (FLOOR, "Rust `reqwest` (reference)"),
    (FLOOR_HYPER, "Rust hyper-util client (reference)"),
    (FLOOR_UREQ, "Rust `ureq`, blocking (reference)"),
    (FLOOR_BLOCKING, "Rust, blocking socket (reference)"),
]
ASYNC_ROWS = [
    (OURS, "`recurring_payments` `AsyncClient`"),
    ("aiohttp", "`aiohttp`"),
    ("httpx", "`httpx.AsyncClient`"),
    ("niquests", "`niquests.AsyncSession`"),
    ("rnet", "`rnet`"),
    ("pyreqwest", "`pyreqwest` async"),
]
# (server in the JSON, placement) -> the main table's column
COLUMNS = [
    ("nginx", "one vCPU", "nginx HTTP, one vCPU"),
    ("nginx", "as placed", "nginx HTTP, as placed"),
    ("nginx-https", "one vCPU", "nginx HTTPS, one vCPU"),
    ("nginx-https", "as placed", "nginx HTTPS, as placed"),
    ("sandbox", "one vCPU", "sandbox HTTP, one vCPU"),
    ("sandbox", "as placed", "sandbox HTTP, as placed"),
]
COLLECTION_ROWS = [
    ("mandates", "mandates, read `status`"),
    ("wide", "wide items, read `status`"),
    ("wide-all", "wide items, every field"),
    ("export", "wide items, exported (state dict + self href)"),
]
COLLECTION_PEERS = [
    ("requests+uritemplate", "requests + `json`"),
    ("httpx", "httpx"),
    ("urllib3", "urllib3 + `json`"),
    ("niquests", "niquests"),
    ("pycurl+orjson", "pycurl + orjson"),
    ("pyreqwest", "pyreqwest"),
]
SERVERS = [("sandbox", "sandbox"), ("nginx", "nginx"), ("nginx-https", "nginx, HTTPS")]
COLD_ROWS = [
    (COLD_PYTHON, "python alone (reference)"),
    (OURS, "`recurring_payments`"),
    *SYNC_PEERS,
]
REFERENCES = (FLOOR, FLOOR_HYPER, FLOOR_UREQ, FLOOR_BLOCKING, COLD_PYTHON)
MISSING = DASH


def fmt(value: float) -> str:
    if value != value:  # NaN: a peer that failed in every round
        return "failed"
    return f"{value:,.0f}" if value >= 1000 else f"{value:.1f}"


def ratio(results: Results, name: str, lower_is_better: bool) -> float:
    """For a peer how many times faster ours is; for a reference how many times its time ours
    takes."""
    r = bench.paired(results[OURS], results[name], lower_is_better)
    return 1 / r if name in REFERENCES else r


def cell(results: Results | None, name: str, lower_is_better: bool) -> str:
    if not results or not results.get(name):
        return MISSING
    value = fmt(bench.median(results[name]))
    if name == OURS:
        return f"**{value}**"
    r = ratio(results, name, lower_is_better)
    return f"{value} (ours {r:.2f}{X} its time)" if name in REFERENCES else f"{value} ({r:.2f}{X})"


def main_table(runs: dict[str, Results]) -> str:
    head = ["client", *(title for _, _, title in COLUMNS)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    sections: list[tuple[str, str, list[tuple[str, str]], bool]] = [
        ("**sync follow, µs**", "sequential", SYNC_ROWS, True),
        ("**async, 32 tasks, requests/s**", "async-c32", ASYNC_ROWS, False),
        ("**async, 256 tasks, requests/s**", "async-c256", ASYNC_ROWS, False),
    ]
    for heading, key, rows, lower in sections:
        lines.append("| " + " | ".join([heading] + [""] * len(COLUMNS)) + " |")
        for name, label in rows:
            cells = [
                cell(runs[placement].get(f"{key}/{server}"), name, lower)
                for server, placement, _ in COLUMNS
            ]
            lines.append("| " + " | ".join([label, *cells]) + " |")
    return "\n".join(lines)


def threads_table(run: Results) -> str:
    lines = ["| client | nginx HTTP | sandbox HTTP |", "|---|---|---|"]
    for name, label in SYNC_ROWS:
        if name in REFERENCES:
            continue
        cells = [cell(run.get(f"threads/{server}"), name, False) for server in ("nginx", "sandbox")]
        if name == OURS:
            label = "`recurring_payments`, one shared `Client`"
        lines.append("| " + " | ".join([label, *cells]) + " |")
    return "\n".join(lines)


def collection_table(run: Results) -> str:
    head = ["page", "server", "ours", *(label for _, label in COLLECTION_PEERS)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for which, page in COLLECTION_ROWS:
        for server, where in SERVERS:
            results = run.get(f"collection-{which}/{server}")
            if not results:
                continue
            cells = [
                cell(results, name, True) for name in (OURS, *(n for n, _ in COLLECTION_PEERS))
            ]
            lines.append("| " + " | ".join([page, where, *cells]) + " |")
    return "\n".join(lines)


def cold_table(run: Results) -> str:
    lines = ["| client | ms per process, sandbox | ms per process, nginx |", "|---|---|---|"]
    for name, label in COLD_ROWS:
        cells = [cell(run.get(f"cold/{server}"), name, True) for server in ("sandbox", "nginx")]
        lines.append("| " + " | ".join([label, *cells]) + " |")
    return "\n".join(lines)


def others(run: Results) -> str:
    lines = []
    for server in ("sandbox", "nginx"):
        rss = run.get(f"rss/{server}")
        if rss:
            last = rss[f"after_{rss['n']}"]
            lines.append(
                f"- RSS, {server}: {rss['after_1000']:.1f} MB after 1,000 follows, {last:.1f} MB "
                f"after {rss['n']:,} ({last - rss['after_1000']:+.2f} MB)."
            )
    for server in ("sandbox", "nginx"):
        tele = run.get(f"telemetry/{server}")
        if not tele:
            continue
        off, on = bench.median(tele[bench.TELEMETRY_OFF]), bench.median(tele[bench.TELEMETRY_ON])
        cost = bench.paired(tele[bench.TELEMETRY_OFF], tele[bench.TELEMETRY_ON], True) - 1
        line = f"- telemetry, {server}: no SDK {on:.1f} against {off:.1f} µs a follow ({cost:+.1%})"
        if bench.TELEMETRY_SDK in tele:
            base = tele[bench.TELEMETRY_OFF + " (same process)"]
            sdk = bench.paired(base, tele[bench.TELEMETRY_SDK], True) - 1
            with_sdk = bench.median(tele[bench.TELEMETRY_SDK])
            line += (
                f"; with the SDK and a batch processor {with_sdk:.1f} against "
                f"{bench.median(base):.1f} µs ({sdk:+.1%})"
            )
        lines.append(line + ".")
    if "import_ms" in run:
        cpu, wall = bench.median(run["import_cpu_ms"]), bench.median(run["import_ms"])
        lines.append(
            f"- `import recurring_payments`: {cpu:.1f} ms of CPU, {wall:.1f} ms wall "
            f"(median of {len(run['import_ms'])} fresh processes)."
        )
    return "\n".join(lines)


def _range(values: list[float]) -> str:
    low, high = min(values), max(values)
    return f"{low:.2f}{X}" if f"{low:.2f}" == f"{high:.2f}" else f"{low:.2f}-{high:.2f}{X}"


def _worst(
    runs: dict[str, Results], key: str, servers: list[str], placement: str, lower: bool
) -> tuple[float, str]:
    """The smallest ratio of ours to a peer (no reference) on ``servers``, and who."""
    worst, who = float("inf"), ""
    for server in servers:
        results = runs[placement].get(f"{key}/{server}") or {}
        for name in results:
            if name == OURS or name in REFERENCES or not results[name]:
                continue
            r = ratio(results, name, lower)
            if r == r and r < worst:
                worst, who = r, f"{name}, {server}"
    return worst, who


def targets(runs: dict[str, Results]) -> str:
    """Each target of the page's table that one run measures, with the ratio that decides it."""
    rows = ["| workload | target | measured | met |", "|---|---|---|---|"]

    def add(workload: str, target: str, measured: str, met: bool) -> None:
        rows.append(f"| {workload} | {target} | {measured} | {'met' if met else '**not met**'} |")

    every = ["nginx", "nginx-https", "sandbox"]
    for placement, at_least in (("one vCPU", 1.5), ("as placed", 1.25)):
        worst, who = _worst(runs, "sequential", every, placement, True)
        add(
            f"sequential follow, {placement}",
            f"≥ {at_least}{X} every peer",
            f"{worst:.2f}{X} the closest ({who})",
            worst >= at_least,
        )
    for placement in ("as placed", "one vCPU"):
        found: dict[str, list[float]] = {"aiohttp": [], "pyreqwest": []}
        for server in ("nginx", "nginx-https", "sandbox"):
            results = runs[placement].get(f"async-c32/{server}") or {}
            for name, values in found.items():
                if results.get(name):
                    values.append(ratio(results, name, False))
        if found["aiohttp"] and found["pyreqwest"]:
            add(
                f"async, 32 tasks, {placement}",
                f"≥ 3{X} aiohttp and ≥ 2.5{X} pyreqwest",
                f"{_range(found['aiohttp'])} aiohttp, {_range(found['pyreqwest'])} pyreqwest",
                min(found["aiohttp"]) >= 3 and min(found["pyreqwest"]) >= 2.5,
            )
    # One field an item, then every field read whole (each field and the self href; the
    # state dict and the self href of an export).
    for which, at_least in (("mandates", 2), ("wide", 2), ("wide-all", 1.5), ("export", 1.5)):
        worst, who = _worst(runs, f"collection-{which}", every, "as placed", True)
        if worst != float("inf"):
            add(
                f"5,000-item collection, {which}",
                f"≥ {at_least}{X} every peer",
                f"{worst:.2f}{X} the closest ({who})",
                worst >= at_least,
            )
    cold = [
        ratio(results, "requests+uritemplate", True)
        for server in ("sandbox", "nginx")
        if (results := runs["as placed"].get(f"cold/{server}"))
    ]
    if cold:
        add("cold start", f"≥ 2.5{X} requests", f"{_range(cold)} requests", min(cold) >= 2.5)
    run = runs["as placed"]
    rss = [run[f"rss/{server}"] for server in ("sandbox", "nginx") if f"rss/{server}" in run]
    growth = [r[f"after_{r['n']}"] - r["after_1000"] for r in rss]
    if growth:
        add(
            "memory",
            f"RSS flat over {rss[0]['n']:,} follows (< {bench.RSS_FLAT_MB:.0f} MB)",
            ", ".join(f"{g:+.2f} MB" for g in growth),
            max(growth) < bench.RSS_FLAT_MB,
        )
    if "import_cpu_ms" in run:
        cpu = bench.median(run["import_cpu_ms"])
        add(
            "import",
            f"< {bench.IMPORT_TARGET_MS:.0f} ms of CPU",
            f"{cpu:.1f} ms",
            cpu < bench.IMPORT_TARGET_MS,
        )
    costs = [
        bench.paired(tele[bench.TELEMETRY_OFF], tele[bench.TELEMETRY_ON], True) - 1
        for server in ("sandbox", "nginx")
        if (tele := run.get(f"telemetry/{server}"))
    ]
    if costs:
        add(
            "telemetry, no SDK",
            "within 3% of `telemetry=False`",
            ", ".join(f"{c:+.1%}" for c in costs),
            max(costs) <= 0.03,
        )
    return "\n".join(rows)


def environment(runs: dict[str, Results]) -> str:
    placed, one = (runs[p].get("environment", {}) for p in ("as placed", "one vCPU"))
    commits = {placed.get("commit", "?"), one.get("commit", "?")}
    return (
        f"Measured by `make bench` on commit {' and '.join(sorted(commits))}, release build, "
        f"on {placed.get('machine', '?')}, Python {placed.get('python', '?')}, "
        f"nginx {placed.get('nginx', '?')}. Load average (1, 5, 15 min) at the start of the run "
        f"as placed: {placed.get('load average', '?')}; of the run on one vCPU: "
        f"{one.get('load average', '?')}.\n\nVersions: {placed.get('packages', '?')}."
    )


SECTIONS: list[tuple[str, Callable[[dict[str, Results]], str]]] = [
    ("The run", environment),
    ("Every peer, one table", main_table),
    ("Eight threads (as placed)", lambda runs: threads_table(runs["as placed"])),
    ("The 5,000-item collection (as placed)", lambda runs: collection_table(runs["as placed"])),
    ("The cold start (as placed)", lambda runs: cold_table(runs["as placed"])),
    ("Memory, telemetry, import", lambda runs: others(runs["as placed"])),
    ("Targets", targets),
]


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    runs: dict[str, Results] = {}
    for placement, path in zip(("as placed", "one vCPU"), sys.argv[1:], strict=True):
        with open(path) as file:
            runs[placement] = json.load(file)
    for title, render in SECTIONS:
        print(f"### {title}\n\n{render(runs)}\n")


if __name__ == "__main__":
    main()
