"""Django views: start a customer's onboarding, and show an order's state.

One ``rp.Client`` per process, created on first use and shared by every thread of the worker
(the client is thread-safe and keeps the token and the connection pool for all requests).
Under gunicorn with or without ``--preload``, each forked worker gets its own I/O runtime and
pool: the client is fork-safe, so creating it at import time would work too, but lazily is
cheaper for workers that never call the API.

Settings: ``RECURRING_PAYMENTS = {"BASE_URL": ..., "PROFILE": ..., "APP_NAME": ...,
"APP_SECRET": ...}`` in ``settings.py``, or, when absent, the ``RECURRING_PAYMENTS_*``
environment variables that ``rp.Client.from_env()`` reads.

urls.py::

    path("onboarding/", views.start, name="onboarding-start"),
    path("orders/<str:order_id>/", views.order, name="order"),
    path("notifications/", views.notification, name="notification"),
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

import recurring_payments as rp

from .onboarding import Customer, http_error_for, order_state, start_onboarding

logger = logging.getLogger(__name__)

_client: rp.Client | None = None
_client_lock = threading.Lock()


def get_client() -> rp.Client:
    """The process's shared client, created on first use."""
    global _client
    if _client is None:
        with _client_lock:  # two threads of a fresh worker must not build two clients
            if _client is None:
                _client = _build_client()
    return _client


def _build_client() -> rp.Client:
    conf: dict[str, str] | None = getattr(settings, "RECURRING_PAYMENTS", None)
    if conf is None:
        return rp.Client.from_env()
    return rp.Client(
        conf["BASE_URL"],
        credentials=rp.AppCredentials(conf["APP_NAME"], conf["APP_SECRET"]),
        profile=conf["PROFILE"],
        rel_namespace=conf.get("REL_NAMESPACE"),
    )


def close_client() -> None:
    """Forget the shared client (tests, or settings that changed)."""
    global _client
    with _client_lock:
        if _client is not None:
            _client.close()
        _client = None


View = Callable[..., HttpResponse]


def api_errors_as_responses(view: View) -> View:
    """Answer the customer with a plain status when the API call fails; log the detail."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            return view(request, *args, **kwargs)
        except rp.Error as exc:
            status, message = http_error_for(exc)
            if exc.outcome_unknown:  # the order may exist: someone reconciles it by reference
                logger.error("payments API call with an unknown outcome: %s", exc)
            else:
                logger.warning("payments API call failed: %s", exc)
            return HttpResponse(message, status=status, content_type="text/plain")

    return wrapper


@require_POST
@api_errors_as_responses
def start(request: HttpRequest) -> HttpResponse:
    """POST the customer's details; redirects their browser to the checkout page."""
    try:
        customer = Customer(
            reference=request.POST["reference"],
            email=request.POST["email"],
            given_name=request.POST["given_name"],
            family_name=request.POST["family_name"],
        )
    except KeyError as missing:
        return HttpResponse(f"missing field {missing}", status=400, content_type="text/plain")
    onboarding = start_onboarding(get_client(), customer)
    return HttpResponseRedirect(onboarding.approval_url)


@require_GET
@api_errors_as_responses
def order(request: HttpRequest, order_id: str) -> HttpResponse:
    """The order's state as JSON."""
    return JsonResponse({"id": order_id, "state": order_state(get_client(), order_id)})


# What the notifications said, by resource URL: stands for the app's own bookkeeping (an
# order's state in its database).
notified: dict[str, Any] = {}


@csrf_exempt  # the API posts without Django's CSRF token: verify_notification is the check
@require_POST
def notification(request: HttpRequest) -> HttpResponse:
    """The app's notification URL: the API POSTs a HAL document naming a resource. Nothing in
    the body is trusted: the resource is fetched from the API (its ``self`` link, which must be
    on the API's origin) and only that answer is used."""
    try:
        resource = get_client().verify_notification(request.body)  # the raw bytes
    # Not a notification of this API (refused before anything was sent; its message begins
    # "notification refused:"), or one naming a resource the API does not serve: a forgery or
    # a mistake, not worth a retry.
    except rp.ProtocolError as exc:
        logger.warning("%s", exc)
        return HttpResponse(status=400)
    except rp.ClientError as exc:
        logger.warning("notification refused: %s", exc)
        return HttpResponse(status=400)
    except rp.Error as exc:  # the API could not confirm it now: ask the sender to try again
        logger.warning("notification not confirmed: %s", exc)
        return HttpResponse(status=503)
    notified[resource.url or ""] = resource.get("state")
    return HttpResponse(status=204)
