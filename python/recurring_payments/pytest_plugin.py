"""pytest plugin (entry point ``pytest11``): fixtures for testing code that uses the API."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .testing import FakeServer


@pytest.fixture
def rp_server() -> Iterator[FakeServer]:
    """A started :class:`~recurring_payments.testing.FakeServer`, stopped after the test."""
    with FakeServer() as server:
        yield server
