"""`import recurring_payments` stays cheap (the import target of BENCHMARKS.md): the async face
and `asyncio` (a third of the import once) load on first use of `rp.AsyncClient`, and the
lazily loaded names behave as if imported eagerly. Checked in fresh interpreters, whose
`sys.modules` no other test has filled."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

ASYNC = ("AsyncClient", "AsyncLink", "AsyncResource")


def run(source: str, env: dict[str, str] | None = None) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(source)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_importing_the_package_imports_no_asyncio() -> None:
    loaded = run("""
        import sys
        import recurring_payments as rp
        rp.Client, rp.Resource, rp.Link, rp.Error  # the sync face is all there
        print(*sorted(m for m in sys.modules if m.startswith("asyncio") or "_async" in m))
    """)
    assert loaded == []


def test_importing_the_package_defers_what_only_some_calls_need() -> None:
    # Each was imported at the top once (5 to 20 ms together); each serves one path: the first
    # client (logging, platform), an HTTP-date Retry-After (email.utils), a closed client's
    # URLs (urllib.parse), a notebook's display (html).
    deferred = ("logging", "platform", "email.utils", "datetime", "urllib.parse", "html")
    loaded = run(f"""
        import sys
        import recurring_payments
        print(*[m for m in {deferred!r} if m in sys.modules])
    """)
    assert loaded == []


def test_the_async_face_loads_on_first_use_and_is_the_same_object() -> None:
    out = run("""
        import sys
        import recurring_payments as rp
        from recurring_payments import AsyncResource
        from recurring_payments._async_client import AsyncClient
        from recurring_payments._async_resource import AsyncLink
        print("asyncio" in sys.modules, rp.AsyncClient is AsyncClient, rp.AsyncLink is AsyncLink)
        print(AsyncResource is rp.AsyncResource, all(n in dir(rp) for n in rp.__all__))
    """)
    assert out == ["True"] * 5


def test_star_import_and_unknown_names() -> None:
    out = run("""
        from recurring_payments import *
        import recurring_payments as rp
        print(AsyncClient.__name__, AsyncLink.__module__)
        try:
            rp.NoSuchName
        except AttributeError as err:
            print(type(err).__name__, "NoSuchName" in str(err))
    """)
    assert out == ["AsyncClient", "recurring_payments._async_resource", "AttributeError", "True"]


def test_a_client_imports_logging_only_once_the_application_does() -> None:
    # Nothing can be logged at DEBUG before the application configures `logging`: a short
    # script does not pay its import. Once it does, the client's DEBUG lines are there. (The
    # sandbox runs here: `testing` imports asyncio, which imports logging.)
    from recurring_payments.testing import FakeServer

    with FakeServer() as server:
        app = server.credentials
        env = {**os.environ, "RP_APP": app.app_name, "RP_SECRET": app.app_secret}
        out = run(
            f"""
            import os, sys
            import recurring_payments as rp
            credentials = rp.AppCredentials(os.environ["RP_APP"], os.environ["RP_SECRET"])
            with rp.Client({server.base_url!r}, credentials=credentials,
                           profile={server.profile!r}) as client:
                client.root()
                print("logging" in sys.modules, "platform" in sys.modules)
                import logging
                lines = []
                class Keep(logging.Handler):
                    def emit(self, record):
                        lines.append(record.getMessage())
                logger = logging.getLogger("recurring_payments")
                logger.addHandler(Keep())
                logger.setLevel(logging.DEBUG)
                client.root(refresh=True)
                print(len(lines), lines[0].startswith("GET "), "-> 200" in lines[0])
            """,
            env,
        )
    assert out == ["False", "False", "1", "True", "True"]
