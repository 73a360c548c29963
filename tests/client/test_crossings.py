"""A warm templated follow crosses from Python into Rust at most twice
(docs/design.md#the-path-of-a-call): the request is assembled, checked, expanded, resolved and sent
in one call into the core, and a field read is the other. Counted with a profile hook: every call of
a function or method of `recurring_payments._core` made from Python is one `c_call` event."""

from __future__ import annotations

import ast
import asyncio
import os
import subprocess
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


@pytest.mark.parametrize("face", ["sync", "async"])
def test_a_link_read_as_an_attribute_runs_no_python(demo: FakeServer, face: str) -> None:
    """`creditor.<rel>` on a fresh response: the native `__getattr__` slot resolves the relation
    and reads its link object in the core, with no Python frame and no call from Python (no
    profile event at all), and `_links` is never converted (no link map is built)."""
    events: list[tuple[str, str]] = []

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        events.append((event, frame.f_code.co_name if event == "call" else repr(arg)))

    def read(creditor: Any) -> Any:
        sys.setprofile(profile)
        try:
            return creditor.self
        finally:
            sys.setprofile(None)

    async def scenario() -> Any:
        async with demo.async_client() as client:
            creditor = await client.get_creditors(reference="democreditor")
            return creditor, read(creditor)

    if face == "async":
        creditor, link = asyncio.run(scenario())
    else:
        with demo.client() as client:
            creditor = client.get_creditors(reference="democreditor")
            link = read(creditor)
    assert link.href.endswith("/creditors/democreditor")
    assert type(link) is (rp.AsyncLink if face == "async" else rp.Link)
    assert [e for e in events if e[0] != "c_return"] == [("c_call", repr(sys.setprofile))]
    assert creditor._link_map is None
    assert creditor.self is link and creditor.links["self"] is link


# The suite runs with an OpenTelemetry SDK installed (otel_kit.py): the tests above count the
# crossings with telemetry on and recording. Telemetry on with no SDK configured (the no-op
# tracer, docs/guides/observability-otel.md), with or without an incoming trace context to
# propagate, needs a fresh interpreter: an SDK, once set, stays for the life of the process.
NO_SDK = """
import asyncio, sys
from opentelemetry import context, propagate, trace
from recurring_payments.testing import FakeServer
from test_crossings import counting

incoming = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
if {incoming}:
    context.attach(propagate.extract({{"traceparent": incoming}}))
seen = []

async def follow_async(client):
    return (await client.get_creditors(reference="democreditor"))._doc.get("name")

with FakeServer(demo=True) as server:
    if {is_async}:
        async def scenario():
            async with server.async_client() as client:
                assert client._session.telemetry is not None
                await follow_async(client)  # warm
                sys.setprofile(counting(seen))
                try:
                    return await follow_async(client)
                finally:
                    sys.setprofile(None)
        name = asyncio.run(scenario())
    else:
        with server.client() as client:
            assert client._session.telemetry is not None
            client.get_creditors(reference="democreditor")  # warm
            sys.setprofile(counting(seen))
            try:
                name = client.get_creditors(reference="democreditor")._doc.get("name")
            finally:
                sys.setprofile(None)
    assert name == "Demo Creditor SAS"
    sent = {{r.headers.get("traceparent") for r in server.requests}}
    assert sent == ({{incoming}} if {incoming} else {{None}}), sent
assert trace._TRACER_PROVIDER is None  # no SDK: the no-op tracer
print(seen)
"""


@pytest.mark.parametrize("face", ["sync", "async"])
@pytest.mark.parametrize("incoming", [False, True], ids=["empty context", "incoming context"])
def test_telemetry_on_without_an_sdk_crosses_as_often(face: str, incoming: bool) -> None:
    pytest.importorskip("opentelemetry.trace")
    source = NO_SDK.format(is_async=face == "async", incoming=incoming)
    here = os.path.dirname(__file__)  # for `from test_crossings import counting`
    done = subprocess.run(
        [sys.executable, "-c", source],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([here, os.environ.get("PYTHONPATH", "")])},
    )
    assert done.returncode == 0, done.stderr
    seen = ast.literal_eval(done.stdout.strip().splitlines()[-1])
    assert len(seen) <= 2, seen
