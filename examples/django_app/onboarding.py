"""The merchant's onboarding code, used by the Django app's views (and by the Flask example),
tested by ``examples/test_onboarding.py``: create an order that asks the customer to sign a
SEPA mandate, and send their browser to its ``user-approval`` link (the provider's checkout
page).

Keep code like this out of the views: it takes the client as an argument, so a test passes the
sandbox's client (``rp_client``) and a view passes the process's shared one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import recurring_payments as rp

CREDITOR = "democreditor"  # your creditor reference (the sandbox's demo creditor here)


@dataclass(frozen=True)
class Customer:
    reference: str  # your subscriber reference for this customer
    email: str
    given_name: str
    family_name: str


@dataclass(frozen=True)
class Onboarding:
    order_id: str
    approval_url: str  # where to redirect the customer's browser


def order_for(customer: Customer, *, creditor: str = CREDITOR) -> dict[str, Any]:
    """The body of ``create-orders`` for one mandate signature."""
    signatory = {
        "givenName": customer.given_name,
        "familyName": customer.family_name,
        "email": customer.email,
    }
    return {
        "creditor": {"reference": creditor},
        "subscriber": {"reference": customer.reference},
        "items": [{"type": "signMandate", "mandate": {"standard": "SEPA", "signatory": signatory}}],
        "started": True,
    }


def start_onboarding(client: rp.Client, customer: Customer) -> Onboarding:
    """POST the order (never retried by the client: no double order) and return where to send
    the customer. ``user-approval`` is on another origin: no token is ever sent there."""
    order = client.create_orders.post(order_for(customer))
    approval = order.links["user-approval"]
    if isinstance(approval, list):  # the API sends one; a list would be a protocol change
        raise rp.LinkNotFoundError("the order has several user-approval links")
    return Onboarding(order_id=order["id"], approval_url=approval.href)


def order_state(client: rp.Client, order_id: str) -> str:
    """The order's state (``open.running``, ``closed.completed``, ...); a GET, retried on
    connection errors and 502/503/504 by the client."""
    order = client.search_order_by_id(id=order_id)
    return str(order["state"])


CHECKING = "we are checking your order: please do not pay again, we will email you the outcome"


def http_error_for(exc: rp.Error) -> tuple[int, str]:
    """The HTTP status and message your site answers when the API call fails.

    The customer never sees the API's details; log ``exc`` (its message names the request and
    never contains a secret). "Please try again" is said only when nothing was created.
    """
    if exc.outcome_unknown:
        # The POST reached the API and no complete answer came (a timeout, a cut connection):
        # the order may exist. Trying again could create a second one; look it up later by
        # its reference instead (see `order_state`).
        return 202, CHECKING
    if isinstance(exc, rp.NotFoundError):
        return 404, "no such order"
    if isinstance(exc, rp.AuthenticationError):
        return 503, "payments are not available right now"  # our credentials: page someone
    if isinstance(exc, rp.ClientError) and exc.status == 409:
        return 409, "this order was already started"
    if isinstance(exc, rp.ClientError) and exc.status == 400:
        return 400, exc.message or "the payment provider refused these details"
    if isinstance(exc, rp.TimeoutError):
        return 504, "the payment provider did not answer in time; please try again"
    return 502, "the payment provider is unavailable; please try again"
