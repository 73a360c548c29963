"""Errors are plain data (docs/guarantees.md#errors-are-data): every `rp.Error`, raised by a real
request against the sandbox, survives pickle (every protocol), copy and deepcopy with its class,
message, args and attributes, and crosses a `multiprocessing.Pool` and a `ProcessPoolExecutor`
(spawn: the workers build their own client from plain data). A body nested too deep gives `.json is
None`, never a `RecursionError`. `retry_after`, `outcome_unknown`, `.headers` and
`PreconditionFailedError`.

Expected classes are named by string so that this module also runs (and fails test by test)
against a build without the new names."""

from __future__ import annotations

import concurrent.futures
import copy
import email.utils
import multiprocessing
import multiprocessing.pool
import os
import pickle
import signal
import socket
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, NamedTuple

import pytest

import recurring_payments as rp
from recurring_payments.testing import FakeServer

# How long a worker may take to answer: a regression fails the test instead of hanging it.
WORKER_TIMEOUT = 20.0
DEEP = "[" * 100_000


class Target(NamedTuple):
    """What a worker process needs to build its own client: plain data only."""

    base_url: str
    app_name: str
    app_secret: str
    profile: str
    rel_namespace: str
    refused_url: str  # a loopback port nobody listens on

    def __repr__(self) -> str:  # pytest prints fixtures' values; the secret watch checks it
        return f"Target({self.base_url!r}, app_secret='***')"

    def client(self, base_url: str | None = None, **settings: Any) -> rp.Client:
        credentials = rp.AppCredentials(self.app_name, self.app_secret)
        return rp.Client(
            base_url or self.base_url,
            credentials=credentials,
            profile=self.profile,
            rel_namespace=self.rel_namespace,
            **settings,
        )


def closed_port_url() -> str:
    # Bound then closed: connecting is refused (nobody else takes an ephemeral port this fast).
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def target_of(server: FakeServer) -> Target:
    credentials = server.credentials
    assert isinstance(credentials, rp.AppCredentials)
    return Target(
        server.base_url,
        credentials.app_name,
        credentials.app_secret,
        server.profile,
        server.rel_namespace,
        closed_port_url(),
    )


def _no_fault(server: FakeServer) -> None:
    pass


@dataclass(frozen=True)
class Case:
    """One way a real request fails: ``arm`` the sandbox (in the test process), ``act`` (in
    any process), and what the error must be."""

    expected: str  # the rp class name
    act: Callable[[Target], object]
    arm: Callable[[FakeServer], None] = _no_fault
    attributes: dict[str, Any] = field(default_factory=dict)


def _root(**settings: Any) -> Callable[[Target], object]:
    return lambda target: target.client(**settings).root()


def _reentered(target: Target) -> object:
    """A request started by a signal handler while this thread waits for another (the sync
    client runs handlers while it waits): InternalError. Needs the process's main thread."""
    if not hasattr(signal, "SIGUSR1"):  # Windows
        pytest.skip("needs SIGUSR1 to interrupt the waiting thread")
    seen: list[rp.Error] = []
    with target.client(retries=0) as client:

        def on_signal(signum: int, frame: object) -> None:
            try:
                client.get("/")
            except rp.Error as exc:
                seen.append(exc)

        previous = signal.signal(signal.SIGUSR1, on_signal)
        try:
            timer = threading.Timer(0.1, os.kill, (os.getpid(), signal.SIGUSR1))
            timer.start()
            client.get("/")  # answered after the delay armed on "/"
            timer.join()
        finally:
            signal.signal(signal.SIGUSR1, previous)
    raise seen[0]


