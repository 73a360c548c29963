"""Errors say whose fault they are: an internal failure is ``rp.InternalError`` (a
``RuntimeError``), never a ``ConfigurationError``; an href the server sent that cannot be used is
a ``ProtocolError``; the exception classes are bound when ``_core`` is imported."""

from __future__ import annotations

import copy
import os
import pickle
import signal
import subprocess
import sys
import textwrap
import threading
import types

import pytest

import recurring_payments as rp
import recurring_payments.errors
from recurring_payments.testing import FakeServer


def test_internal_error_is_exported_and_plain_data() -> None:
    assert rp.InternalError is recurring_payments.errors.InternalError
    assert "InternalError" in rp.__all__ and "InternalError" in recurring_payments.errors.__all__
    assert issubclass(rp.InternalError, rp.Error) and issubclass(rp.InternalError, RuntimeError)
    assert not issubclass(rp.InternalError, ValueError)
    err = rp.InternalError("this thread's I/O runtime is gone")
    for other in (pickle.loads(pickle.dumps(err)), copy.copy(err)):
        assert type(other) is rp.InternalError
        assert str(other) == str(err) and other.outcome_unknown is False


@pytest.mark.skipif(not hasattr(signal, "SIGUSR1"), reason="needs SIGUSR1")
def test_a_request_from_a_signal_handler_during_a_request_is_internal(
    server: FakeServer,
) -> None:
    # The sync client runs Python's signal handlers while it waits (Ctrl-C); a handler that
    # starts a request on the waiting thread cannot be served, and that is no setting's fault.
    seen: list[BaseException] = []
    with server.client(retries=0) as client:
        client.authenticate()

        def on_signal(signum: int, frame: types.FrameType | None) -> None:
            try:
                client.get("/")  # not root(): its cache lock would wait for the outer root()
            except BaseException as exc:  # whatever the nested request raised
                seen.append(exc)

        previous = signal.signal(signal.SIGUSR1, on_signal)
        try:
            server.delay_next(1.0, path="/")
            timer = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGUSR1))
            timer.start()
            assert client.root().status == 200  # the outer request is not disturbed
            timer.join()
        finally:
            signal.signal(signal.SIGUSR1, previous)
    assert len(seen) == 1, seen
    (err,) = seen
    assert isinstance(err, rp.InternalError), repr(err)
    assert not isinstance(err, rp.ConfigurationError)
    assert "waits for another" in str(err)


@pytest.mark.parametrize("href", ["http://[::1/x", "http://api.example.com:99999/x"])
def test_an_unusable_href_from_the_server_is_a_protocol_error(
    server: FakeServer, client: rp.Client, href: str
) -> None:
    server.add_resource("/odd", {"_links": {"self": {"href": href}, "next": {"href": href}}})
    resource = client.get("/odd")
    with pytest.raises(rp.ProtocolError, match="from the server") as caught:
        resource.url  # noqa: B018
    assert not isinstance(caught.value, rp.ConfigurationError)
    with pytest.raises(rp.ProtocolError):
        resource.links["next"].expand()


def test_a_bad_url_from_the_caller_stays_a_configuration_error(client: rp.Client) -> None:
    with pytest.raises(rp.ConfigurationError):
        client.get("http://[::1/x")


# Loads `_core` without the package's __init__ (which imports the classes by name itself), after
# renaming a class of `recurring_payments.errors`: the binding must fail right there.
_RENAMED = """
import importlib.util, sys, types
spec = importlib.util.find_spec("recurring_payments")
package = types.ModuleType("recurring_payments")
package.__path__ = list(spec.submodule_search_locations)
sys.modules["recurring_payments"] = package
import recurring_payments.errors as errors
errors.MissingError = errors.__dict__.pop("NotFoundError")
try:
    import recurring_payments._core
except ImportError as exc:
    print("ImportError:", exc)
else:
    print("imported")
"""


def test_a_renamed_exception_class_fails_the_import() -> None:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_RENAMED)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ImportError:"), done.stdout
    assert "recurring_payments.errors.NotFoundError" in done.stdout
