"""Errors say whose fault they are: ``rp.InternalError`` (a ``RuntimeError``) for internal
failures; the exception classes are bound when ``_core`` is imported."""

from __future__ import annotations

import copy
import pickle
import subprocess
import sys
import textwrap

import recurring_payments as rp
import recurring_payments.errors


def test_internal_error_is_exported_and_plain_data() -> None:
    assert rp.InternalError is recurring_payments.errors.InternalError
    assert "InternalError" in rp.__all__ and "InternalError" in recurring_payments.errors.__all__
    assert issubclass(rp.InternalError, rp.Error) and issubclass(rp.InternalError, RuntimeError)
    assert not issubclass(rp.InternalError, ValueError)
    err = rp.InternalError("this thread's I/O runtime is gone")
    for other in (pickle.loads(pickle.dumps(err)), copy.copy(err)):
        assert type(other) is rp.InternalError
        assert str(other) == str(err) and other.outcome_unknown is False


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
