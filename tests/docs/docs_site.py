"""Helpers of the documentation tests: where the site is, how a missing tool is reported."""

from __future__ import annotations

import os
from pathlib import Path
from typing import NoReturn

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
SITE = ROOT / "site"


def missing(what: str) -> NoReturn:
    """Skip for lack of a tool, except in CI (CI=true), where everything must be installed."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{what} (in CI, .ci/run installs it)")
    pytest.skip(what)
