from __future__ import annotations

import pytest
from recurring_payments.testing import FakeServer
from sandbox_http import Http


@pytest.fixture
def http(rp_server: FakeServer) -> Http:
    return Http(rp_server)
