"""Every public class, function, method and property has a docstring with an example that
`help()` shows, and every example is true: each docstring runs as a doctest against a fresh demo
sandbox, with the names the package docstring announces (`server`, `client`, `aclient`)."""

from __future__ import annotations

import asyncio
import doctest
import inspect
import pydoc
from collections.abc import Iterator
from typing import Any

import pytest

import recurring_payments as rp
from recurring_payments import testing
from recurring_payments._async_client import _EntryRelation
from recurring_payments.testing import FakeServer

# Members of these (and of their bases defined in the package) are public API too.
EXTRA = {
    "FakeServer": testing.FakeServer,
    "SandboxRequest": testing.SandboxRequest,
    # What `AsyncClient.<relation>` gives before the entry point is fetched.
    "AsyncClient relation": _EntryRelation,
}
DOCUMENTED_KINDS = (property, classmethod, staticmethod)


def _is_documented_member(value: Any) -> bool:
    if isinstance(value, DOCUMENTED_KINDS) or inspect.isfunction(value):
        return True
    # Rust (pyo3) members: methods and getters; not plain values.
    return inspect.ismethoddescriptor(value) or inspect.isgetsetdescriptor(value)


def public_docstrings() -> Iterator[tuple[str, Any]]:
    """(qualified name, object) for every public object whose docstring users read."""
    seen: set[int] = set()
    yield "recurring_payments", rp
    yield "recurring_payments.testing", testing
    # Sync classes first: members shared with the async ones are listed under the sync name.
    names = sorted((n for n in rp.__all__ if n != "__version__"), key=lambda n: "Async" in n)
    top = {name: getattr(rp, name) for name in names}
    for name, obj in {**top, **EXTRA}.items():
        yield name, obj
        if not inspect.isclass(obj):
            continue
        for klass in obj.__mro__:
            if not klass.__module__.startswith("recurring_payments"):
                continue  # Mapping.keys, Exception.args: documented by Python
            for member, value in vars(klass).items():
                if member.startswith("_") or not _is_documented_member(value):
                    continue
                if id(value) not in seen:
                    seen.add(id(value))
                    yield f"{name}.{member}", value


DOCSTRINGS = dict(public_docstrings())


def test_the_inventory_covers_the_api() -> None:
    # A guard on the collector itself: it must see Python and Rust members alike.
    for name in ("Client.get", "AsyncResource.pages", "Resource.links", "Token.expires_in"):
        assert name in DOCSTRINGS
    assert "FakeServer.fail_next" in DOCSTRINGS and "Link.variables" in DOCSTRINGS
    assert len(DOCSTRINGS) > 100


@pytest.mark.parametrize("name", sorted(DOCSTRINGS))
def test_has_a_docstring_with_an_example(name: str) -> None:
    doc = inspect.getdoc(DOCSTRINGS[name])
    assert doc, f"{name} has no docstring"
    assert ">>>" in doc, f"{name}'s docstring has no example"
    assert "+SKIP" not in doc, f"{name}'s example is not run"


def test_help_shows_the_examples() -> None:
    for obj in (rp.Client.get, rp.Token, rp.Token.expires_in, testing.FakeServer.route):
        assert ">>> " in pydoc.render_doc(obj, renderer=pydoc.plaintext), obj


@pytest.fixture(scope="module")
def runner() -> doctest.DocTestRunner:
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    return doctest.DocTestRunner(optionflags=flags)


@pytest.mark.parametrize("name", sorted(DOCSTRINGS))
def test_the_example_is_true(name: str, runner: doctest.DocTestRunner) -> None:
    doc = inspect.getdoc(DOCSTRINGS[name]) or ""
    with FakeServer(demo=True) as server, server.client() as client:
        aclient = server.async_client()
        names = {name: getattr(rp, name) for name in rp.__all__}
        names.update(rp=rp, asyncio=asyncio, FakeServer=FakeServer)
        names.update(server=server, client=client, aclient=aclient)
        test = doctest.DocTestParser().get_doctest(doc, names, name, None, 0)
        out: list[str] = []
        result = runner.run(test, out=out.append, clear_globs=True)
        aclient._close()
    assert result.failed == 0, "".join(out)
