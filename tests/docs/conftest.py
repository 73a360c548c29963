"""The documentation site, built once per test session into site/ (what `make docs` builds)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from docs_site import ROOT, SITE, missing


@pytest.fixture(scope="session")
def site() -> Path:
    try:
        import mkdocs  # noqa: F401
    except ImportError:
        missing("mkdocs is not installed: `make docs` installs the `docs` extra")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(SITE)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
    )
    assert built.returncode == 0, f"mkdocs build --strict failed:\n{built.stderr}"
    return SITE
