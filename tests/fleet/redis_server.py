"""A real ``redis-server`` for the fleet tests (and benches/fleet.py): started on a free
loopback port in a temporary directory without persistence, stopped (and restarted) at will,
over plain TCP or TLS (certificates from a throw-away CA made with the ``openssl`` command);
plus a minimal RESP client, so the tests need no Redis package of their own."""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import ssl
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@dataclass(frozen=True)
class TlsFiles:
    """A server's certificate and key (PEM files) and the CA certificate that signed it."""

    ca: Path
    cert: Path
    key: Path


class CertificateAuthority:
    """A throw-away CA in ``directory`` (an EC P-256 key and a self-signed certificate), which
    issues server certificates."""

    def __init__(self, directory: Path, name: str) -> None:
        self.directory = directory
        self.name = name
        self.cert = directory / f"{name}.crt"
        self.key = directory / f"{name}.key"
        openssl(
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
            "-nodes", "-keyout", self.key, "-out", self.cert, "-days", "2",
            "-subj", f"/CN={name}", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        )  # fmt: skip

    def issue(self, name: str, san: str = "IP:127.0.0.1") -> TlsFiles:
        """A server certificate for ``san`` (an openssl subjectAltName: ``IP:…``/``DNS:…``)."""
        cert, key = self.directory / f"{name}.crt", self.directory / f"{name}.key"
        request, extensions = self.directory / f"{name}.csr", self.directory / f"{name}.ext"
        extensions.write_text(
            f"subjectAltName={san}\n"
            # Both key identifiers: CPython 3.13's default context verifies with
            # VERIFY_X509_STRICT, which refuses a certificate without its issuer's.
            "subjectKeyIdentifier=hash\n"
            "authorityKeyIdentifier=keyid,issuer\n"
            "basicConstraints=critical,CA:FALSE\n"
            "keyUsage=critical,digitalSignature\n"
            "extendedKeyUsage=serverAuth\n"
        )
        openssl(
            "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", key, "-out", request, "-subj", f"/CN={name}",
        )  # fmt: skip
        openssl(
            "x509", "-req", "-in", request, "-CA", self.cert, "-CAkey", self.key,
            "-set_serial", str(secrets.randbits(63)), "-days", "2", "-out", cert,
            "-extfile", extensions,
        )  # fmt: skip
        return TlsFiles(ca=self.cert, cert=cert, key=key)


def openssl(*args: str | Path) -> None:
    binary = shutil.which("openssl")
    if binary is None:
        raise FileNotFoundError("openssl is not installed")
    subprocess.run([binary, *map(str, args)], check=True, capture_output=True, timeout=60)


class RedisServer:
    """``redis-server`` on ``127.0.0.1:<port>``; ``url`` is its ``redis://`` URL, or with
    ``tls`` its ``rediss://`` URL (TLS only: no plain port). With ``password`` the server
    requires it (``requirepass``) and ``url`` holds it."""

    def __init__(self, tls: TlsFiles | None = None, password: str | None = None) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise FileNotFoundError("redis-server is not installed")
        self.binary = binary
        self.tls = tls
        self.password = password
        self.port = free_port()
        scheme = "rediss" if tls else "redis"
        auth = f":{password}@" if password else ""
        self.url = f"{scheme}://{auth}127.0.0.1:{self.port}/0"
        self._dir = tempfile.mkdtemp(prefix="rp-redis-")
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> RedisServer:
        listen = ["--port", str(self.port)]
        if self.tls is not None:
            listen = [
                "--port", "0",
                "--tls-port", str(self.port),
                "--tls-cert-file", str(self.tls.cert),
                "--tls-key-file", str(self.tls.key),
                "--tls-ca-cert-file", str(self.tls.ca),
                "--tls-auth-clients", "no",
            ]  # fmt: skip
        if self.password is not None:
            listen += ["--requirepass", self.password]
        self._process = subprocess.Popen(
            [
                self.binary,
                *listen,
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
        """One command over a new connection (TLS for a TLS server, after AUTH for one with a
        password); the decoded reply."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as raw:
            s = raw
            if self.tls is not None:
                # Trusts the server's own CA. Names are not checked: some tests give the server
                # a certificate for another name on purpose (the library must refuse it).
                context = ssl.create_default_context(cafile=self.tls.ca)
                context.check_hostname = False
                s = context.wrap_socket(raw)
            with s:
                reply = Reply(s)
                if self.password is not None:
                    s.sendall(encode(("AUTH", self.password)))
                    reply.read()
                s.sendall(encode(args))
                return reply.read()

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


def store_keys(redis: RedisServer) -> dict[bytes, bytes | None]:
    """The library's stored tokens in ``redis`` (its renewal locks left out)."""
    return {k: v for k, v in redis.scan().items() if not k.endswith(b":lock")}


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


def tls_missing_reason() -> str | None:
    """Why the TLS fleet tests cannot run here (they also need ``openssl``), or None."""
    reason = missing_reason()
    if reason is None and shutil.which("openssl") is None:
        return "openssl is not installed (apt-get install openssl)"
    return reason


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def started_redis() -> Iterator[RedisServer]:
    """A real redis-server for one test, stopped after it: the body of the fleet tests' `redis`
    fixture. Without one the test skips with the reason, except under CI=true, where it fails
    (.ci/run installs it)."""
    import pytest  # here, not at the top: benches/fleet.py uses RedisServer without pytest

    reason = missing_reason()
    if reason is not None:
        if in_ci():
            pytest.fail(f"fleet tests need Redis under CI: {reason}")
        pytest.skip(reason)
    server = RedisServer().start()
    try:
        yield server
    finally:
        server.close()
