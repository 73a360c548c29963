"""Secret watch (issue 8): the whole suite runs with DEBUG logging on, and at the end no app
secret, admin password, Basic credential or access token may appear in any log record,
exception text or repr seen during the run. A leak fails the session and names the tests.

What is watched (each distinct text once, so memory stays small):
- every log record of every logger (the root logger is set to DEBUG), traceback included;
- `str`, `repr` (and an HTTP error's body and headers) of every `recurring_payments.Error`
  created, collected after each test;
- `repr` of every `Client`/`AsyncClient` and of its `Token`, at the end of each test's call;
- the report of every failing test;
- with `opentelemetry-sdk` installed (otel_kit.py makes it the global SDK), every span that
  ends (name, attributes, events, status) and every metric data point's attributes.
Against: the secrets of every `FakeServer` (its app, `add_app`, `add_admin`; those shorter than
8 characters are not distinctive enough to search, but their Basic value always is) and every
access token it issued (`_core.SandboxServer.issued_tokens()`, a test aid).

Loaded by tests/conftest.py (`pytest_plugins`); tests/package/test_secret_watch.py proves it
can fail.
"""

from __future__ import annotations

import base64
import functools
import logging
import os
import threading
import weakref
from collections.abc import Callable, Generator
from typing import Any

import otel_kit
import pytest

from recurring_payments import errors
from recurring_payments._client import Client
from recurring_payments.testing import FakeServer

MIN_SECRET = 8


class Watch:
    def __init__(self) -> None:
        self.secrets: set[str] = set()
        self.texts: dict[str, str] = {}  # distinct text -> the test that first showed it
        self.errors: list[BaseException] = []  # created during the current test
        self.clients: list[weakref.ref[Client]] = []
        self.servers: weakref.WeakSet[FakeServer] = weakref.WeakSet()
        self.current = "(collection)"
        self.lock = threading.Lock()
        # A child forked while a parent thread held it must not inherit it held (fork tests).
        if hasattr(os, "register_at_fork"):  # not on Windows, which has no fork
            os.register_at_fork(after_in_child=self._new_lock)
        self.leaks: list[str] = []
        self.spans = 0  # spans and metric data points seen (OpenTelemetry)
        self.points = 0

    def _new_lock(self) -> None:
        self.lock = threading.Lock()

    def secret(self, value: str) -> None:
        if len(value) >= MIN_SECRET:
            self.secrets.add(value)

    def basic(self, user: str, password: str) -> None:
        self.secrets.add(base64.b64encode(f"{user}:{password}".encode()).decode())
        self.secret(password)

    def text(self, text: str) -> None:
        with self.lock:
            self.texts.setdefault(text, self.current)

    def harvest_tokens(self, server: FakeServer) -> None:
        for token in server._native.issued_tokens():
            self.secrets.add(token)

    def check(self) -> list[str]:
        """Each leak as "<test>: <kind> <first 4 characters>…" (never the secret itself)."""
        blob = "\n\x00".join(self.texts)
        found = []
        for secret in self.secrets:
            if secret in blob:
                for text, where in self.texts.items():
                    if secret in text:
                        found.append(
                            f"{where}: a secret starting {secret[:4]!r}… in a logged or raised text"
                        )
                        break
        return sorted(found)


WATCH = Watch()


