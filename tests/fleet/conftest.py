"""Fixtures of the fleet tests (API.md §10): a real redis-server per test.

Without redis-server the tests skip with the reason, except under CI=true, where they fail
(.ci/run installs it)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from redis_server import RedisServer, in_ci, missing_reason


@pytest.fixture
def redis() -> Iterator[RedisServer]:
    reason = missing_reason()
    if reason is not None:
        if in_ci():
            pytest.fail(f"fleet tests need Redis under CI: {reason}")
        pytest.skip(reason)
    server = RedisServer().start()
    try:
        yield server
    finally:
        server.close()
