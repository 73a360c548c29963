"""Check what `make dist` wrote: one sdist and the four abi3 Linux wheels.

    python scripts/check_dist.py dist/

The wheels: manylinux_2_17 (glibc 2.17) and musllinux_1_2 (musl 1.2), each for x86_64 and
aarch64 (the macOS and Windows wheels come from .github/workflows/release.yml). Each must be the
abi3 extension, stripped, with the metadata and a tag that `auditwheel show` agrees with. Runs
in .venv-dist (`auditwheel` beside it; stdlib otherwise). Prints what it measured and exits 1
naming every check that failed. The installed wheels are checked by scripts/check_wheel.sh
(x86_64), scripts/check_wheel_foreign.sh (aarch64; CPython 3.14 and 3.15) and
scripts/check_wheel_musl.sh (musl x86_64).
"""

from __future__ import annotations

import email.parser
import io
import re
import struct
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_WHEEL_BYTES = 12 * 10**6  # the "at most 12 MB"
MAX_SDIST_BYTES = 5 * 10**6  # ~0.4 MB today: more means a venv or build output slipped in
# The wheel's platform tags (as maturin writes them, the legacy alias first) -> auditwheel's.
PLATFORMS = {
    "manylinux2014_x86_64.manylinux_2_17_x86_64": "manylinux_2_17_x86_64",
    "manylinux2014_aarch64.manylinux_2_17_aarch64": "manylinux_2_17_aarch64",
    "musllinux_1_2_x86_64": "musllinux_1_2_x86_64",
    "musllinux_1_2_aarch64": "musllinux_1_2_aarch64",
}
PYTHONS = ("3.10", "3.11", "3.12", "3.13", "3.14", "3.15")
# What `pip install` of the sdist needs to build the same wheel.
SDIST_FILES = (
    "pyproject.toml",
    "Cargo.toml",
    "Cargo.lock",
    "README.md",
    "LICENSE",
    "crates/core/src/lib.rs",
    "crates/sandbox/src/lib.rs",
    "crates/python/Cargo.toml",
    "crates/python/src/lib.rs",
    # include_str! of the sandbox's recorded entry point (crates/sandbox/src/demo/mod.rs).
    "fixtures/recorded/entry-point.json",
    "python/recurring_payments/__init__.py",
    "python/recurring_payments/_core.pyi",
    "python/recurring_payments/py.typed",
)

failures: list[str] = []


def check(ok: bool, what: str) -> None:
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        failures.append(what)


def elf_sections(data: bytes) -> set[str]:
    """The section names of a 64-bit little-endian ELF file (enough to see if it is stripped)."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not a 64-bit little-endian ELF file")
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)

    def header(i: int) -> tuple[int, int, int]:
        name, _, _, _, offset, size = struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize)
        return name, offset, size

    _, str_off, str_size = header(shstrndx)
    strtab = data[str_off : str_off + str_size]
    names = (name for name, _, _ in map(header, range(shnum)))
    return {strtab[name : strtab.index(b"\0", name)].decode() for name in names}


def check_wheel(wheel: Path, tags: str, platform: str, version: str) -> None:
    print(f"\n{wheel.name}")
    size = wheel.stat().st_size
    check(size <= MAX_WHEEL_BYTES, f"wheel size {size / 1e6:.2f} MB <= 12 MB")

    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        info = f"recurring_payments-{version}.dist-info"
        core = "recurring_payments/_core.abi3.so"
        check(core in names, f"the extension is {core} (abi3)")
        for name in ("py.typed", "_core.pyi", "__init__.py", "pytest_plugin.py"):
            check(f"recurring_payments/{name}" in names, f"recurring_payments/{name} in the wheel")
        check(f"{info}/licenses/LICENSE" in names, "LICENSE in the wheel's dist-info")
        if core in names:
            so = zf.read(core)
            sections = elf_sections(so)
            stripped = not sections & {".symtab", ".debug_info", ".debug_line"}
            check(stripped, f"{core} stripped ({len(so) / 1e6:.2f} MB uncompressed)")
        meta = email.parser.Parser().parsestr(zf.read(f"{info}/METADATA").decode())
        wheel_file = zf.read(f"{info}/WHEEL").decode()

    check(meta["Version"] == version, f"Version {meta['Version']} is Cargo.toml's {version}")
    check(meta["Requires-Python"] == ">=3.10", f"Requires-Python {meta['Requires-Python']}")
    check(meta["License-Expression"] == "MIT", f"License-Expression {meta['License-Expression']}")
    classifiers = set(meta.get_all("Classifier") or [])
    for python in PYTHONS:
        check(
            f"Programming Language :: Python :: {python}" in classifiers,
            f"classifier Python {python}",
        )
    for tag in tags.split("."):
        check(f"Tag: cp310-abi3-{tag}\n" in wheel_file, f"WHEEL tag cp310-abi3-{tag}")

    auditwheel = Path(sys.executable).with_name("auditwheel")
    shown = subprocess.run(
        [str(auditwheel), "show", str(wheel)], capture_output=True, text=True, check=False
    )
    text = " ".join(shown.stdout.split())
    print(shown.stdout.rstrip())
    consistent = f'consistent with the following platform tag: "{platform}"' in text
    check(shown.returncode == 0 and consistent, f"auditwheel: consistent with {platform}")


def check_sdist(sdist: Path, version: str) -> None:
    expected = f"recurring_payments-{version}.tar.gz"
    check(sdist.name == expected, f"sdist name {sdist.name} (expected {expected})")
    with tarfile.open(sdist) as tf:
        top = f"recurring_payments-{version}/"
        names = {n.removeprefix(top) for n in tf.getnames()}
        member = tf.extractfile(top + "PKG-INFO")
        pkg_info = member.read().decode() if member else ""
    for name in SDIST_FILES:
        check(name in names, f"sdist holds {name}")
    meta = email.parser.Parser().parse(io.StringIO(pkg_info))
    check(meta["Version"] == version, f"sdist Version {meta['Version']}")
    size = sdist.stat().st_size
    check(size <= MAX_SDIST_BYTES, f"sdist: {len(names)} files, {size / 1e6:.2f} MB <= 5 MB")


def main(dist: Path) -> int:
    found = re.search(r'(?m)^version = "([^"]+)"', (ROOT / "Cargo.toml").read_text())
    version = found.group(1) if found else "?"
    wheels = {w.name for w in dist.glob("*.whl")}
    sdists = sorted(dist.glob("*.tar.gz"))
    check(len(sdists) == 1, f"one sdist in {dist}/ (found {[s.name for s in sdists]})")
    for tags, platform in PLATFORMS.items():
        name = f"recurring_payments-{version}-cp310-abi3-{tags}.whl"
        check(name in wheels, f"{name} in {dist}/")
        if name in wheels:
            check_wheel(dist / name, tags, platform, version)
    unexpected = wheels - {f"recurring_payments-{version}-cp310-abi3-{t}.whl" for t in PLATFORMS}
    check(not unexpected, f"no other wheel in {dist}/ (found {sorted(unexpected)})")
    if sdists:
        check_sdist(sdists[0], version)
    if failures:
        print(f"\n{len(failures)} check(s) failed:", *failures, sep="\n  ")
        return 1
    print("\ndist/ checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else "dist")))
