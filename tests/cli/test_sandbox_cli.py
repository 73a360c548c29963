"""`python -m recurring_payments serve` as a subprocess."""

from __future__ import annotations

import inspect
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
import serve_process
from sandbox_http import Http

from recurring_payments.cli import build_parser, main
from recurring_payments.testing import FakeServer

Served = tuple[subprocess.Popen[str], dict[str, str]]


def start(*args: str) -> Served:
    process, exports = serve_process.start(*args)
    return process, {name.removeprefix("RECURRING_PAYMENTS_"): v for name, v in exports.items()}


@pytest.fixture
def served() -> Iterator[Served]:
    process, settings = start("--demo", "--token-ttl", "30")
    try:
        yield process, settings
    finally:
        serve_process.kill(process)


class Remote:
    """The subprocess's server, as much as the HTTP helper needs of a FakeServer."""

    def __init__(self, settings: dict[str, str]):
        self._settings = settings

    @property
    def base_url(self) -> str:
        return self._settings["BASE_URL"]

    @property
    def profile(self) -> str:
        return self._settings["PROFILE"]

    @property
    def credentials(self) -> SimpleNamespace:
        return SimpleNamespace(
            app_name=self._settings["APP_NAME"], app_secret=self._settings["APP_SECRET"]
        )


# Windows cannot send SIGINT to another process, and its SIGTERM kills without a handler.
@pytest.mark.skipif(os.name == "nt", reason="POSIX signals")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_serve_prints_serves_and_stops(
    served: tuple[subprocess.Popen[str], dict[str, str]], sig: int
) -> None:
    process, settings = served
    assert settings["BASE_URL"].startswith("http://127.0.0.1:")
    assert settings["PROFILE"] == settings["BASE_URL"] + "/alps/v1"
    assert settings["REL_NAMESPACE"] == settings["BASE_URL"] + "/alps#"
    assert settings["APP_NAME"] == "sandbox-app"
    http = Http(Remote(settings))  # type: ignore[arg-type]
    answer = http.token_answer()
    assert answer.json["expires_in"] == 30
    root = http.api("GET", "/", token=answer.json["access_token"]).json
    assert settings["REL_NAMESPACE"] + "get-creditors" in root["_links"]
    out, err = serve_process.stop(process, sig)
    assert process.returncode == 0, err
    assert "# stopped" in out
    assert err == ""


@pytest.mark.skipif(os.name == "nt", reason="POSIX signals")
def test_serve_stops_once_under_a_burst_of_signals() -> None:
    # Signals land at every point of the wait and of the stop, where a handler that takes a
    # lock the main thread holds would deadlock: the server still stops, once. A signal that
    # comes after `run` has put the previous handlers back ends the process the default way.
    process, _ = start()
    for _ in range(200):
        if process.poll() is not None:
            break
        process.send_signal(signal.SIGINT)
    out, err = serve_process.stop(process, signal.SIGINT)
    assert process.returncode in (0, -signal.SIGINT), err
    assert out.count("# stopped") == 1


def test_serve_on_a_busy_port_fails_cleanly() -> None:
    with FakeServer() as server:
        port = server.base_url.rsplit(":", 1)[1]
        process = subprocess.run(
            [sys.executable, "-m", "recurring_payments", "serve", "--port", port],
            capture_output=True,
            text=True,
            timeout=30,
        )
    assert process.returncode == 1
    assert "cannot listen" in process.stderr


def test_help_and_unknown_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["serve", "--help"])
    assert exit_info.value.code == 0
    assert "--token-ttl" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_info:
        main(["nonsense"])
    assert exit_info.value.code == 2


def test_serve_resources_adds_links_and_documents(tmp_path: Path) -> None:
    spec = {
        "links": [{"rel": "thing", "href": "/things/{id}", "templated": True}],
        "resources": {"/things/7": {"n": 7, "_links": {"self": {"href": "/things/7"}}}},
    }
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    process, settings = start("--resources", str(tmp_path / "spec.json"))
    try:
        http = Http(Remote(settings))  # type: ignore[arg-type]
        token = http.token_answer().json["access_token"]
        link = http.api("GET", "/", token=token).json["_links"][settings["REL_NAMESPACE"] + "thing"]
        assert link == {"href": settings["BASE_URL"] + "/things/{id}", "templated": True}
        assert http.api("GET", "/things/7", token=token).json["n"] == 7
    finally:
        serve_process.stop(process)
    assert process.returncode == 0


@pytest.mark.parametrize(
    "content", ["not json", '["a list"]', '{"links": [{"href": "/no-rel"}]}', '{"other": 1}']
)
def test_serve_refuses_a_bad_resources_file(tmp_path: Path, content: str) -> None:
    (tmp_path / "spec.json").write_text(content)
    process = subprocess.run(
        [
            sys.executable,
            "-m",
            "recurring_payments",
            "serve",
            "--resources",
            str(tmp_path / "spec.json"),
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert process.returncode == 1
    assert "spec.json" in process.stderr


def test_serve_keeps_as_many_requests_as_fake_server() -> None:
    # One default, FakeServer's (the one docs/sandbox.md states): serve passes none of its own.
    args = build_parser().parse_args(["serve"])
    assert args.journal_limit is None
    assert build_parser().parse_args(["serve", "--journal-limit", "5"]).journal_limit == 5
    default = inspect.signature(FakeServer).parameters["journal_limit"].default
    sandbox_page = (Path(__file__).resolve().parents[2] / "docs" / "sandbox.md").read_text()
    assert f"`journal_limit` = {default:,}" in sandbox_page


@pytest.mark.skipif(os.name == "nt", reason="POSIX signals")
def test_serve_exits_promptly_on_ctrl_c_with_a_request_still_arriving() -> None:
    # A browser tab on the sandbox may hold a half-sent request: Ctrl-C does not wait for it.
    process, settings = start()
    port = int(settings["BASE_URL"].rsplit(":", 1)[1])
    try:
        with socket.create_connection(("127.0.0.1", port)) as half:
            half.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
            time.sleep(0.2)
            began = time.monotonic()
            out, err = serve_process.stop(process, signal.SIGINT)
            took = time.monotonic() - began
    finally:
        serve_process.kill(process)
    assert process.returncode == 0, err
    assert "# stopped" in out
    assert took < 1.5  # about 0.1 s; it waited the stop's 2 s grace before
