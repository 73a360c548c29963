"""Mistakes `mypy --strict` must report (checked by `make lint`, never run).

Each line carries the `# type: ignore[code]` of the error it must cause; strict mode's
`warn_unused_ignores` fails the check if an error disappears (a type became too loose) and an
error with another code fails it too.
"""

from __future__ import annotations

import recurring_payments as rp
from recurring_payments.testing import FakeServer


async def _provider_async() -> rp.AppCredentials:
    return rp.AppCredentials("a", "b")


def sync_misuse(client: rp.Client, res: rp.Resource, token: rp.Token) -> None:
    rp.Client("https://x", rp.AppCredentials("a", "b"), "p")  # type: ignore[call-arg]
    rp.Client("https://x", credentials=rp.AppCredentials("a", "b"))  # type: ignore[call-arg]
    rp.Client("https://x", credentials=("a", "b"), profile="p")  # type: ignore[arg-type]
    client.with_options(credentials="app:secret")  # type: ignore[arg-type]
    rp.Client("https://x", credentials=_provider_async, profile="p")  # type: ignore[arg-type]
    client.post("/orders")  # type: ignore[call-arg]
    client.patch("/orders/1")  # type: ignore[call-arg]
    client.get("/orders", "o-1")  # type: ignore[call-arg]
    client.get_creditors("democreditor")  # type: ignore[arg-type]
    client.get_creditors.get("democreditor")  # type: ignore[arg-type]
    res.follow("get-creditors", "democreditor")  # type: ignore[arg-type]
    res.url.startswith("https")  # type: ignore[union-attr]
    token.scope = "api_admin"  # type: ignore[misc]
    rp.AppCredentials("a", "b").app_secret = "c"  # type: ignore[misc]
    rp.expand_uri_template("{x}")  # type: ignore[call-arg]
    count: int = client.root()  # type: ignore[assignment]
    status: int = res.status  # type: ignore[assignment]
    del count, status


async def async_misuse(client: rp.AsyncClient, server: FakeServer) -> None:
    res: rp.AsyncResource = client.get("/")  # type: ignore[assignment]
    for page in (await client.root()).pages():  # type: ignore[attr-defined]
        del page
    with client:  # type: ignore[attr-defined]
        pass
    server.fail_next("503")  # type: ignore[arg-type]
    await client.get_creditors("democreditor")  # type: ignore[arg-type]
    await (await client.root()).follow("get-creditors", "x")  # type: ignore[arg-type]
    del res
