"""Run a long make step and say that it is still going: the command's output passes through
unchanged, and after every QUIET seconds without any, a line `... still LABEL (1 min 30 s)`.

Usage: python scripts/heartbeat.py LABEL COMMAND [ARG...]   (exits with the command's status)

A compiler working on one big crate, or a slow test, prints nothing for minutes: without this
line a newcomer cannot tell it from a hang. The command's output goes through a pipe, so it
prints what it prints when not on a terminal (cargo: its `Compiling` lines, no progress bar).
"""

from __future__ import annotations

import os
import selectors
import subprocess
import sys
import time

QUIET = float(os.environ.get("HEARTBEAT_SECONDS", "15"))


def duration(seconds: float) -> str:
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes} min {rest:02d} s" if minutes else f"{rest} s"


def main(label: str, command: list[str]) -> int:
    began = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert process.stdout is not None
    out = sys.stdout.buffer
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    last = began
    line_open = False  # the output so far ends inside a line (pytest's dots)
    try:
        while True:
            if selector.select(timeout=max(0.0, last + QUIET - time.monotonic())):
                chunk = os.read(process.stdout.fileno(), 65536)
                if not chunk:
                    break
                out.write(chunk)
                out.flush()
                line_open = not chunk.endswith(b"\n")
                last = time.monotonic()
            elif time.monotonic() - last >= QUIET:
                line = f"... still {label} ({duration(time.monotonic() - began)})\n"
                out.write(("\n" if line_open else "").encode() + line.encode())
                line_open = False
                out.flush()
                last = time.monotonic()
    except KeyboardInterrupt:
        process.terminate()  # Ctrl-C reached the command too; do not outlive it
    finally:
        selector.close()
        process.stdout.close()
    return process.wait()


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2:]))
