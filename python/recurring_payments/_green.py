"""Blocking native calls under gevent or eventlet (docs/guides/web-frameworks.md#worker-classes).

The sync client waits for its I/O in Rust, without the GIL but on the calling OS thread. Under
gevent's ``monkey.patch_all()`` or eventlet's ``monkey_patch()`` every greenlet of a worker
shares that thread, so the wait would freeze them all (19 requests/s for 2 gevent workers at
200 ms latency, against 126/s for gthread 2x8). When, and only when, ``threading`` is patched,
:func:`_blocking` runs the call on the hub's thread pool, so the calling greenlet waits while
the others run. Without patching nothing changes: no import of gevent or eventlet, and the call
runs on the caller's thread as before.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any, TypeVar

_T = TypeVar("_T")


def _blocking(fn: Callable[..., _T], /, *args: Any, **kwargs: Any) -> _T:
    """``fn(*args, **kwargs)``, on the green hub's thread pool when threading is patched.

    ``fn`` must not touch gevent or eventlet objects (it runs on a native thread): a method of
    ``_core.NativeClient`` is what it is for.
    """
    # sys.modules only: a process that never imported gevent/eventlet pays two dict lookups.
    gevent_monkey = sys.modules.get("gevent.monkey")
    if gevent_monkey is not None and gevent_monkey.is_module_patched("threading"):
        hub = sys.modules["gevent"].get_hub()
        result: _T = hub.threadpool.apply(fn, args, kwargs)
        return result
    eventlet_patcher = sys.modules.get("eventlet.patcher")
    if eventlet_patcher is not None and eventlet_patcher.is_monkey_patched("thread"):
        tpool = importlib.import_module("eventlet.tpool")  # imported already, but lazily
        outcome: _T = tpool.execute(fn, *args, **kwargs)
        return outcome
    return fn(*args, **kwargs)
