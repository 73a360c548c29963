"""``recurring-payments demo``: the onboarding flow a merchant implements, step by step.

By default it runs against the embedded sandbox (demo data); with ``--base-url``/``--profile``
and credentials in the environment it walks a real environment (read-only unless ``--create``).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any, TextIO

from .._client import Client
from ..errors import Error

ORDER = {
    "creditor": {"reference": "democreditor"},
    "subscriber": {"reference": "subscriber01"},
    "items": [
        {
            "type": "signMandate",
            "mandate": {
                "standard": "SEPA",
                "signatory": {
                    "honorificPrefix": "Mr",
                    "familyName": "Doe",
                    "givenName": "John",
                    "email": "john.doe@example.com",
                    "billingAddress": {
                        "street1": "27 rue des fleurs",
                        "postalCode": "75008",
                        "city": "Paris",
                        "country": "FR",
                    },
                },
            },
        }
    ],
    "started": True,
}


class _RequestPrinter(logging.Handler):
    """Prints the client's one DEBUG line per attempt as an indented, shortened line."""

    def __init__(self, out: TextIO, base_url: str) -> None:
        super().__init__(logging.DEBUG)
        self.out = out
        self.base_url = base_url.rstrip("/")

    def emit(self, record: logging.LogRecord) -> None:
        args = record.args if isinstance(record.args, tuple) else ()
        if len(args) != 5:
            return
        method, url, status, ms, attempt = args
        path = str(url).removeprefix(self.base_url) or "/"
        if len(path) > 52:
            path = path[:51] + "…"
        retry = f" (attempt {attempt})" if attempt != 1 else ""
        print(f"    {method:<5} {path:<52} {status:>3} {ms:6.1f} ms{retry}", file=self.out)


@contextmanager
def _printing_requests(out: TextIO, base_url: str) -> Iterator[None]:
    logger = logging.getLogger("recurring_payments")
    handler = _RequestPrinter(out, base_url)
    previous = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(previous)


def _step(out: TextIO, number: int, title: str) -> None:
    print(f"\n{number}. {title}", file=out)


def _show(out: TextIO, text: str) -> None:
    print(f"    -> {text}", file=out)


def walk(client: Client, out: TextIO, *, create: bool, expire: Any = None) -> None:
    """The flow itself; ``expire`` (sandbox only) makes the server's tokens run out."""
    started = time.perf_counter()
    _step(out, 1, "Get an access token (OAuth2 client credentials)")
    token = client.authenticate()
    _show(out, f"scope {token.scope}, valid {token.expires_in:.0f} s, jti {token.jti}")

    _step(out, 2, "Read the entry point")
    root = client.root()
    names = root._all_relations().attribute_names()
    _show(out, f"{len(root.links)} relations, e.g. {', '.join(names[:3])}")

    _step(out, 3, "Find the creditor")
    creditor = client.get_creditors(reference="democreditor")
    _show(out, f"{creditor.get('name')} ({creditor.get('reference')})")

    order = None
    if create:
        _step(out, 4, "Create an order to sign a SEPA mandate")
        order = client.create_orders.post(ORDER)
        _show(out, f"HTTP {order.status}, order {order.get('id')}, state {order.get('state')}")
        approval = order.links.get("user-approval")
        if approval is not None and not isinstance(approval, list):
            _show(out, "send the customer's browser to the checkout page:")
            print(f"       {approval.href}", file=out)

    _step(out, 5, "List the creditor's mandates, page by page")
    total = 0
    for page in creditor.get_mandates(size=40).pages():
        mandates = page.embedded.get("mandates") or []
        items = mandates if isinstance(mandates, list) else [mandates]
        total += len(items)
        info = page.get("page") or {}
        first = items[0].get("reference") if items else "-"
        _show(out, f"page {info.get('number', '?')}: {len(items)} mandates, first {first}")
    _show(out, f"{total} mandates in all")

    if order is not None and order.url:
        _step(out, 6, "Patch the order (JSON merge patch)")
        patched = client.patch(order.url, {"sendUserApproval": True})
        _show(out, f"HTTP {patched.status}, sendUserApproval = {patched.get('sendUserApproval')}")

    if expire is not None:
        _step(out, 7, "The token expires: the client renews it and replays, transparently")
        expire()
        again = client.get_creditors(reference="democreditor")
        _show(out, f"HTTP {again.status}: 401, one new token, one replay")

    elapsed = (time.perf_counter() - started) * 1000
    print(f"\nDone in {elapsed:.0f} ms.", file=out)


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Entry of ``recurring-payments demo``."""
    out = out or sys.stdout  # looked up now, so redirections (pytest's capsys) apply
    if getattr(args, "trace", False):
        try:
            import opentelemetry.sdk.trace  # noqa: F401
        except ImportError:
            print("recurring-payments demo: --trace needs opentelemetry-sdk", file=sys.stderr)
            return 2
    try:
        if args.base_url:
            os.environ.setdefault("RECURRING_PAYMENTS_BASE_URL", args.base_url)
            overrides = {"base_url": args.base_url}
            if args.profile:
                overrides["profile"] = args.profile
            with Client.from_env(**overrides) as client:
                print(f"Walking {client.base_url}", file=out)
                with _printing_requests(out, client.base_url), _traced(args, out, client):
                    walk(client, out, create=args.create)
            return 0
        from ..testing import FakeServer

        with FakeServer(demo=True) as server, server.client() as client:
            print(f"Sandbox with demo data at {server.base_url}", file=out)
            with _printing_requests(out, server.base_url), _traced(args, out, client):
                walk(client, out, create=True, expire=server.expire_tokens)
        return 0
    except Error as exc:
        print(f"recurring-payments demo: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1


def _traced(args: argparse.Namespace, out: TextIO, client: Client) -> AbstractContextManager[Any]:
    if not getattr(args, "trace", False):
        return nullcontext()
    from ._trace import tracing

    return tracing(out, client.base_url)


def add_parser(commands: Any) -> None:
    demo = commands.add_parser(
        "demo",
        help="walk the onboarding flow (on the embedded sandbox by default)",
        description=(
            "Walk the onboarding flow: token, entry point, creditor, order, mandates page by "
            "page, a merge patch, and token renewal. Runs on the embedded sandbox unless "
            "--base-url is given (credentials from RECURRING_PAYMENTS_* variables)."
        ),
    )
    demo.add_argument("--base-url", help="walk a real environment instead of the sandbox")
    demo.add_argument("--profile", help="the profile URL of that environment")
    demo.add_argument(
        "--create", action="store_true", help="also create an order on a real environment"
    )
    demo.add_argument(
        "--trace",
        action="store_true",
        help="print the OpenTelemetry spans of the walk (needs opentelemetry-sdk)",
    )
    demo.set_defaults(func=run)
