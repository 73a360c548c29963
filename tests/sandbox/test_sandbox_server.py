"""FakeServer's life cycle and what tests register on it."""

from __future__ import annotations

import os
import socket
import threading
import time
import warnings

import pytest
from sandbox_http import Http

from recurring_payments.testing import FakeServer


def port_of(server: FakeServer) -> int:
    return int(server.base_url.rsplit(":", 1)[1])


def test_start_stop_frees_the_port() -> None:
    server = FakeServer()
    assert not server.running
    with pytest.raises(RuntimeError):
        server.base_url  # noqa: B018
    server.start()
    port = port_of(server)
    assert Http(server).api("GET", "/").status == 200
    server.stop()
    assert not server.running
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    # The port can be bound again at once.
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))
    server.stop()  # idempotent


def test_fixed_port_and_restart() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with FakeServer(port=port) as server:
        assert server.base_url == f"http://127.0.0.1:{port}"
        token = Http(server).token()
    # State survives a restart on the same port: the token is still valid.
    with server:
        assert Http(server).api("GET", "/", token=token).status == 200


def test_port_in_use_is_an_error(rp_server: FakeServer) -> None:
    with pytest.raises(OSError, match="cannot listen"):  # as socket.bind raises
        FakeServer(port=port_of(rp_server)).start()


def test_bad_arguments() -> None:
    with pytest.raises(ValueError):
        FakeServer(token_ttl=-1)
    with pytest.raises(ValueError):
        FakeServer(token_ttl=float("nan"))
    server = FakeServer()
    with pytest.raises(ValueError):
        server.advance_clock(-1)
    with pytest.raises(ValueError):
        server.fail_next(200)
    with pytest.raises(ValueError):
        server.drop_next(0)
    with pytest.raises(ValueError):
        server.add_resource("no-slash", {})
    with pytest.raises(TypeError):
        server.add_resource("/x", [1, 2])  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        server.route("DELETE", "/x", lambda r: {})
    with pytest.raises(ValueError):
        server.route("GET", "/x/a{id}", lambda r: {})
    with pytest.raises(ValueError):
        server.add_app("a:b", "x")


def test_credentials_are_masked(rp_server: FakeServer) -> None:
    creds = rp_server.credentials
    assert creds.app_name == "sandbox-app"
    assert creds.app_secret not in repr(creds)
    assert creds.app_secret not in str(creds)
    assert "***" in repr(creds)


def test_many_servers_at_once() -> None:
    servers = [FakeServer().start() for _ in range(20)]
    try:
        assert len({s.base_url for s in servers}) == 20
        tokens = [Http(s).token() for s in servers]
        for server, token in zip(servers, tokens, strict=True):
            assert Http(server).api("GET", "/", token=token).status == 200
        # A token of one server means nothing to another.
        assert Http(servers[0]).api("GET", "/", token=tokens[1]).status == 401
    finally:
        for server in servers:
            server.stop()


