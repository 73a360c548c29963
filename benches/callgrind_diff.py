"""Instructions per operation, by function, from two callgrind runs of benches/profile.py: one
with N operations and one with none (start-up, imports and warm-up cancel out).

    python benches/callgrind_diff.py BASE.cg RUN.cg N

Prints the total per operation, the crossings from Python into Rust (every ``__pymethod_`` /
``__pyfunction_`` entry, inclusive), the largest inclusive costs in our extension, the
exclusive cost by component (which library the instructions ran in), and the largest
exclusive costs. Instruction counts are deterministic; the kernel's share (socket I/O) is not
counted by callgrind.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import defaultdict

LINE = re.compile(r"^\s*([\d,]+) \([^)]*\)\s+(.*?):(.*?)(?: \[(.*)\])?$")
EXTENSION = "_core.abi3.so"
# Component of an exclusive cost, by the first match in the symbol (or the object file).
COMPONENTS = [
    ("jiter (JSON)", ("jiter::",)),
    (
        "HTTP: hyper, h2, http, httparse",
        ("hyper::", "hyper_util::", "h2::", "http::", "httparse::"),
    ),
    ("reqwest", ("reqwest::",)),
    ("tokio, mio", ("tokio::", "mio::")),
    ("url (resolution, parsing)", ("url::", "idna::", "form_urlencoded::", "percent_encoding::")),
    ("templates (rp_core::template, std-uritemplate)", ("rp_core::template", "std_uritemplate")),
    ("pyo3 (the crossings' glue)", ("pyo3::", "pyo3_ffi::")),
    ("rp_core (other)", ("rp_core::",)),
    ("rp_python (other)", ("rp_python::",)),
    ("Rust std, alloc, hashing", ("core::", "alloc::", "std::", "<core::", "<alloc::", "<std::")),
]


def annotate(path: str, inclusive: bool) -> dict[str, tuple[int, str]]:
    """function -> (instructions, object file)."""
    text = subprocess.run(
        [
            "callgrind_annotate",
            f"--inclusive={'yes' if inclusive else 'no'}",
            "--threshold=100",
            path,
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    costs: dict[str, tuple[int, str]] = {}
    for line in text.splitlines():
        match = LINE.match(line)
        if match and match.group(2) != "PROGRAM TOTALS":
            count, _, function, obj = match.groups()
            # Recursion levels (f'2, f'3): one function. Exclusive costs add up; an inclusive
            # cost of the outer level holds the inner ones, so the largest is the function's.
            function = re.sub(r"'\d+$", "", function)
            old, cost = costs.get(function, (0, "")), int(count.replace(",", ""))
            costs[function] = (max(old[0], cost) if inclusive else old[0] + cost, obj or old[1])
    return costs


def total(path: str) -> int:
    text = subprocess.run(
        ["callgrind_annotate", "--threshold=100", path], check=True, capture_output=True, text=True
    ).stdout
    match = re.search(r"^\s*([\d,]+) \S* *PROGRAM TOTALS", text, re.M) or re.search(
        r"([\d,]+) \(100.0%\)\s+PROGRAM TOTALS", text
    )
    if match is None:
        raise SystemExit(f"no total in {path}")
    return int(match.group(1).replace(",", ""))


def diff(base: str, run: str, inclusive: bool, n: int) -> dict[str, tuple[float, str]]:
    before, after = annotate(base, inclusive), annotate(run, inclusive)
    return {
        f: ((cost - before.get(f, (0, ""))[0]) / n, obj)
        for f, (cost, obj) in after.items()
        if cost != before.get(f, (0, ""))[0]
    }


def component(function: str, obj: str) -> str:
    for name, prefixes in COMPONENTS:
        if any(p in function for p in prefixes):
            return name
    if "libpython" in obj or obj.endswith("python3.11"):
        return "CPython (interpreter, objects, dicts, GC)"
    if "libc.so" in obj:
        return "libc (malloc, free, memcpy)"
    return "other: " + (obj.rsplit("/", 1)[-1] or "?")


def main(base: str, run: str, n: int) -> None:
    per_op = (total(run) - total(base)) / n
    print(f"total: {per_op:,.0f} instructions per operation")
    inclusive = diff(base, run, True, n)
    ours = {f: c for f, (c, obj) in inclusive.items() if obj.endswith(EXTENSION)}
    entries = {f: c for f, c in ours.items() if "__pymethod_" in f or "__pyfunction_" in f}
    print(f"\ncrossings into Rust (inclusive, per operation): {sum(entries.values()):,.0f}")
    for f, c in sorted(entries.items(), key=lambda x: -x[1]):
        if c >= per_op * 0.002:
            print(f"  {c:12,.0f}  {f}")
    print("\nlargest inclusive costs in the extension, per operation:")
    for f, c in sorted(ours.items(), key=lambda x: -x[1])[:40]:
        print(f"  {c:12,.0f}  {f[:150]}")
    exclusive = diff(base, run, False, n)
    groups: dict[str, float] = defaultdict(float)
    for f, (c, obj) in exclusive.items():
        groups[component(f, obj)] += c
    print("\nexclusive cost by component, per operation:")
    for name, c in sorted(groups.items(), key=lambda x: -x[1]):
        print(f"  {c:12,.0f}  {c / per_op:6.1%}  {name}")
    print("\nlargest exclusive costs, per operation:")
    for f, (c, obj) in sorted(exclusive.items(), key=lambda x: -x[1][0])[:30]:
        print(f"  {c:12,.0f}  {f[:120]}  [{obj.rsplit('/', 1)[-1]}]")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
