"""A pytest session in a child process with only the secret watch (secret_watch.py) loaded:
how the tests that prove the watch can fail run their leaking tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent

CONFTEST = f"""
import sys
sys.path.insert(0, {str(TESTS)!r})
pytest_plugins = ["secret_watch"]
"""


def run_watched(directory: Path, source: str) -> subprocess.CompletedProcess[str]:
    """Run ``source`` as the one test file of a new session in ``directory``."""
    directory.mkdir()
    (directory / "conftest.py").write_text(CONFTEST)
    (directory / "test_it.py").write_text(source)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(directory)],
        capture_output=True,
        text=True,
        timeout=50,
        cwd=directory,
    )
