"""pytest plugin (entry point ``pytest11``): fixtures for testing code that uses the API."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ._client import Client
from .testing import FakeServer


@pytest.fixture
def rp_server() -> Iterator[FakeServer]:
    """A started :class:`~recurring_payments.testing.FakeServer`, stopped after the test."""
    with FakeServer() as server:
        yield server


@pytest.fixture
def rp_client(rp_server: FakeServer) -> Iterator[Client]:
    """A :class:`recurring_payments.Client` wired to ``rp_server``, closed after the test."""
    with rp_server.client() as client:
        yield client
