"""A Flask app that starts a customer's onboarding (app factory, one client per process).

The client lives in ``app.extensions["recurring_payments"]``, created on first use from
``app.config["RECURRING_PAYMENTS"]`` (a dict of ``BASE_URL``, ``PROFILE``, ``APP_NAME``,
``APP_SECRET``) or, when absent, the ``RECURRING_PAYMENTS_*`` environment variables. It is
thread-safe and fork-safe: run it with ``gunicorn -w 4 'flask_app:create_app()'``, with or
without ``--preload``. The onboarding logic it calls is the Django example's
(``django_app/onboarding.py``, which imports nothing of Django).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from django_app.onboarding import Customer, http_error_for, order_state, start_onboarding
from flask import Flask, current_app, jsonify, redirect, request
from werkzeug.wrappers import Response

import recurring_payments as rp

EXTENSION = "recurring_payments"
_lock = threading.Lock()


def get_client() -> rp.Client:
    """The app's shared client, created on first use."""
    extensions = current_app.extensions
    client: rp.Client | None = extensions.get(EXTENSION)
    if client is None:
        with _lock:  # two threads of a fresh worker must not build two clients
            client = extensions.get(EXTENSION)
            if client is None:
                client = extensions[EXTENSION] = _build_client(current_app.config)
    return client


def _build_client(config: Mapping[str, Any]) -> rp.Client:
    conf = config.get("RECURRING_PAYMENTS")
    if conf is None:
        return rp.Client.from_env()
    return rp.Client(
        conf["BASE_URL"],
        credentials=rp.AppCredentials(conf["APP_NAME"], conf["APP_SECRET"]),
        profile=conf["PROFILE"],
        rel_namespace=conf.get("REL_NAMESPACE"),
    )


def create_app(config: Mapping[str, Any] | None = None) -> Flask:
    app = Flask(__name__)
    app.config.update(config or {})

    @app.errorhandler(rp.Error)
    def api_error(exc: rp.Error) -> tuple[str, int]:
        status, message = http_error_for(exc)
        if exc.outcome_unknown:  # the order may exist: someone reconciles it by reference
            app.logger.error("payments API call with an unknown outcome: %s", exc)
        else:
            app.logger.warning("payments API call failed: %s", exc)
        return message, status

    @app.post("/onboarding/")
    def start() -> Response | tuple[str, int]:
        form = request.form
        missing = [f for f in ("reference", "email", "given_name", "family_name") if f not in form]
        if missing:
            return f"missing field(s) {', '.join(missing)}", 400
        customer = Customer(
            reference=form["reference"],
            email=form["email"],
            given_name=form["given_name"],
            family_name=form["family_name"],
        )
        onboarding = start_onboarding(get_client(), customer)
        return redirect(onboarding.approval_url)

    @app.get("/orders/<order_id>/")
    def order(order_id: str) -> Response:
        return jsonify(id=order_id, state=order_state(get_client(), order_id))

    return app
