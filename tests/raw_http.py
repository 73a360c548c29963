"""Raw loopback peers for wire-level tests: an HTTP/1.1 server whose every byte the test writes
(an obs-folded header, `Content-Encoding: GZIP`, a `Location` with userinfo), and proxies: one
that forwards and records, one that answers 407, one that hangs. Each runs on daemon threads,
answers one request per connection (`Connection: close`) and is closed by its `with` block."""

from __future__ import annotations

import contextlib
import select
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Seen:
    """A request as it reached a raw peer: request line, headers (lower-case names), body."""

    method: str
    target: str
    headers: dict[str, str]
    body: bytes = b""
    raw_head: bytes = field(default=b"", repr=False)

    @property
    def path(self) -> str:
        return self.target.split("?", 1)[0]


def read_request(conn: socket.socket) -> Seen | None:
    """One request head and its `Content-Length` body, or None if the peer closed first."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    method, target, _ = lines[0].split(" ", 2)
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    while len(rest) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        rest += chunk
    return Seen(method, target, headers, rest[:length], head)


def response(status: int, body: bytes = b"", headers: list[tuple[str, str]] | None = None) -> bytes:
    """A complete HTTP/1.1 response; `headers` are written as given (any spelling)."""
    lines = [f"HTTP/1.1 {status} X"]
    lines += [f"{name}: {value}" for name, value in headers or []]
    lines += [f"Content-Length: {len(body)}", "Connection: close"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


class Peer:
    """A listening socket on 127.0.0.1 whose connections `serve` handles, each on a thread."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.1)
        self.port: int = self.listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.seen: list[Seen] = []
        self.connections = 0
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._open: list[socket.socket] = []
        self._accepting = threading.Thread(target=self._accept, daemon=True)

    def serve(self, conn: socket.socket) -> None:
        raise NotImplementedError

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.listener.accept()
            except OSError:
                continue
            self.connections += 1
            self._open.append(conn)
            thread = threading.Thread(target=self._serve_one, args=(conn,), daemon=True)
            self._threads.append(thread)
            thread.start()

    def _serve_one(self, conn: socket.socket) -> None:
        with contextlib.suppress(OSError), conn:
            conn.settimeout(30)
            self.serve(conn)

    def __enter__(self) -> Peer:
        self._accepting.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._accepting.join()
        self.listener.close()
        for conn in self._open:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
            conn.close()
        for thread in self._threads:
            thread.join(timeout=5)


class RawServer(Peer):
    """Answers each request with `answer(seen)`: the exact bytes to send."""

    def __init__(self, answer: Callable[[Seen], bytes]) -> None:
        super().__init__()
        self.answer = answer

    def serve(self, conn: socket.socket) -> None:
        seen = read_request(conn)
        if seen is None:
            return
        self.seen.append(seen)
        conn.sendall(self.answer(seen))


class ForwardingProxy(Peer):
    """An HTTP proxy that records every request it gets (`seen`, Proxy-Authorization
    included), forwards absolute-form requests to their target and tunnels CONNECT."""

    def serve(self, conn: socket.socket) -> None:
        seen = read_request(conn)
        if seen is None:
            return
        self.seen.append(seen)
        if seen.method == "CONNECT":
            host, _, port = seen.target.rpartition(":")
            upstream = socket.create_connection((host, int(port)), timeout=30)
            conn.sendall(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            _pipe(conn, upstream)
            return
        # http://host:port/path -> host, port, /path
        rest = seen.target.split("://", 1)[1]
        authority, _, path = rest.partition("/")
        host, _, port = authority.rpartition(":")
        lines = [f"{seen.method} /{path} HTTP/1.1"]
        for name, value in seen.headers.items():
            if name not in ("proxy-authorization", "proxy-connection", "connection"):
                lines.append(f"{name}: {value}")
        lines.append("connection: close")
        with socket.create_connection((host, int(port)), timeout=30) as upstream:
            upstream.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + seen.body)
            while chunk := upstream.recv(65536):
                conn.sendall(chunk)


class AuthRequiredProxy(Peer):
    """A proxy that answers every request, CONNECT included, with 407."""

    def serve(self, conn: socket.socket) -> None:
        seen = read_request(conn)
        if seen is None:
            return
        self.seen.append(seen)
        conn.sendall(response(407, headers=[("Proxy-Authenticate", 'Basic realm="corp"')]))


class HangingProxy(Peer):
    """A proxy that reads the request, records it and never answers."""

    def serve(self, conn: socket.socket) -> None:
        seen = read_request(conn)
        if seen is not None:
            self.seen.append(seen)
        while not self._stop.is_set():
            try:
                if not conn.recv(65536):
                    return
            except TimeoutError:
                continue


def _pipe(a: socket.socket, b: socket.socket) -> None:
    """Copy bytes both ways until either side closes."""

    def copy(src: socket.socket, dst: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while chunk := src.recv(65536):
                dst.sendall(chunk)
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)

    back = threading.Thread(target=copy, args=(b, a), daemon=True)
    back.start()
    copy(a, b)
    back.join(timeout=30)
    b.close()


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class CuttingProxy:
    """A TCP proxy to the server that can close every client connection while it is idle."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.peers: dict[socket.socket, socket.socket] = {}
        self.clients: list[socket.socket] = []
        self.cut_requested = threading.Event()
        self.cut_done = threading.Event()
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.run)
        self.thread.start()

    def run(self) -> None:
        while not self.stopping.is_set():
            if self.cut_requested.is_set():
                for c in self.clients:
                    self.drop(c)
                self.clients.clear()
                self.cut_requested.clear()
                self.cut_done.set()
            readable, _, _ = select.select([self.listener, *self.peers], [], [], 0.02)
            for s in readable:
                if s is self.listener:
                    c, _ = s.accept()
                    u = socket.create_connection(("127.0.0.1", self.upstream_port))
                    self.peers[c], self.peers[u] = u, c
                    self.clients.append(c)
                elif s in self.peers:
                    try:
                        data = s.recv(65536)
                    except OSError:
                        data = b""
                    if data:
                        self.peers[s].sendall(data)
                    else:
                        self.drop(s)
        for s in list(self.peers):
            self.drop(s)
        self.listener.close()

    def drop(self, s: socket.socket) -> None:
        other = self.peers.pop(s, None)
        s.close()
        if other is not None:
            self.peers.pop(other, None)
            other.close()

    def cut(self) -> None:
        self.cut_done.clear()
        self.cut_requested.set()
        assert self.cut_done.wait(5)

    def close(self) -> None:
        self.stopping.set()
        self.thread.join()