def os_threads() -> set[str]:
    return set(os.listdir("/proc/self/task"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="needs Linux /proc")
def test_stop_leaves_no_thread_behind() -> None:
    with FakeServer() as server:  # warms up the process's shared runtime
        Http(server).api("GET", "/")
    before = (threading.active_count(), os_threads())
    for _ in range(5):
        with FakeServer() as server:
            Http(server).api("GET", "/")
    # Threads of earlier tests' handlers may end meanwhile; none may be new.
    assert threading.active_count() <= before[0]
    assert os_threads() <= before[1]


def test_context_manager_stops_on_error() -> None:
    server = FakeServer()
    with pytest.raises(KeyError), server:
        raise KeyError("boom")
    assert not server.running


def test_add_resource_and_links(rp_server: FakeServer, http: Http) -> None:
    rp_server.add_link("get-thing", "/things/{id}", templated=True)
    rp_server.add_link("checkout", "https://checkout.example.invalid/x")
    rp_server.add_link("urn:x:full-rel", "/full")
    rp_server.add_resource("/things/1", {"id": 1, "_links": {"self": {"href": "/things/1"}}})
    links = http.api("GET", "/").json["_links"]
    ns, base = rp_server.rel_namespace, rp_server.base_url
    assert links[ns + "get-thing"] == {"href": base + "/things/{id}", "templated": True}
    assert links[ns + "checkout"] == {"href": "https://checkout.example.invalid/x"}
    assert links["urn:x:full-rel"] == {"href": base + "/full"}
    answer = http.api("GET", "/things/1?ignored=1")
    assert answer.json == {"id": 1, "_links": {"self": {"href": "/things/1"}}}
    rp_server.add_resource("/things/1", {"id": "replaced"})
    assert http.api("GET", "/things/1").json == {"id": "replaced"}


def test_admin_only_links(rp_server: FakeServer, http: Http) -> None:
    rp_server.add_admin("democreditor", "admin", "pw")
    rp_server.add_link("get-apps", "/apps", admin_only=True)
    rp_server.add_link("get-public", "/public")
    app_links = http.api("GET", "/").json["_links"]
    admin_token = http.token("api_admin", user="democreditor#admin", password="pw")
    admin_links = http.api("GET", "/", token=admin_token).json["_links"]
    ns = rp_server.rel_namespace
    assert ns + "get-apps" not in app_links
    assert ns + "get-public" in app_links
    assert ns + "get-apps" in admin_links
    assert ns + "get-public" in admin_links


def test_links_added_later_show_up(rp_server: FakeServer, http: Http) -> None:
    token = http.token()
    assert len(http.api("GET", "/", token=token).json["_links"]) == 2
    rp_server.add_link("later", "/later")
    links = http.api("GET", "/", token=token).json["_links"]
    assert links[rp_server.rel_namespace + "later"] == {"href": rp_server.base_url + "/later"}
    rp_server.add_link("later", "/moved", templated=True)
    links = http.api("GET", "/", token=token).json["_links"]
    assert links[rp_server.rel_namespace + "later"]["href"] == rp_server.base_url + "/moved"
    assert len(links) == 3


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_can_start_its_own_server(rp_server: FakeServer) -> None:
    parent_url = rp_server.base_url
    with warnings.catch_warnings():
        # Python 3.12+ warns about forking a process that has threads; that is the point.
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through its exit status
        code = 1
        try:
            if not rp_server.running:
                rp_server.start()
                ok = rp_server.base_url != parent_url
                ok = ok and Http(rp_server).api("GET", "/").status == 200
                rp_server.stop()
                code = 0 if ok else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert Http(rp_server).api("GET", "/").status == 200


def test_stop_does_not_wait_for_a_request_still_arriving() -> None:
    # A browser's half-sent request (headers not finished) is not waited for: a stop with one
    # open returns at once, where it used to wait out the whole grace (about 2 s).
    server = FakeServer().start()
    half = socket.create_connection(("127.0.0.1", port_of(server)))
    try:
        half.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
        time.sleep(0.2)  # the server has read what came
        started = time.monotonic()
        server.stop()
        assert time.monotonic() - started < 1.0
        half.settimeout(5)
        assert half.recv(100) == b""  # closed without an answer
    finally:
        half.close()
        server.stop()


def test_stop_lets_the_request_being_answered_finish() -> None:
    server = FakeServer(demo=True).start()
    client = server.client(retries=0)
    try:
        client.root()
        server.delay_next(0.5, path="/creditors")
        answers: list[object] = []

        def slow_call() -> None:
            try:
                answers.append(client.get_creditors(reference="democreditor")["name"])
            except Exception as exc:  # reported by the assertion below
                answers.append(exc)

        caller = threading.Thread(target=slow_call)
        caller.start()
        time.sleep(0.2)  # the request is being answered (delayed)
        server.stop()
        caller.join(timeout=10)
        assert answers == ["Demo Creditor SAS"]
    finally:
        client.close()
        server.stop()
