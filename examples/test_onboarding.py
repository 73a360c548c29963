"""A merchant's tests of its onboarding code (``django_app/onboarding.py``), with the pytest
plugin that ships with recurring_payments: ``rp_server`` (a strict sandbox of the API, empty,
on loopback) and ``rp_client`` (a client wired to it). Nothing to configure: installing the
package registers the fixtures.

Run: ``pytest examples/test_onboarding.py``
"""

from __future__ import annotations

from typing import Any

import pytest
from django_app.onboarding import Customer, http_error_for, order_state, start_onboarding

import recurring_payments as rp
from recurring_payments.testing import FakeServer, SandboxRequest

CUSTOMER = Customer("cust-42", "jane@example.com", "Jane", "Doe")
CHECKOUT = "https://checkout.example.com/approve?code=abc"


@pytest.fixture
def api(rp_server: FakeServer) -> FakeServer:
    """The two relations our code uses, answering like the real API."""
    rp_server.add_link("create-orders", "/orders")
    rp_server.add_link("search-order-by-id", "/orders/{id}", templated=True)

    def create(request: SandboxRequest) -> tuple[int, dict[str, Any]]:
        return 201, {
            "id": "o-1",
            "state": "open.running",
            "_links": {
                "self": {"href": "/orders/o-1"},
                rp_server.rel_namespace + "user-approval": {"href": CHECKOUT},
            },
        }

    rp_server.route("POST", "/orders", create)
    rp_server.route("GET", "/orders/{id}", lambda request: {"id": "o-1", "state": "open.running"})
    return rp_server


def posts(server: FakeServer) -> list[SandboxRequest]:
    return [r for r in server.requests if r.method == "POST" and r.path == "/orders"]


def test_the_customer_is_sent_to_the_checkout_page(api: FakeServer, rp_client: rp.Client) -> None:
    onboarding = start_onboarding(rp_client, CUSTOMER)
    assert onboarding.order_id == "o-1"
    assert onboarding.approval_url == CHECKOUT
    (sent,) = posts(api)  # the journal: what the API received
    assert sent.headers["content-type"] == "application/json"
    assert sent.json["subscriber"] == {"reference": "cust-42"}
    assert sent.json["items"][0]["mandate"]["signatory"]["email"] == "jane@example.com"
    # the checkout page is on another origin: the client never requested it, token or not
    assert all(r.path in ("/", "/orders", "/oauth/token") for r in api.requests)


def test_an_outage_never_creates_two_orders(api: FakeServer, rp_client: rp.Client) -> None:
    api.fail_next(status=503, path="/orders")
    with pytest.raises(rp.ServerError) as failure:
        start_onboarding(rp_client, CUSTOMER)
    assert http_error_for(failure.value) == (
        502,
        "the payment provider is unavailable; please try again",
    )
    assert len(posts(api)) == 1  # POST is never retried
    start_onboarding(rp_client, CUSTOMER)  # the customer tries again
    assert len(posts(api)) == 2


def test_a_post_timeout_does_not_invite_a_second_order(api: FakeServer) -> None:
    # The API received the order and answers too late: it may have created it.
    api.delay_next(2.0, path="/orders")
    with api.client(timeout=0.3, retries=0) as client:
        client.root()
        with pytest.raises(rp.TimeoutError) as failure:
            start_onboarding(client, CUSTOMER)
    assert failure.value.outcome_unknown
    status, message = http_error_for(failure.value)
    assert status == 202 and "do not pay again" in message and "try again" not in message
    assert len(posts(api)) == 1


def test_reads_are_retried_through_a_blip(api: FakeServer, rp_client: rp.Client) -> None:
    api.fail_next(status=503, path="/orders/o-1")
    assert order_state(rp_client, "o-1") == "open.running"
    assert [r.status for r in api.requests if r.path == "/orders/o-1"] == [503, 200]


def test_an_expired_token_is_renewed_transparently(api: FakeServer, rp_client: rp.Client) -> None:
    start_onboarding(rp_client, CUSTOMER)
    api.expire_tokens()  # as if the token's lifetime had passed on the server
    start_onboarding(rp_client, CUSTOMER)
    assert len(api.token_requests) == 2
    assert [r.status for r in posts(api)] == [201, 401, 201]  # one replay after the 401


def test_an_unknown_order_is_a_404_for_the_customer(api: FakeServer, rp_client: rp.Client) -> None:
    api.route("GET", "/orders/{id}", lambda request: (404, {"code": 902, "message": "no order"}))
    with pytest.raises(rp.NotFoundError) as failure:
        order_state(rp_client, "nope")
    assert failure.value.code == 902
    assert http_error_for(failure.value) == (404, "no such order")