CASES: dict[str, Case] = {
    "configuration": Case(
        "ConfigurationError",
        lambda t: t.client(base_url="http://api.example.com"),
    ),
    "internal": Case("InternalError", _reentered, lambda s: s.delay_next(1.0, path="/")),
    "template": Case("TemplateError", lambda t: t.client().get("/orders{?reference")),
    "link_not_found": Case("LinkNotFoundError", lambda t: t.client().root().get_nothing),
    "refused": Case(
        "TransportError",
        lambda t: t.client(base_url=t.refused_url, retries=0).root(),
        attributes={"method": "POST"},  # the token request is the first one refused
    ),
    "dropped": Case(
        "TransportError",
        _root(retries=0),
        lambda s: s.drop_next(path="/"),
        {"method": "GET"},
    ),
    "timeout": Case(
        "TimeoutError",
        _root(timeout=0.2, retries=0),
        lambda s: s.delay_next(1.0, path="/"),
        {"method": "GET"},
    ),
    "http": Case(
        "HTTPError",
        _root(retries=0),
        lambda s: s.respond_next('{"code": 7, "message": "multiple"}', status=300, path="/"),
        {"status": 300, "code": 7, "message": "multiple"},
    ),
    "client": Case(
        "ClientError",
        _root(),
        lambda s: s.fail_next(418),
        {"status": 418, "method": "GET", "code": 999, "retry_after": None},
    ),
    "conflict": Case(
        "ConflictError",
        _root(),
        lambda s: s.fail_next(409, headers={"X-Request-Id": "conflict-1"}),
        {"status": 409, "code": 999, "request_id": "conflict-1"},
    ),
    "rate_limit": Case(
        "RateLimitError",
        _root(retries=0),
        lambda s: s.fail_next(429, headers={"Retry-After": "3", "Request-Id": "rate-1"}),
        {"status": 429, "retry_after": 3.0, "request_id": "rate-1"},
    ),
    "authentication": Case(
        "AuthenticationError",
        lambda t: t._replace(app_secret="not-the-secret").client().root(),
        attributes={"status": 401, "error": "invalid_client"},
    ),
    "not_found": Case(
        "NotFoundError",
        lambda t: t.client().get("/nowhere"),
        attributes={"status": 404, "code": 902},
    ),
    "precondition_failed": Case(
        "PreconditionFailedError",
        _root(),
        lambda s: s.fail_next(412),
        {"status": 412, "code": 999},
    ),
    "server": Case(
        "ServerError",
        _root(retries=0),
        lambda s: s.fail_next(503, headers={"Retry-After": "7"}),
        {"status": 503, "retry_after": 7.0},
    ),
    "protocol": Case(
        "ProtocolError",
        _root(),
        lambda s: s.malformed_next(path="/"),
        {"method": "GET"},
    ),
}
# Every class of the tree that a request can raise, at least once.
CLASSES = {case.expected for case in CASES.values()}


def raise_in_worker(name: str, target: Target) -> str:
    """Run a case in a worker process: the error it raises travels back by pickle."""
    CASES[name].act(target)
    return f"{name}: no error raised"


def ok_in_worker(value: int) -> int:
    return value + 1


def raised(case: Case, server: FakeServer) -> rp.Error:
    case.arm(server)
    with pytest.raises(rp.Error) as caught:
        case.act(target_of(server))
    return caught.value


def data(err: BaseException) -> tuple[Any, ...]:
    """What must survive a round trip: class, message, args and every attribute."""
    attributes = {k: dict(v) if isinstance(v, Mapping) else v for k, v in vars(err).items()}
    return type(err), str(err), err.args, attributes


def check(err: BaseException, case: Case) -> None:
    assert type(err) is getattr(rp, case.expected), repr(err)
    assert err.outcome_unknown is False  # type: ignore[attr-defined]
    assert isinstance(err.headers, Mapping)  # type: ignore[attr-defined]
    for name, value in case.attributes.items():
        assert getattr(err, name) == value, name


@pytest.fixture
def target(server: FakeServer) -> Target:
    return target_of(server)


def test_every_class_is_covered() -> None:
    tree = {
        name
        for name in rp.__all__
        if isinstance(getattr(rp, name), type) and issubclass(getattr(rp, name), rp.Error)
    }
    assert tree - {"Error"} == CLASSES


@pytest.mark.parametrize("name", sorted(CASES))
def test_pickles_and_copies(name: str, server: FakeServer) -> None:
    case = CASES[name]
    err = raised(case, server)
    check(err, case)
    assert err.args == (str(err),)
    secret = target_of(server).app_secret
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        dumped = pickle.dumps(err, protocol)
        assert secret.encode() not in dumped
        received = pickle.loads(dumped)
        assert data(received) == data(err), protocol
        check(received, case)
    for copied in (copy.copy(err), copy.deepcopy(err)):
        assert data(copied) == data(err)
        check(copied, case)


def test_a_copy_is_not_rebuilt_from_its_message(server: FakeServer) -> None:
    # The restored error keeps what __init__ computed (here: the OAuth detail in the message,
    # `retry_after` relative to when it was raised), it does not parse anything again.
    err = raised(CASES["authentication"], server)
    assert str(err).count("invalid_client") == 1
    received = pickle.loads(pickle.dumps(err))
    assert str(received) == str(err) and received.error == err.error
    received.later = "added"
    assert pickle.loads(pickle.dumps(received)).later == "added"


