"""A real ``redis-server`` for the fleet tests (and benches/fleet.py): started on a free
loopback port in a temporary directory without persistence, stopped (and restarted) at will;
plus a minimal RESP client, so the tests need no Redis package of their own."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from typing import Any


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class RedisServer:
    """``redis-server`` on ``127.0.0.1:<port>``; ``url`` is its ``redis://`` URL."""

    def __init__(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise FileNotFoundError("redis-server is not installed")
        self.binary = binary
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self._dir = tempfile.mkdtemp(prefix="rp-redis-")
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> RedisServer:
        self._process = subprocess.Popen(
            [
                self.binary,
                "--port", str(self.port),
                "--bind", "127.0.0.1",
                "--save", "",
                "--appendonly", "no",
                "--dir", self._dir,
                "--protected-mode", "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 10
        while True:
            try:
                if self.command("PING") == "PONG":
                    return self
            except OSError:
                pass
            if time.monotonic() > deadline or self._process.poll() is not None:
                self.stop()
                raise RuntimeError("redis-server did not start")
            time.sleep(0.02)

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            process.kill()
            process.wait()

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self._dir, ignore_errors=True)

    def command(self, *args: str | bytes | int) -> Any:
        """One command over a new connection; the decoded reply."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as s:
            s.sendall(encode(args))
            return Reply(s).read()

    def scan(self) -> dict[bytes, bytes | None]:
        """Every key of db 0 and its string value."""
        keys: list[bytes] = []
        cursor = b"0"
        while True:
            cursor, batch = self.command("SCAN", cursor, "COUNT", 1000)
            keys.extend(batch)
            if cursor == b"0":
                break
        return {key: self.command("GET", key) for key in keys}


def encode(args: tuple[str | bytes | int, ...]) -> bytes:
    out = [b"*%d\r\n" % len(args)]
    for arg in args:
        data = arg if isinstance(arg, bytes) else str(arg).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(out)


class Reply:
    def __init__(self, sock: socket.socket) -> None:
        self.file = sock.makefile("rb")

    def read(self) -> Any:
        line = self.file.readline()
        kind, rest = line[:1], line[1:-2]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            raise RuntimeError(rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            size = int(rest)
            if size < 0:
                return None
            data = self.file.read(size + 2)[:-2]
            return data
        if kind == b"*":
            return [self.read() for _ in range(int(rest))]
        raise RuntimeError(f"unexpected reply {line!r}")


def missing_reason() -> str | None:
    """Why the fleet tests cannot run here, or None. Under CI they must run."""
    if shutil.which("redis-server") is None:
        return "redis-server is not installed (apt-get install redis-server)"
    return None


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"
