"""The benchmark harness (benches/) still runs: its documents load into the sandbox through
``serve --resources``' loader, and our client's side of each workload gives the right answers.
The peers are not installed here; `make bench` runs the real thing."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from recurring_payments.cli.serve import load_resources
from recurring_payments.testing import FakeServer

BENCHES = Path(__file__).parents[2] / "benches"


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[object]:
    monkeypatch.syspath_prepend(str(BENCHES))
    import bench as module
    import fixture

    fixture.main(tmp_path, "http://127.0.0.1:9")
    yield module
    for name in ("bench", "fixture"):
        sys.modules.pop(name, None)


def test_our_side_of_every_workload(bench: object, tmp_path: Path) -> None:
    with FakeServer() as server:
        load_resources(server, str(tmp_path / "sandbox.json"))
        target = bench.Server(  # type: ignore[attr-defined]
            "sandbox",
            server.base_url,
            server.profile,
            (server.credentials.app_name, server.credentials.app_secret),
        )
        follow, collection, close = bench.ours(target)  # type: ignore[attr-defined]
        for i in range(20):
            follow(i)
        assert collection() == sum(1 for n in range(5_000) if n % 7)
        close()

        async def run_async() -> float:
            follow, aclose = await bench.ours_async(target, 4)  # type: ignore[attr-defined]
            rate: float = await bench._drive(follow, 4, 0.1)  # type: ignore[attr-defined]
            await aclose()
            return rate

        assert asyncio.run(run_async()) > 0
    site = tmp_path / "site"
    assert (site / "index.json").exists() and (site / "bench" / "mandates" / "MD0003.json").exists()
