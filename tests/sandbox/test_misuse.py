"""Misusing the sandbox is a TypeError or ValueError of the sandbox, never a client error.

A test that passes the fake a bad argument must not get an ``rp.Error``: it would read like the
client's behaviour. Each message names the argument and what it accepts, and nothing changes.
"""

from __future__ import annotations

import errno
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from sandbox_http import Http

import recurring_payments as rp
from recurring_payments.testing import FakeServer


def _handler(request: Any) -> dict[str, Any]:
    return {}


# (call, exception, pattern the message matches): the pattern names the argument and, for a
# ValueError, what it accepts.
Misuse = tuple[Callable[[FakeServer], object], type[Exception], str]

CONSTRUCTOR: dict[str, Misuse] = {
    "token_ttl < 0": (lambda s: FakeServer(token_ttl=-1), ValueError, r"token_ttl .*>= 0"),
    "token_ttl nan": (lambda s: FakeServer(token_ttl=float("nan")), ValueError, "token_ttl"),
    "token_ttl str": (lambda s: FakeServer(token_ttl="60"), TypeError, "token_ttl .*number"),
    "demo not bool": (lambda s: FakeServer(demo="yes"), TypeError, "demo must be True or False"),
    "host not str": (lambda s: FakeServer(host=None), TypeError, "host must be a str"),
    "port too big": (lambda s: FakeServer(port=70_000), ValueError, "port .*0 to 65535"),
    "port < 0": (lambda s: FakeServer(port=-1), ValueError, "port .*0 to 65535"),
    "port str": (lambda s: FakeServer(port="80"), TypeError, "port must be an int"),
    "journal_limit < 0": (lambda s: FakeServer(journal_limit=-1), ValueError, "journal_limit"),
    "tls not bool": (lambda s: FakeServer(tls=1), TypeError, "tls must be True or False"),
}

REGISTRATION: dict[str, Misuse] = {
    # A query was dropped (the last of /things?kind=a and ?kind=b answered both), and the
    # token endpoint's path was accepted and never used.
    "resource path with a query": (
        lambda s: s.add_resource("/things?kind=a", {}),
        ValueError,
        "path must be a path without a query",
    ),
    "route with a query": (
        lambda s: s.route("GET", "/only?flag=1", _handler),
        ValueError,
        "path_template must be a path without a query",
    ),
    "route on the token endpoint": (
        lambda s: s.route("POST", "/oauth/token", _handler),
        ValueError,
        "own token endpoint",
    ),
    "resource at the token endpoint": (
        lambda s: s.add_resource("/oauth/token/", {}),
        ValueError,
        "own token endpoint",
    ),
    "app_name with ':'": (lambda s: s.add_app("a:b", "x"), ValueError, "app_name .*':'"),
    "app_name empty": (lambda s: s.add_app("", "x"), ValueError, "app_name .*non-empty"),
    "app_name not str": (lambda s: s.add_app(1, "x"), TypeError, "app_name must be a str"),
    "app_secret not str": (lambda s: s.add_app("a", None), TypeError, "app_secret"),
    "creditor with '#'": (lambda s: s.add_admin("c#1", "l", "p"), ValueError, "creditor .*'#'"),
    "login with ':'": (lambda s: s.add_admin("c", "a:b", "p"), ValueError, "login .*':'"),
    "login empty": (lambda s: s.add_admin("c", "", "p"), ValueError, "login .*non-empty"),
    "password not str": (lambda s: s.add_admin("c", "l", b"p"), TypeError, "password"),
    "rel self": (lambda s: s.add_link("self", "/x"), ValueError, "rel .*'self' and 'profile'"),
    "rel empty": (lambda s: s.add_link("", "/x"), ValueError, "rel must be a non-empty"),
    "href empty": (lambda s: s.add_link("x", ""), ValueError, "href must be a non-empty"),
    "templated not bool": (
        lambda s: s.add_link("x", "/x", templated="yes"),
        TypeError,
        "templated must be True or False",
    ),
    "admin_only not bool": (
        lambda s: s.add_link("x", "/x", admin_only=None),
        TypeError,
        "admin_only must be True or False",
    ),
    "resource path": (lambda s: s.add_resource("x", {}), ValueError, "path must start with '/'"),
    "resource not a dict": (
        lambda s: s.add_resource("/x", [1]),
        TypeError,
        "document must be a JSON object",
    ),
    "resource with NaN": (
        lambda s: s.add_resource("/x", {"n": float("nan")}),
        ValueError,
        "document must hold JSON values",
    ),
    "resource with an object": (
        lambda s: s.add_resource("/x", {"n": object()}),
        TypeError,
        "document must hold JSON values",
    ),
    "route method": (
        lambda s: s.route("DELETE", "/x", _handler),
        ValueError,
        "method must be GET, POST or PATCH",
    ),
    "route method not a token": (
        lambda s: s.route("G T", "/x", _handler),
        ValueError,
        "method must be GET, POST or PATCH",
    ),
    "route method not str": (lambda s: s.route(1, "/x", _handler), TypeError, "method"),
    "route template path": (
        lambda s: s.route("GET", "x", _handler),
        ValueError,
        "path_template must start with '/'",
    ),
    "route template segment": (
        lambda s: s.route("GET", "/x/a{id}", _handler),
        ValueError,
        "path_template parameters must be whole segments",
    ),
    "route template name": (
        lambda s: s.route("GET", "/x/{i-d}", _handler),
        ValueError,
        "path_template parameters are letters, digits and '_'",
    ),
    "route handler": (
        lambda s: s.route("GET", "/x", None),
        TypeError,
        "handler must be callable",
    ),
    "advance_clock < 0": (lambda s: s.advance_clock(-1), ValueError, "seconds .*>= 0"),
    "advance_clock str": (lambda s: s.advance_clock("5"), TypeError, "seconds must be a number"),
}

