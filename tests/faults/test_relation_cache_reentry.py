"""The relation-index cache (`_core.RelCache`, one per client) is shared by every resource of
a client. Making an index creates a Python object, which may run the garbage collector, and
what the collector runs (a finalizer, a `gc.callbacks` hook: an APM's, a profiler's) may read
relations of other resources: that must come back into the cache without deadlocking on its
lock. Run in a child process, so that a hang fails the test instead of hanging the suite."""

from __future__ import annotations

import subprocess
import sys
import textwrap

CHILD = textwrap.dedent(
    """
    import gc
    from recurring_payments.testing import FakeServer

    N = 40
    with FakeServer() as server:
        for i in range(N):  # each resource its own shape: its first read makes an index
            links = {"self": {"href": f"/r/{i}"}, f"rel{i}": {"href": f"/t/{i}"}}
            server.add_resource(f"/r/{i}", {"_links": links})
        items = [{"_links": {"owner": {"href": f"/o/{k}"}}} for k in range(3000)]
        server.add_resource("/page", {"_embedded": {"items": items}})
        with server.client() as client:
            resources = [client.get(f"/r/{i}") for i in range(N)]
            fresh = iter(client.get("/page").embedded["items"])
            read = []

            def hook(phase, info):
                # Each collection reads the relation of a resource never read before.
                item = next(fresh, None)
                if item is not None:
                    read.append(item.owner.href)

            gc.callbacks.append(hook)
            gc.set_threshold(1)  # every allocation of a container runs a collection
            try:
                for i in range(N):
                    assert getattr(resources[i], f"rel{i}").href == f"/t/{i}"
            finally:
                gc.set_threshold(700)
                gc.callbacks.remove(hook)
    assert read and all(href.startswith("/o/") for href in read), read[:5]
    print("ok", len(read))
    """
)


def test_the_collector_reading_relations_while_an_index_is_made_does_not_deadlock() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0 and done.stdout.startswith("ok"), done.stderr[-2000:]
