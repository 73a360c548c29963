"""An asyncio script: read every page of a creditor's mandates at once, and fetch a few full
mandates concurrently, with one ``rp.AsyncClient``.

    python examples/asyncio_onboarding.py

With ``RECURRING_PAYMENTS_BASE_URL`` (and the other variables ``Client.from_env`` reads) set,
it reads that environment (read-only); otherwise it starts the sandbox with its demo data.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections import Counter
from contextlib import ExitStack

import recurring_payments as rp
from recurring_payments.testing import FakeServer

CREDITOR = os.environ.get("CREDITOR_REFERENCE", "democreditor")
PAGE_SIZE = 25


async def survey(client: rp.AsyncClient) -> Counter[str]:
    """Mandates by state, every page requested concurrently once the first says how many."""
    creditor = await client.get_creditors(reference=CREDITOR)
    first = await creditor.get_mandates(size=PAGE_SIZE)
    pages = first["page"]["totalPages"]
    rest = await asyncio.gather(
        *(creditor.get_mandates(page=n, size=PAGE_SIZE) for n in range(1, pages))
    )
    mandates: list[rp.AsyncResource] = []
    for page in (first, *rest):
        items = page.embedded.get("mandates", [])  # HAL: one object or an array
        mandates += items if isinstance(items, list) else [items]
    print(f"{creditor['name']}: {len(mandates)} mandates on {pages} pages")

    # the page items are partial: fetch the first few in full, concurrently
    full = await asyncio.gather(*(m.fetch() for m in mandates[:5]))
    for mandate in full:
        print(f"  {mandate['reference']}  {mandate['state']:<8} {mandate['paymentScheme']}")
    return Counter(m["state"] for m in mandates)


async def main() -> int:
    with ExitStack() as stack:
        if os.environ.get("RECURRING_PAYMENTS_BASE_URL"):
            client = rp.AsyncClient.from_env()
        else:
            server = stack.enter_context(FakeServer(demo=True))
            print(f"(no RECURRING_PAYMENTS_BASE_URL: using the sandbox at {server.base_url})")
            client = server.async_client()
        async with client:
            started = time.perf_counter()
            try:
                states = await survey(client)
            except rp.Error as exc:
                print(f"failed: {exc}", file=sys.stderr)
                return 1
            elapsed = (time.perf_counter() - started) * 1000
            print(f"by state: {dict(sorted(states.items()))} ({elapsed:.0f} ms)")
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