@pytest.mark.skipif(sys.version_info < (3, 11), reason="exception notes are Python 3.11+")
def test_notes_survive(server: FakeServer) -> None:
    err = raised(CASES["not_found"], server)
    err.add_note("while loading the basket")
    assert pickle.loads(pickle.dumps(err)).__notes__ == ["while loading the basket"]


# -- across processes ---------------------------------------------------------------------------


class Workers:
    """A spawn-context pool (or executor) kept for the module; replaced when a test broke it, so
    that one regression fails its own test without hanging or breaking the next ones."""

    def __init__(self, make: Callable[[], Any], close: Callable[[Any], None]) -> None:
        self._make, self._close = make, close
        self._current: Any = None

    def get(self) -> Any:
        if self._current is None:
            self._current = self._make()
        return self._current

    def discard(self) -> None:
        if self._current is not None:
            current, self._current = self._current, None
            self._close(current)


def _close_pool(pool: multiprocessing.pool.Pool) -> None:
    pool.terminate()
    pool.join()


def _close_executor(executor: concurrent.futures.ProcessPoolExecutor) -> None:
    executor.shutdown(wait=True, cancel_futures=True)


@pytest.fixture(scope="module")
def pool() -> Iterator[Workers]:
    context = multiprocessing.get_context("spawn")
    workers = Workers(lambda: context.Pool(1), _close_pool)
    yield workers
    workers.discard()


@pytest.fixture(scope="module")
def executor() -> Iterator[Workers]:
    context = multiprocessing.get_context("spawn")
    workers = Workers(
        lambda: concurrent.futures.ProcessPoolExecutor(1, mp_context=context), _close_executor
    )
    yield workers
    workers.discard()


def _check_crossed(err: BaseException, case: Case, target: Target) -> None:
    check(err, case)
    assert err.args == (str(err),)
    url = getattr(err, "url", None)
    assert url is None or url.startswith((target.base_url, target.refused_url))


@pytest.mark.parametrize("name", sorted(CASES))
def test_crosses_a_multiprocessing_pool(name: str, server: FakeServer, pool: Workers) -> None:
    case, target = CASES[name], target_of(server)
    workers: multiprocessing.pool.Pool = pool.get()
    case.arm(server)
    result = workers.apply_async(raise_in_worker, (name, target))
    try:
        with pytest.raises(rp.Error) as caught:
            result.get(timeout=WORKER_TIMEOUT)
        _check_crossed(caught.value, case, target)
        # ... and the pool keeps working.
        assert workers.apply_async(ok_in_worker, (1,)).get(timeout=WORKER_TIMEOUT) == 2
    except BaseException:
        pool.discard()
        raise


@pytest.mark.parametrize("name", sorted(CASES))
def test_crosses_a_process_pool_executor(name: str, server: FakeServer, executor: Workers) -> None:
    case, target = CASES[name], target_of(server)
    workers: concurrent.futures.ProcessPoolExecutor = executor.get()
    case.arm(server)
    future = workers.submit(raise_in_worker, name, target)
    try:
        with pytest.raises(rp.Error) as caught:
            future.result(timeout=WORKER_TIMEOUT)
        _check_crossed(caught.value, case, target)
        assert workers.submit(ok_in_worker, 1).result(timeout=WORKER_TIMEOUT) == 2
    except BrokenProcessPool as broken:
        executor.discard()
        raise AssertionError(f"the error broke the executor: {broken!r}") from broken
    except BaseException:
        executor.discard()
        raise


# -- bodies nested too deep ---------------------------------------------------------------------


def nested(depth: int) -> str:
    """An error body whose deepest value sits ``depth`` containers down (the object counts)."""
    return '{"code": 5, "message": "deep", "detail": ' + "[" * (depth - 1) + "]" * (depth - 1) + "}"


def test_a_deep_500_body(server: FakeServer, target: Target) -> None:
    server.respond_next(DEEP, status=500, path="/")
    with pytest.raises(rp.ServerError) as caught:
        target.client(retries=0).root()
    err = caught.value
    assert (err.json, err.code, err.message) == (None, None, None)
    assert DEEP.startswith(err.body) and err.status == 500  # the first 64 KiB
    assert data(copy.deepcopy(err)) == data(err)