class _Capture(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        try:
            WATCH.text(self.format(record))
        except Exception:
            self.handleError(record)


def _wrap(cls: Any, name: str, after: Callable[..., None]) -> Callable[[], None]:
    """Run `after(self, *args)` after `cls.name`; returns the undo."""
    original = getattr(cls, name)

    @functools.wraps(original)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        result = original(self, *args, **kwargs)
        after(self, *args, **kwargs)
        return result

    setattr(cls, name, wrapper)
    return lambda: setattr(cls, name, original)


def _before_stop(cls: Any) -> Callable[[], None]:
    original = cls.stop

    @functools.wraps(original)
    def stop(self: FakeServer) -> None:
        WATCH.harvest_tokens(self)  # the journal may be gone after; the tokens are not
        original(self)

    cls.stop = stop
    return lambda: setattr(cls, "stop", original)


def _server_created(server: FakeServer, *args: Any, **kwargs: Any) -> None:
    WATCH.servers.add(server)
    WATCH.basic(server.credentials.app_name, server.credentials.app_secret)


def _error_init(self: BaseException, *args: Any, **kwargs: Any) -> None:
    super(errors.Error, self).__init__(*args, **kwargs)
    with WATCH.lock:
        WATCH.errors.append(self)


def _span_texts(span: Any) -> None:
    WATCH.spans += 1
    WATCH.text(span.name)
    for name, value in (span.attributes or {}).items():
        WATCH.text(f"{name}={value}")
    for event in span.events:
        WATCH.text(event.name)
        for name, value in (event.attributes or {}).items():
            WATCH.text(f"{name}={value}")
    if span.status.description:
        WATCH.text(span.status.description)


def _point_texts(metric: str, attributes: dict[str, Any]) -> None:
    WATCH.points += 1
    for name, value in attributes.items():
        WATCH.text(f"{metric} {name}={value}")


_undo: list[Callable[[], None]] = []
_handler = _Capture(logging.DEBUG)
_handler.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
_root_level = logging.WARNING


def pytest_configure(config: pytest.Config) -> None:
    global _root_level
    root = logging.getLogger()
    _root_level = root.level
    root.setLevel(logging.DEBUG)
    root.addHandler(_handler)
    if otel_kit.install():
        otel_kit.observe_spans(_span_texts)
        otel_kit.observe_points(_point_texts)
    _undo.extend(
        [
            _wrap(FakeServer, "__init__", _server_created),
            _wrap(FakeServer, "add_app", lambda s, name, secret: WATCH.basic(name, secret)),
            _wrap(
                FakeServer,
                "add_admin",
                lambda s, creditor, login, pw: WATCH.basic(f"{creditor}#{login}", pw),
            ),
            _before_stop(FakeServer),
            _wrap(Client, "__init__", lambda c, *a, **k: WATCH.clients.append(weakref.ref(c))),
        ]
    )
    original_init = errors.Error.__dict__.get("__init__")
    errors.Error.__init__ = _error_init  # type: ignore[method-assign]
    _undo.append(
        lambda: (
            delattr(errors.Error, "__init__")
            if original_init is None
            else setattr(errors.Error, "__init__", original_init)
        )
    )


def pytest_runtest_setup(item: pytest.Item) -> None:
    WATCH.current = item.nodeid


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    yield
    for ref in WATCH.clients:
        client = ref()
        if client is None:
            continue
        WATCH.text(repr(client))
        try:
            token = client.token
        except Exception:  # a closed client
            continue
        WATCH.text(repr(token))
        WATCH.text(str(token))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.failed:
        WATCH.text(report.longreprtext)


def pytest_runtest_logfinish(nodeid: str) -> None:
    otel_kit.collect()  # the measurements of this test, to _point_texts
    with WATCH.lock:
        created, WATCH.errors = WATCH.errors, []
        WATCH.clients = []
    for error in created:
        WATCH.text(str(error))
        WATCH.text(repr(error))
        if isinstance(error, errors.HTTPError):
            WATCH.text(error.body)
            WATCH.text(repr(error.headers))
    WATCH.current = "(between tests)"


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    for server in list(WATCH.servers):
        WATCH.harvest_tokens(server)
    otel_kit.collect()
    logging.getLogger().removeHandler(_handler)
    logging.getLogger().setLevel(_root_level)
    for undo in reversed(_undo):
        undo()
    WATCH.leaks = WATCH.check()
    if WATCH.leaks:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if WATCH.leaks:
        terminalreporter.section("secret watch: LEAKS", red=True)
        for leak in WATCH.leaks:
            terminalreporter.line(leak)
    else:
        terminalreporter.line(
            f"secret watch: {len(WATCH.texts)} distinct log/exception/repr/telemetry texts "
            f"({WATCH.spans} spans, {WATCH.points} metric points) checked "
            f"against {len(WATCH.secrets)} secrets and tokens: no leak"
        )
