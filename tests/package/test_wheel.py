"""The tests run against the installed distribution, never a stray copy of the package.

In the dev venv (`make dev`, an editable install) that is this source tree. In the fresh venvs
of scripts/check_wheel.sh (RP_WHEEL_CHECK=1) it is the wheel: the package must come from
site-packages, as the abi3 build, with the wheel's metadata, and no Rust toolchain on PATH.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import sys
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

import recurring_payments as rp

ROOT = Path(__file__).resolve().parents[2]
WHEEL_CHECK = os.environ.get("RP_WHEEL_CHECK") == "1"


def _distribution() -> tuple[metadata.Distribution, bool]:
    dist = metadata.distribution("recurring-payments")
    direct_url = json.loads(dist.read_text("direct_url.json") or "{}")
    return dist, bool(direct_url.get("dir_info", {}).get("editable"))


def _platform_tag() -> str:
    """The start of the platform tag of the wheel built for this machine (`make dist` on Linux,
    .github/workflows/release.yml elsewhere)."""
    machine = platform.machine().lower()
    if sys.platform == "linux":
        libc = "manylinux_2_17" if platform.libc_ver()[0] == "glibc" else "musllinux_1_2"
        return f"{libc}_{machine}"
    if sys.platform == "darwin":
        return "macosx_"
    return "win_amd64" if machine == "amd64" else f"win_{machine}"


def _package_dir() -> Path:
    return Path(rp.__file__).resolve().parent


def test_the_imported_package_is_the_installed_distribution() -> None:
    dist, editable = _distribution()
    package = _package_dir()
    assert Path(rp._core.__file__).resolve().parent == package
    if editable:
        direct_url = json.loads(dist.read_text("direct_url.json") or "{}")
        source = Path(unquote(urlparse(direct_url["url"]).path)).resolve()
        assert package == source / "python" / "recurring_payments"
    else:
        assert package == Path(str(dist.locate_file("recurring_payments"))).resolve()
    # One version, Cargo.toml's: the distribution's metadata and the extension agree.
    assert dist.version == rp.__version__ == rp._core.__version__


@pytest.mark.skipif(not WHEEL_CHECK, reason="run by scripts/check_wheel.sh on the installed wheel")
def test_the_installed_wheel() -> None:
    dist, editable = _distribution()
    package = _package_dir()
    assert not editable
    assert ROOT not in package.parents, f"imported from the source tree: {package}"
    assert Path(rp._core.__file__).name == ("_core.pyd" if os.name == "nt" else "_core.abi3.so")
    assert f"Tag: cp310-abi3-{_platform_tag()}" in (dist.read_text("WHEEL") or "")

    cargo = (ROOT / "Cargo.toml").read_text()
    version = re.search(r'(?m)^version = "([^"]+)"', cargo)
    assert version is not None and rp.__version__ == version.group(1)
    assert dist.metadata["Requires-Python"] == ">=3.10"
    python = "{}.{}".format(*sys.version_info)
    assert f"Programming Language :: Python :: {python}" in dist.metadata.get_all("Classifier", [])
    assert any(str(f).endswith("licenses/LICENSE") for f in dist.files or [])

    # Installed and working without a Rust toolchain (check_wheel.sh runs us without one).
    assert shutil.which("cargo") is None and shutil.which("rustc") is None
