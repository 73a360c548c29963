"""Fork a child that runs a function and reports its status through a pipe: the fork-safety
tests share this, so that a hung child is killed instead of hanging pytest."""

from __future__ import annotations

import os
import select
import signal
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def no_fork_warning() -> Iterator[None]:
    # Python 3.12+ warns about forking a process that has threads: that is the point here.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        yield


def fork_child(work: Callable[[], int]) -> tuple[int, int]:
    """Fork a child running ``work`` (its return value is the status, 0 = success); returns
    ``(pid, read end of its status pipe)`` for :func:`wait_child`."""
    read, write = os.pipe()
    with no_fork_warning():
        pid = os.fork()
    if pid == 0:  # the child: report and leave without pytest's teardown
        status = 1
        try:
            status = work()
        finally:
            os.write(write, bytes([status]))
            os._exit(status)
    os.close(write)
    return pid, read


def wait_child(pid: int, read: int, timeout: float = 30.0) -> int:
    """Wait for the child's report (kill it if none comes); asserts it reported 0."""
    ready, _, _ = select.select([read], [], [], timeout)
    reported = os.read(read, 1) if ready else b""
    os.close(read)
    if not reported:
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    assert reported == b"\x00", f"child {pid} hung or failed (reported {reported!r})"
    return os.waitstatus_to_exitcode(status)


def run_in_child(work: Callable[[], int], timeout: float = 30.0) -> int:
    """Fork, run ``work`` in the child, wait for it: its exit code (asserts it reported 0)."""
    return wait_child(*fork_child(work), timeout)
