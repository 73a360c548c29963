"""The rules of ARCHITECTURE.md that a reader relies on, checked on the source tree: the core
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
