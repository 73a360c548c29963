"""The rules of docs/design.md that a reader relies on, checked on the source tree: the core
and the sandbox know nothing of Python, the bindings nothing of HAL (a source checkout only:
the installed wheel has no Rust sources)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CRATES = ROOT / "crates"

pytestmark = pytest.mark.skipif(not CRATES.is_dir(), reason="needs the source tree")


def sources(crate: str) -> list[Path]:
    files = sorted((CRATES / crate).rglob("*.rs"))
    assert files, f"no Rust sources in crates/{crate}"
    return files


@pytest.mark.parametrize("crate", ["core", "sandbox"])
def test_only_the_bindings_import_pyo3(crate: str) -> None:
    offenders = [str(p) for p in sources(crate) if re.search(r"\bpyo3\b", p.read_text())]
    manifest = (CRATES / crate / "Cargo.toml").read_text()
    assert not offenders and "pyo3" not in manifest, offenders


def test_the_bindings_know_nothing_of_hal() -> None:
    # The HAL model is the core's: field names of HAL are read through its accessors.
    offenders = [
        f"{p.name}:{n}"
        for p in sources("python")
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if re.search(r'"_(links|embedded)"', line) and not line.lstrip().startswith("//")
    ]
    assert not offenders, offenders


def _modules(crate: str) -> dict[tuple[str, ...], Path]:
    """Every module of a crate's sources by path (``("hal", "index")``), from its files."""
    src = CRATES / crate / "src"
    modules: dict[tuple[str, ...], Path] = {}
    for path in src.rglob("*.rs"):
        parts = path.relative_to(src).with_suffix("").parts
        if parts in (("lib",), ("main",)):
            continue
        modules[parts[:-1] if parts[-1] == "mod" else parts] = path
    return modules


def _references(text: str) -> list[tuple[str, str]]:
    """The first segment of each ``super::…`` and ``crate::…`` path in ``text``, grouped
    ``use super::{a, b::c}`` forms included, as ``("super" or "crate", name)``; comments and
    the inline ``mod tests`` are left out."""
    code = text.split("#[cfg(test)]")[0]
    code = "\n".join(line.split("//")[0] for line in code.splitlines())
    found = [(m[1], m[2]) for m in re.finditer(r"\b(super|crate)::(\w+)", code)]
    for m in re.finditer(r"\b(super|crate)::\{", code):
        depth, start, names = 0, m.end(), []
        for i in range(start, len(code)):
            if code[i] == "{":
                depth += 1
            elif code[i] == "}":
                if depth == 0:
                    inner = code[start:i]
                    break
                depth -= 1
        else:
            continue
        depth, item = 0, ""
        for ch in inner + ",":
            if ch in "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            if ch == "," and depth == 0:
                names.append(item.strip().split("::")[0])
                item = ""
            else:
                item += ch
        found += [(m[1], name) for name in names if name]
    return found


def _under(parent: tuple[str, ...], module: tuple[str, ...]) -> tuple[str, ...] | None:
    """The child of ``parent`` that is ``module`` or holds it, if any."""
    depth = len(parent) + 1
    return module[:depth] if module[: len(parent)] == parent and len(module) >= depth else None


def _sibling_cycles(crate: str) -> list[list[str]]:
    """Circles among the modules of one parent (a module's submodules count as it): ``a``
    uses ``b`` and ``b`` uses ``a``, directly or through other siblings."""
    modules = _modules(crate)
    edges: dict[tuple[str, ...], set[tuple[str, ...]]] = {m: set() for m in modules}
    for module, path in modules.items():
        for kind, name in _references(path.read_text()):
            if kind == "crate":
                target: tuple[str, ...] = (name,)
            else:
                target = (*module[:-1], name)  # `super` is the parent, in `mod.rs` files too
            if target in modules:
                edges[module].add(target)
    cycles: list[list[str]] = []
    parents = {m[:-1] for m in modules} | {()}
    for parent in parents:
        siblings = {m for m in modules if m[:-1] == parent}

        graph: dict[tuple[str, ...], set[tuple[str, ...]]] = {s: set() for s in siblings}
        for source, targets in edges.items():
            a = _under(parent, source)
            for target in targets:
                b = _under(parent, target)
                if a is not None and b is not None and a != b and a in graph and b in graph:
                    graph[a].add(b)
        for start in sorted(graph):  # a path from `start` back to itself
            stack = [(start, [start])]
            seen: set[tuple[str, ...]] = set()
            while stack:
                node, trail = stack.pop()
                for nxt in graph[node]:
                    if nxt == start:
                        cycles.append(["::".join(m) for m in [*trail, start]])
                    elif nxt not in seen:
                        seen.add(nxt)
                        stack.append((nxt, [*trail, nxt]))
    return cycles


@pytest.mark.parametrize("crate", ["core", "python", "sandbox"])
def test_sibling_modules_use_each_other_in_one_direction(crate: str) -> None:
    # A type lives where its logic is, and what siblings share has a module of its own: no two
    # modules of one parent depend on each other, directly or in a circle (issue 26, step 5).
    assert _sibling_cycles(crate) == []