FAULTS: dict[str, Misuse] = {
    "fail_next 200": (lambda s: s.fail_next(200), ValueError, "status .*400 to 599, not 200"),
    "fail_next 70000": (lambda s: s.fail_next(70_000), ValueError, "status .*400 to 599"),
    "fail_next str": (lambda s: s.fail_next("503"), TypeError, "status must be an int"),
    "fail_next count 0": (
        lambda s: s.fail_next(503, count=0),
        ValueError,
        "count must be an int >= 1, not",
    ),
    "fail_next count float": (lambda s: s.fail_next(503, 1.5), TypeError, "count must be an int"),
    "fail_next path": (
        lambda s: s.fail_next(503, path="orders"),
        ValueError,
        "path must be None, a path starting with '/'",
    ),
    "fail_next path not str": (lambda s: s.fail_next(503, path=1), TypeError, "path must be"),
    "fail_next headers list": (
        lambda s: s.fail_next(503, headers=[("A", "b")]),
        TypeError,
        "headers must be a mapping",
    ),
    "fail_next header value int": (
        lambda s: s.fail_next(503, headers={"Retry-After": 1}),
        TypeError,
        "headers must be a mapping of str to str",
    ),
    "fail_next header name": (
        lambda s: s.fail_next(503, headers={"Bad Name": "x"}),
        ValueError,
        "headers: .*not a valid header name",
    ),
    "fail_next header value": (
        lambda s: s.fail_next(503, headers={"X-A": "a\nb"}),
        ValueError,
        "headers: the value of",
    ),
    "fail_next framing header": (
        lambda s: s.fail_next(503, headers={"Content-Length": "3"}),
        ValueError,
        "headers: .*cannot be given",
    ),
    "drop_next count": (lambda s: s.drop_next(0), ValueError, "count must be an int >= 1, not"),
    "drop_next path": (lambda s: s.drop_next(path="x"), ValueError, "path must be None"),
    "delay_next < 0": (lambda s: s.delay_next(-1), ValueError, "seconds .*>= 0"),
    "delay_next nan": (lambda s: s.delay_next(float("nan")), ValueError, "seconds"),
    "delay_next str": (lambda s: s.delay_next("1"), TypeError, "seconds must be a number"),
    "delay_next count": (
        lambda s: s.delay_next(1, count=-1),
        ValueError,
        "count must be an int >= 1",
    ),
    "malformed_next count": (lambda s: s.malformed_next(True), TypeError, "count must be an int"),
    "malformed_next path": (lambda s: s.malformed_next(path=""), ValueError, "path must be"),
    "respond_next status": (
        lambda s: s.respond_next(b"", status=101),
        ValueError,
        "status .*200 to 599",
    ),
    "respond_next body": (lambda s: s.respond_next(123), TypeError, "body must be bytes or str"),
    "respond_next repeat": (lambda s: s.respond_next(b"", repeat=0), ValueError, "repeat .*>= 1"),
    "respond_next cut_after": (
        lambda s: s.respond_next(b"", cut_after=-1),
        ValueError,
        "cut_after",
    ),
    "respond_next chunk_delay": (
        lambda s: s.respond_next(b"", chunk_delay=-1),
        ValueError,
        "chunk_delay",
    ),
    "respond_next chunked": (
        lambda s: s.respond_next(b"", chunked="yes"),
        TypeError,
        "chunked must be True or False",
    ),
    "respond_next framing header": (
        lambda s: s.respond_next(b"", headers={"Transfer-Encoding": "chunked"}),
        ValueError,
        "headers: .*cannot be given",
    ),
}


@pytest.fixture(scope="module")
def idle() -> Iterator[FakeServer]:
    """Misuse needs no listening server: one that is never started."""
    yield FakeServer()


def _check(server: FakeServer, misuse: Misuse) -> None:
    call, expected, pattern = misuse
    with pytest.raises(expected) as caught:
        call(server)
    assert type(caught.value) is expected, repr(caught.value)  # a builtin, not a subclass
    assert not isinstance(caught.value, rp.Error)
    assert re.search(pattern, str(caught.value)), str(caught.value)


@pytest.mark.parametrize("case", CONSTRUCTOR, ids=str)
def test_constructor_misuse(idle: FakeServer, case: str) -> None:
    _check(idle, CONSTRUCTOR[case])


@pytest.mark.parametrize("case", REGISTRATION, ids=str)
def test_registration_misuse(idle: FakeServer, case: str) -> None:
    _check(idle, REGISTRATION[case])


@pytest.mark.parametrize("case", FAULTS, ids=str)
def test_fault_misuse(idle: FakeServer, case: str) -> None:
    _check(idle, FAULTS[case])


def test_misuse_changes_nothing(rp_server: FakeServer, http: Http) -> None:
    for misuse in FAULTS.values():
        with pytest.raises((TypeError, ValueError)):
            misuse[0](rp_server)
    token = http.token()
    # No fault was armed by a refused call: the next requests are answered normally.
    assert [http.api("GET", "/", token=token).status for _ in range(3)] == [200, 200, 200]


def test_a_port_in_use_is_an_os_error(rp_server: FakeServer) -> None:
    port = int(rp_server.base_url.rsplit(":", 1)[1])
    with pytest.raises(OSError, match="cannot listen") as caught:
        FakeServer(port=port).start()
    assert caught.value.errno == errno.EADDRINUSE
    assert not isinstance(caught.value, (rp.Error, ValueError))
