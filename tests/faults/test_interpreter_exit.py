"""Interpreter exit with the asyncio client: no Rust thread may still be in Python when CPython
finalizes (before the fix, SIGABRT after a script's last line, ~1 run in 15 of the asyncio
example). Each script runs in its own interpreter against a sandbox of this process."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from recurring_payments.testing import FakeServer

PREFIX = "RECURRING_PAYMENTS_"


def run(server: FakeServer, script: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(PREFIX)}
    env |= {
        PREFIX + "BASE_URL": server.base_url,
        PREFIX + "PROFILE": server.profile,
        PREFIX + "REL_NAMESPACE": server.rel_namespace,
        PREFIX + "APP_NAME": server.credentials.app_name,
        PREFIX + "APP_SECRET": server.credentials.app_secret,
    }
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


# The completion thread hands the result to the loop with call_soon_threadsafe, which writes the
# loop's wake-up byte; this loop then lingers in Python on that thread (GIL released) while the
# main thread finishes, and a slow finalizer keeps finalization going until the thread wants
# the GIL back: the exact interleaving of the abort, made certain.
LINGERING_COMPLETION = """
    import asyncio, os, sys, threading, time, types
    import recurring_payments as rp

    class SlowWakeLoop(asyncio.SelectorEventLoop):
        def _write_to_self(self):
            super()._write_to_self()
            if threading.current_thread() is not threading.main_thread():
                time.sleep(0.2)

    class SlowFinalizer:
        def __del__(self, sleep=time.sleep, write=os.write):
            sleep(0.5)
            write(1, b"finalized\\n")

    async def main():
        async with rp.AsyncClient.from_env() as client:
            root = await client.get("/")
            print(root.status)

    loop = SlowWakeLoop()
    loop.run_until_complete(main())
    loop.close()
    holder = types.ModuleType("holder")  # finalized after the interpreter starts finalizing
    holder.lingering = SlowFinalizer()
    sys.modules["holder"] = holder
"""


def test_a_completion_still_in_python_at_exit_does_not_abort(demo: FakeServer) -> None:
    done = run(demo, LINGERING_COMPLETION)
    assert done.returncode == 0, (done.returncode, done.stderr)
    assert done.stdout.split() == ["200", "finalized"]


def test_many_completions_at_exit_do_not_abort(demo: FakeServer) -> None:
    script = """
        import asyncio
        import recurring_payments as rp

        async def main():
            async with rp.AsyncClient.from_env() as client:
                await asyncio.gather(*(client.get("/") for _ in range(50)))

        for _ in range(20):
            asyncio.run(main())
    """
    for _ in range(5):
        done = run(demo, script)
        assert done.returncode == 0, (done.returncode, done.stderr)


def test_an_async_request_from_a_late_atexit_handler_fails_clearly(demo: FakeServer) -> None:
    # Registered before the import, so it runs after the library's own exit hook: the
    # completion could never be handed back, so the request is refused instead of hanging.
    script = """
        import asyncio, atexit

        def late():
            async def main():
                async with rp.AsyncClient.from_env() as client:
                    await client.get("/")
            try:
                asyncio.run(main())
            except RuntimeError as exc:
                print("refused:", exc)
            with rp.Client.from_env() as client:  # the sync client still works
                print("sync:", client.get("/").status)

        atexit.register(late)
        import recurring_payments as rp
    """
    done = run(demo, script)
    assert done.returncode == 0, (done.returncode, done.stderr)
    assert done.stdout.splitlines() == [
        "refused: cannot start a request after interpreter shutdown",
        "sync: 200",
    ]


def test_a_sandbox_handler_still_running_at_exit_does_not_abort(demo: FakeServer) -> None:
    # Stopping the server at exit waits ~2 s for requests in flight; this handler outlasts that,
    # so the library's exit hook is what keeps finalization from starting under it.
    script = """
        import os, threading, time
        from recurring_payments.testing import FakeServer

        def slow(request):
            time.sleep(2.5)
            os.write(1, b"handler done\\n")
            return {"slow": True}

        server = FakeServer().start()
        server.route("GET", "/slow", slow)
        client = server.client()
        threading.Thread(target=lambda: client.get("/slow"), daemon=True).start()
        while not any(r.path == "/slow" for r in server.requests):
            time.sleep(0.01)
        print("exiting", flush=True)
    """
    done = run(demo, script)
    assert done.returncode == 0, (done.returncode, done.stderr)
    assert done.stdout.splitlines() == ["exiting", "handler done"]
