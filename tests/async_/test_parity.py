"""Twins checked, not generated (docs/design.md#layers): every public member of a sync class exists
on its async twin with the same parameters (names, kinds, defaults), and what does I/O there
is a coroutine (or an async iterator). Only the allowlist below may differ, each with why."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

import recurring_payments as rp
from recurring_payments._async_client import _EntryRelation

TWINS = [(rp.Client, rp.AsyncClient), (rp.Resource, rp.AsyncResource), (rp.Link, rp.AsyncLink)]

# Members that cannot exist on the twin, and what stands in for them.
RENAMED = {
    # `close()` cannot be awaited under its sync name: AsyncClient.close must raise
    # (docs/guides/asyncio.md).
    (rp.Client, "close"): "aclose",
    # A context manager is `async with` on the async face.
    (rp.Client, "__enter__"): "__aenter__",
    (rp.Client, "__exit__"): "__aexit__",
}
# Members of the sync class that do I/O: coroutines (or async generators) on the twin.
AWAITED = {
    rp.Client: {"root", "get", "post", "patch", "authenticate", "close"},
    rp.Resource: {"fetch", "follow", "pages"},
    rp.Link: {"__call__", "get", "post", "patch"},
}
# Dunders that are part of the public behaviour (mapping protocol, calls, context managers).
DUNDERS = {
    "__call__",
    "__contains__",
    "__enter__",
    "__exit__",
    "__getitem__",
    "__iter__",
    "__len__",
    "__repr__",
}


def public(cls: type) -> set[str]:
    return {n for n in dir(cls) if not n.startswith("_") or (n in DUNDERS and n in vars_of(cls))}


def vars_of(cls: type) -> set[str]:
    """Names defined by the package's own classes in the MRO (not `object`'s or `Mapping`'s)."""
    names: set[str] = set()
    for klass in cls.__mro__:
        if klass.__module__.startswith("recurring_payments"):
            names |= set(vars(klass))
    return names


def shape(member: Any) -> Any:
    """What must match: a property is a property; a method, its parameters without types."""
    if isinstance(member, property):
        return "property"
    try:
        signature = inspect.signature(member)
    except (TypeError, ValueError):
        return type(member).__name__
    return [(p.name, p.kind, p.default) for p in signature.parameters.values()]


@pytest.mark.parametrize(("sync", "twin"), TWINS, ids=lambda c: c.__name__)
def test_every_public_member_has_its_twin(sync: type, twin: type) -> None:
    for name in sorted(public(sync)):
        twin_name = RENAMED.get((sync, name), name)
        assert hasattr(twin, twin_name), f"{twin.__name__} lacks {twin_name} ({sync.__name__})"
        ours, theirs = inspect.getattr_static(sync, name), inspect.getattr_static(twin, twin_name)
        ours = getattr(ours, "__func__", ours)  # classmethod: compare the functions
        theirs = getattr(theirs, "__func__", theirs)
        assert shape(ours) == shape(theirs), f"{sync.__name__}.{name} vs {twin_name}"
    # And nothing public on the twin that the sync class lacks, but the stand-ins.
    stand_ins = {RENAMED[key] for key in RENAMED if key[0] is sync}
    extra = public(twin) - public(sync) - stand_ins
    assert extra == set(), f"{twin.__name__} has {sorted(extra)} that {sync.__name__} lacks"


@pytest.mark.parametrize(("sync", "twin"), TWINS, ids=lambda c: c.__name__)
def test_what_does_io_is_awaited_on_the_twin(sync: type, twin: type) -> None:
    for name in AWAITED[sync]:
        member = getattr(twin, RENAMED.get((sync, name), name))
        if name == "pages":
            assert inspect.isasyncgenfunction(member), name
        elif name == "__call__":  # returns the coroutine of `get`
            assert "Coroutine" in str(inspect.signature(member).return_annotation), name
        else:
            assert inspect.iscoroutinefunction(member), name
        assert not inspect.iscoroutinefunction(getattr(sync, name)), name


def test_a_relation_of_the_async_entry_point_is_called_like_a_link() -> None:
    # `client.<relation>` is a Link on Client, and on AsyncClient an _EntryRelation (the entry
    # point may not be fetched yet): its requests take the Link's parameters. Its fields cannot
    # exist before the entry point is fetched; `await rel.link()` gives the AsyncLink.
    for name in ("__call__", "get", "post", "patch"):
        assert shape(getattr(_EntryRelation, name)) == shape(getattr(rp.Link, name)), name
        assert shape(getattr(_EntryRelation, name)) == shape(getattr(rp.AsyncLink, name)), name


def test_the_constructors_match() -> None:
    assert inspect.signature(rp.AsyncClient) == inspect.signature(rp.Client)
    assert shape(rp.AsyncClient.from_env) == shape(rp.Client.from_env)