def test_a_deep_401_from_the_token_endpoint(server: FakeServer, target: Target) -> None:
    server.respond_next(DEEP, status=401, path="/oauth/token")
    with pytest.raises(rp.AuthenticationError) as caught:
        target.client().root()
    err = caught.value
    assert (err.json, err.code, err.message) == (None, None, None)
    assert (err.error, err.error_description) == (None, None)
    assert data(pickle.loads(pickle.dumps(err))) == data(err)


def test_a_deep_422_to_a_post(server: FakeServer, target: Target) -> None:
    server.route("POST", "/orders", lambda request: (201, {"id": 1}))
    server.respond_next('{"detail": ' + DEEP, status=422, path="/orders")
    with pytest.raises(rp.ClientError) as caught:
        target.client().post("/orders", {"amount": 1})
    err = caught.value
    assert (err.status, err.method) == (422, "POST")
    assert (err.json, err.code, err.message) == (None, None, None)
    assert data(copy.deepcopy(err)) == data(err)


@pytest.mark.parametrize("depth", [2, 100, 128])
def test_deep_but_within_the_limit_still_parses(
    depth: int, server: FakeServer, target: Target
) -> None:
    server.respond_next(nested(depth), status=500, path="/")
    with pytest.raises(rp.ServerError) as caught:
        target.client(retries=0).root()
    err = caught.value
    assert (err.code, err.message) == (5, "deep")
    assert isinstance(err.json, dict) and err.json["message"] == "deep"
    assert data(copy.deepcopy(err)) == data(err)
    assert data(pickle.loads(pickle.dumps(err))) == data(err)


@pytest.mark.parametrize("depth", [129, 900])
def test_past_the_limit_is_not_decoded(depth: int, server: FakeServer, target: Target) -> None:
    # 900 levels still decode with json.loads, but would break deepcopy (RecursionError) later.
    server.respond_next(nested(depth), status=500, path="/")
    with pytest.raises(rp.ServerError) as caught:
        target.client(retries=0).root()
    err = caught.value
    assert (err.json, err.code, err.message) == (None, None, None)
    assert data(copy.deepcopy(err)) == data(err)


def test_brackets_inside_strings_are_not_nesting(server: FakeServer, target: Target) -> None:
    body = '{"code": 5, "message": "' + "[" * 1000 + '"}'
    server.respond_next(body, status=500, path="/")
    with pytest.raises(rp.ServerError) as caught:
        target.client(retries=0).root()
    assert caught.value.code == 5 and caught.value.message == "[" * 1000


# -- Retry-After --------------------------------------------------------------------------------


def _retry_after(server: FakeServer, target: Target, value: str | None) -> Any:
    server.fail_next(503, headers={} if value is None else {"Retry-After": value})
    with pytest.raises(rp.ServerError) as caught:
        target.client(retries=0).root()
    return caught.value.retry_after


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("0", 0.0),
        ("120", 120.0),
        (" 3 ", 3.0),
        ("18446744073709551615", 18446744073709551615.0),  # u64::MAX, as the core reads it
        ("18446744073709551616", None),
        ("9" * 5000, None),
        ("-5", None),
        ("1.5", None),
        ("soon", None),
        ("", None),
        (None, None),
        ("Sun, 06 Nov 1994 08:49:37 GMT", 0.0),  # a date in the past: never negative
        ("Sunday, 06-Nov-94 08:49:37 GMT", 0.0),  # RFC 850
        ("Sun Nov  6 08:49:37 1994", 0.0),  # asctime
    ],
)
def test_retry_after(
    value: str | None, expected: float | None, server: FakeServer, target: Target
) -> None:
    assert _retry_after(server, target, value) == expected


def test_retry_after_as_a_future_date(server: FakeServer, target: Target) -> None:
    when = datetime.now(timezone.utc) + timedelta(seconds=120)
    seconds = _retry_after(server, target, email.utils.format_datetime(when, usegmt=True))
    assert 100 < seconds <= 120


def test_every_http_error_has_retry_after(server: FakeServer, target: Target) -> None:
    with pytest.raises(rp.NotFoundError) as caught:
        target.client().get("/nowhere")
    assert caught.value.retry_after is None


# -- outcome_unknown and headers on every error ------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda: rp.Error("x"),
        lambda: rp.ConfigurationError("x"),
        lambda: rp.TemplateError("x"),
        lambda: rp.LinkNotFoundError("x"),
        lambda: rp.TransportError("x"),
        lambda: rp.ProtocolError("x"),
    ],
)
def test_defaults_on_every_error(make: Callable[[], rp.Error]) -> None:
    err = make()
    assert err.outcome_unknown is False
    assert dict(err.headers) == {} and "Location" not in err.headers
    assert data(pickle.loads(pickle.dumps(err, 0))) == data(err)


