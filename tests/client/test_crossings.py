"""A warm templated follow crosses from Python into Rust at most twice (ARCHITECTURE.md): the
request is assembled, checked, expanded, resolved and sent in one call into the core, and a
field read is the other. Counted with a profile hook: every call of a function or method of
`recurring_payments._core` made from Python is one `c_call` event."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from types import FrameType, ModuleType
from typing import Any

import pytest

import recurring_payments as rp
from recurring_payments.testing import FakeServer

CORE = "recurring_payments._core"


def _is_core(function: Any) -> bool:
    owner = getattr(function, "__self__", None)
    if owner is not None and not isinstance(owner, ModuleType):
        return type(owner).__module__ == CORE  # a method of a native object
    return getattr(function, "__module__", None) == CORE  # a function of the module


def counting(seen: list[str]) -> Callable[[FrameType, str, Any], None]:
    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event == "c_call" and _is_core(arg):
            seen.append(getattr(arg, "__qualname__", repr(arg)))

    return profile


# Slots (`document[key]`, a truth test) give no `c_call` event: the field is read with the
# document's `get`, an explicit call, so that the read counts as the crossing it is.


@pytest.mark.parametrize("way", ["client attribute", "link held"])
def test_a_warm_templated_follow_and_a_field_read(demo_client: rp.Client, way: str) -> None:
    link = demo_client.get_creditors

    def follow() -> Any:
        follow = demo_client.get_creditors if way == "client attribute" else link
        return follow(reference="democreditor")._doc.get("name")

    follow()  # warm: token, entry point, its relations, the connection
    seen: list[str] = []
    sys.setprofile(counting(seen))
    try:
        name = follow()
    finally:
        sys.setprofile(None)
    assert name == "Demo Creditor SAS"
    assert len(seen) <= 2, seen


def test_the_async_face_crosses_as_often(demo: FakeServer) -> None:
    seen: list[str] = []

    async def scenario() -> Any:
        async with demo.async_client() as client:
            await client.get_creditors(reference="democreditor")  # warm
            sys.setprofile(counting(seen))
            try:
                creditor = await client.get_creditors(reference="democreditor")
                return creditor._doc.get("name")
            finally:
                sys.setprofile(None)

    assert asyncio.run(scenario()) == "Demo Creditor SAS"
    assert len(seen) <= 2, seen
