"""The cold start: what a short script pays before its first answer. One fresh process per run
imports the client, gets a token, fetches the entry point and follows one templated link (the
sequential follow's work, once). bench.py's ``cold`` workload runs it and times the whole
process from outside, interpreter start-up included; ``python`` alone (no import, no request)
is the reference of what the interpreter itself takes.

    python benches/cold_start.py CLIENT      (the server as bench.child_server() reads it;
                                              plain HTTP: bench.py runs it on no HTTPS server)

Each client's code is what its user would write, with its own imports only: importing bench.py
here (argparse, asyncio, statistics, ...) would add the same milliseconds to every client.
"""

from __future__ import annotations

import os
import sys

# No import of json or typing up here: `python alone` is the interpreter and nothing else.

ID = "MD0003"
FORM = {"grant_type": "client_credentials", "scope": "api"}
JSON = {"Accept": "application/json"}  # the token endpoint answers JSON only


def _server() -> tuple[str, str, str, tuple[str, str]]:
    import json

    name, base, profile, app = json.loads(os.environ["BENCH_CHILD_SERVER"])[:4]
    return name, base, profile, (app[0], app[1])


def _accept(profile: str) -> str:
    return f'application/hal+json; profile="{profile}"'


def _template(root: dict) -> str:
    return next(v["href"] for k, v in root["_links"].items() if k.endswith("#bench-mandate"))


def _check(doc: dict) -> None:
    if not (doc["status"] and doc["_links"]["creditor"]["href"]):
        raise AssertionError(doc)


def python() -> None:
    """The interpreter alone: the part of every client's time that no client can cut."""


def recurring_payments() -> None:
    import recurring_payments as rp

    _, base, profile, app = _server()
    client = rp.Client(
        base, credentials=rp.AppCredentials(*app), profile=profile, rel_namespace=base + "/alps#"
    )
    mandate = client.bench_mandate(id=ID)
    if not (mandate["status"] and mandate.creditor.href):
        raise AssertionError(mandate)
    client.close()


def requests() -> None:
    import requests
    import uritemplate

    _, base, profile, app = _server()
    with requests.Session() as session:
        reply = session.post(base + "/oauth/token", data=FORM, auth=app, headers=JSON)
        reply.raise_for_status()
        session.headers["Authorization"] = "Bearer " + reply.json()["access_token"]
        session.headers["Accept"] = _accept(profile)
        root = session.get(base + "/").json()
        reply = session.get(uritemplate.expand(_template(root), id=ID))
        reply.raise_for_status()
        _check(reply.json())


def httpx() -> None:
    import httpx
    import uritemplate

    _, base, profile, app = _server()
    with httpx.Client() as client:
        token = client.post(base + "/oauth/token", data=FORM, auth=app, headers=JSON)
        token.raise_for_status()
        client.headers["Authorization"] = "Bearer " + token.json()["access_token"]
        client.headers["Accept"] = _accept(profile)
        root = client.get(base + "/").raise_for_status().json()
        _check(client.get(uritemplate.expand(_template(root), id=ID)).raise_for_status().json())


def urllib3() -> None:
    import uritemplate
    import urllib3

    _, base, profile, app = _server()
    pool = urllib3.PoolManager()
    basic = {**urllib3.make_headers(basic_auth=":".join(app)), **JSON}
    reply = pool.request(
        "POST", base + "/oauth/token", fields=FORM, encode_multipart=False, headers=basic
    )
    token = reply.json()["access_token"]
    headers = {"Accept": _accept(profile), "Authorization": "Bearer " + token}
    root = pool.request("GET", base + "/", headers=headers).json()
    reply = pool.request("GET", uritemplate.expand(_template(root), id=ID), headers=headers)
    if reply.status != 200:
        raise AssertionError(reply.status)
    _check(reply.json())


def niquests() -> None:
    import niquests
    import uritemplate

    _, base, profile, app = _server()
    with niquests.Session() as session:
        reply = session.post(base + "/oauth/token", data=FORM, auth=app, headers=JSON)
        reply.raise_for_status()
        session.headers["Authorization"] = "Bearer " + reply.json()["access_token"]
        session.headers["Accept"] = _accept(profile)
        root = session.get(base + "/").json()
        reply = session.get(uritemplate.expand(_template(root), id=ID))
        reply.raise_for_status()
        _check(reply.json())


def pycurl_orjson() -> None:
    import orjson
    import pycurl
    import uritemplate

    _, base, profile, app = _server()
    curl, chunks = pycurl.Curl(), []
    curl.setopt(pycurl.WRITEFUNCTION, chunks.append)

    def perform(url: str) -> dict:
        chunks.clear()
        curl.setopt(pycurl.URL, url)
        curl.perform()
        if curl.getinfo(pycurl.RESPONSE_CODE) != 200:
            raise AssertionError(url)
        return orjson.loads(b"".join(chunks))

    curl.setopt(pycurl.HTTPHEADER, ["Accept: application/json"])
    curl.setopt(pycurl.USERPWD, ":".join(app))
    curl.setopt(pycurl.POSTFIELDS, "grant_type=client_credentials&scope=api")
    token = perform(base + "/oauth/token")["access_token"]
    curl.unsetopt(pycurl.USERPWD)
    curl.setopt(pycurl.HTTPGET, 1)
    curl.setopt(
        pycurl.HTTPHEADER, ["Accept: " + _accept(profile), "Authorization: Bearer " + token]
    )
    _check(perform(uritemplate.expand(_template(perform(base + "/")), id=ID)))
    curl.close()


def pyreqwest() -> None:
    import uritemplate
    from pyreqwest.client import SyncClientBuilder

    _, base, profile, app = _server()
    with SyncClientBuilder().error_for_status(True).build() as client:
        request = client.post(base + "/oauth/token").basic_auth(*app).form(FORM).headers(JSON)
        token = request.build().send()
        headers = {
            "Accept": _accept(profile),
            "Authorization": "Bearer " + token.json()["access_token"],
        }
        root = client.get(base + "/").headers(headers).build().send().json()
        url = uritemplate.expand(_template(root), id=ID)
        _check(client.get(url).headers(headers).build().send().json())


# bench.py's client names -> the function here (the interpreter's reference first), and the
# modules each needs: bench.py leaves out a client whose modules are not all installed.
CLIENTS = {
    "python alone (reference)": python,
    "recurring_payments": recurring_payments,
    "requests+uritemplate": requests,
    "httpx": httpx,
    "urllib3": urllib3,
    "niquests": niquests,
    "pycurl+orjson": pycurl_orjson,
    "pyreqwest": pyreqwest,
}
NEEDS = {
    "python alone (reference)": (),
    "recurring_payments": ("recurring_payments",),
    "requests+uritemplate": ("requests", "uritemplate"),
    "httpx": ("httpx", "uritemplate"),
    "urllib3": ("urllib3", "uritemplate"),
    "niquests": ("niquests", "uritemplate"),
    "pycurl+orjson": ("pycurl", "orjson", "uritemplate"),
    "pyreqwest": ("pyreqwest", "uritemplate"),
}

if __name__ == "__main__":
    CLIENTS[sys.argv[1]]()