def test_headers_are_case_insensitive_and_read_only(server: FakeServer, target: Target) -> None:
    server.fail_next(503, headers={"Retry-After": "1", "X-Request-Id": "r-1"})
    with pytest.raises(rp.ServerError) as caught:
        target.client(retries=0).root()
    headers = caught.value.headers
    assert headers["x-request-id"] == headers["X-Request-ID"] == "r-1"
    with pytest.raises(TypeError):
        headers["X-Request-Id"] = "r-2"  # type: ignore[index]
    received = pickle.loads(pickle.dumps(caught.value, 0)).headers
    assert received["X-REQUEST-ID"] == "r-1" and isinstance(received, rp.Headers)


def test_the_keyword_interface_of_the_rust_side() -> None:
    # What crates/python/src/errors.rs passes: a 201 whose body broke the protocol still says where.
    err = rp.ProtocolError(
        "POST http://h/orders: response body is not valid JSON",
        method="POST",
        url="http://h/orders",
        status=201,
        headers=[("Location", "http://h/orders/7"), ("Content-Type", "text/plain")],
    )
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        received = pickle.loads(pickle.dumps(err, protocol))
        assert received.status == 201 and received.headers["location"] == "http://h/orders/7"
    cut = rp.TimeoutError("POST http://h/orders: timed out", method="POST", outcome_unknown=True)
    assert copy.deepcopy(cut).outcome_unknown is True and isinstance(cut, TimeoutError)
    http = rp.ServerError(
        "GET http://h/: HTTP 503",
        status=503,
        method="GET",
        url="http://h/",
        headers=[("Retry-After", "2"), ("X-A", "1"), ("x-a", "2")],
        outcome_unknown=False,
    )
    assert (http.retry_after, http.headers["X-A"], http.outcome_unknown) == (2.0, "1, 2", False)


def test_headers_pickle_and_copy() -> None:
    headers = rp.Headers([("X-A", "1"), ("x-a", "2"), ("Set-Cookie", "a=1"), ("set-cookie", "b")])
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        received = pickle.loads(pickle.dumps(headers, protocol))
        assert dict(received) == dict(headers) == {"x-a": "1, 2", "set-cookie": "b"}
        assert repr(received) == repr(headers)
    assert copy.copy(headers) == copy.deepcopy(headers) == headers


# What the request path must fill in (crates/python/src/errors.rs, rewritten by the lead to pass
# the new keyword arguments). Strict: the day they pass, the marker must go.


def test_a_post_cut_after_it_was_written_has_an_unknown_outcome(
    server: FakeServer, target: Target
) -> None:
    server.route("POST", "/orders", lambda request: (201, {"id": 1}))
    server.drop_next(path="/orders")
    with pytest.raises(rp.TransportError) as caught:
        target.client().post("/orders", {"amount": 1})
    assert caught.value.outcome_unknown is True
    assert pickle.loads(pickle.dumps(caught.value)).outcome_unknown is True


def test_a_201_with_a_malformed_body_says_where(server: FakeServer, target: Target) -> None:
    location = f"{target.base_url}/orders/7"
    server.route("POST", "/orders", lambda request: (201, {"id": 7}))
    server.respond_next("not json", status=201, headers={"Location": location}, path="/orders")
    with pytest.raises(rp.ProtocolError) as caught:
        target.client().post("/orders", {"amount": 1})
    err = caught.value
    assert (err.status, err.headers.get("location"), err.outcome_unknown) == (201, location, False)
    assert pickle.loads(pickle.dumps(err)).headers["Location"] == location


# -- 412 ------------------------------------------------------------------------------------------


def test_412_is_precondition_failed(server: FakeServer, target: Target) -> None:
    import recurring_payments.errors

    cls = rp.PreconditionFailedError
    assert cls is recurring_payments.errors.PreconditionFailedError
    assert issubclass(cls, rp.ClientError) and "PreconditionFailedError" in rp.__all__
    server.fail_next(412, path="/")
    with pytest.raises(cls) as caught:
        target.client().root()
    assert caught.value.status == 412


def test_other_4xx_stay_client_errors(server: FakeServer, target: Target) -> None:
    server.fail_next(411, path="/")
    with pytest.raises(rp.ClientError) as caught:
        target.client().root()
    assert type(caught.value) is rp.ClientError
