"""Helpers of the documentation tests: where the site is, how a missing tool is reported, and
the site built once per test session. (Not a conftest.py: the tests import helpers from
tests/conftest.py as `conftest`, which a second conftest module here would shadow.)"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from pathlib import Path
from typing import NoReturn

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
SITE = ROOT / "site"


def missing(what: str) -> NoReturn:
    """Skip for lack of a tool, except in CI (CI=true), where everything must be installed. The
    wheel check (scripts/check_wheel.sh, RP_WHEEL_CHECK=1) runs the suite in venvs of the wheel
    and its test tools only: the site is checked by the main `make test`, not once per CPython."""
    if os.environ.get("CI") == "true" and not os.environ.get("RP_WHEEL_CHECK"):
        pytest.fail(f"{what} (in CI, .ci/run installs it)")
    pytest.skip(what)


@functools.cache
def _build() -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(SITE)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
    )


def built_site() -> Path:
    """site/, built with `mkdocs build --strict` (what `make docs` runs) once per session."""
    try:
        import mkdocs  # noqa: F401
    except ImportError:
        missing("mkdocs is not installed: `make docs` installs the `docs` extra")
    built = _build()
    assert built.returncode == 0, f"mkdocs build --strict failed:\n{built.stderr}"
    return SITE
