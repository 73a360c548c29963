"""Conditional updates end to end (docs/guides/errors.md#conditional-updates): the sandbox's strong
ETags and `if_match=` (on both faces in test_faces.py). A PATCH with a stale ETag is a
PreconditionFailedError and changes nothing."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import recurring_payments as rp
from recurring_payments.testing import FakeServer

pytestmark = pytest.mark.attack("money")


@pytest.fixture
def demo() -> Iterator[FakeServer]:
    with FakeServer(demo=True) as server:
        yield server


def test_a_stale_etag_is_refused_and_nothing_changes(demo: FakeServer) -> None:
    with demo.client() as client:
        order = client.create_orders.post({"reference": "o-1"})
        assert order.etag and order.etag.startswith('"')
        patched = order.links["self"].patch({"started": True}, if_match=order.etag)
        assert patched["started"] is True and patched.etag != order.etag
        with pytest.raises(rp.PreconditionFailedError) as caught:
            client.patch(order.url, {"started": False}, if_match=order.etag)
        assert caught.value.status == 412 and caught.value.code == 911
        assert caught.value.outcome_unknown is False
        assert client.get(order.url)["started"] is True  # the stale patch changed nothing
        again = client.patch(order.url, {"started": False}, if_match=patched.etag)
        assert again["started"] is False


def test_if_match_with_a_line_break_is_refused_before_sending(demo: FakeServer) -> None:
    with demo.client() as client:
        order = client.create_orders.post({"reference": "o-3"})
        demo.clear_requests()
        with pytest.raises(rp.ConfigurationError, match="if_match"):
            client.patch(order.url, {"started": True}, if_match='"x"\r\nX-Evil: 1')
        assert [r for r in demo.requests if r.method == "PATCH"] == []
