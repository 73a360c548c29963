"""The long make steps say what they do and how long it takes, and scripts/heartbeat.py says
that a quiet step is still going (a newcomer cannot tell a silent compiler from a hang)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEARTBEAT = ROOT / "scripts" / "heartbeat.py"


def beat(command: str, quiet: float = 0.3) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(HEARTBEAT), "compiling", sys.executable, "-c", command],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ, HEARTBEAT_SECONDS=str(quiet)),
    )


def test_a_quiet_command_is_said_to_be_still_running() -> None:
    done = beat("import sys, time; print('...', end='', flush=True); time.sleep(1); sys.exit(3)")
    assert done.returncode == 3
    lines = done.stdout.splitlines()
    assert lines[0] == "..."  # the command's own output first, its line ended for ours
    assert re.fullmatch(r"\.\.\. still compiling \(\d s\)", lines[1]), lines
    assert len(lines) >= 3


def test_a_talkative_command_passes_through_unchanged() -> None:
    done = beat("import time\nfor i in range(5): print(i, flush=True); time.sleep(0.05)", 5)
    assert (done.returncode, done.stdout) == (0, "0\n1\n2\n3\n4\n")


@pytest.mark.skipif(
    shutil.which("make") is None or not (ROOT / "Makefile").is_file(),
    reason="needs make and the source tree's Makefile (the wheel checks' systems have neither)",
)
def test_the_long_steps_announce_themselves() -> None:
    # What `make demo` and `make test` run, without running it (make -n prints the recipes).
    for target, said in [
        ("demo", ["building the Rust extension", "about 2 min", "pip install -v"]),
        ("test", ["building the Rust tests", "running pytest", "cargo test --profile quick"]),
    ]:
        printed = subprocess.run(
            ["make", "-n", "-B", target, "VENV=/nonexistent-venv"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        ).stdout
        for words in said:
            assert words in printed, (target, words)
        assert "pip install -q -e" not in printed  # the extension's build is never silenced
