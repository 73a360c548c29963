"""Secrets kept in files (`APP_SECRET_FILE`, `PASSWORD_FILE` of `from_env`; docs/guides/
apps-and-secrets.md): read at start and again at every token request, so a secret rotated by
rewriting the file is used without a restart; every missing variable named in one error; no
file content in any message or traceback frame."""

from __future__ import annotations

import asyncio
import inspect
import os
import pickle
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import basic_pairs
from test_secrets_frames import assert_no_secret_in_frames

import recurring_payments as rp
from recurring_payments.testing import FakeServer

PREFIX = "RP_F_"
CLASSES = [rp.Client, rp.AsyncClient]
OLD = "old-file-s3cr3t"
NEW = "new-file-s3cr3t"


@pytest.fixture
def app_env(server: FakeServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The environment of an app whose secret is in a file; returns the file."""
    server.add_app("file-app", OLD)
    secret = tmp_path / "app_secret"
    secret.write_text(OLD + "\n")
    for name, value in {
        "BASE_URL": server.base_url,
        "PROFILE": server.profile,
        "APP_NAME": "file-app",
        "APP_SECRET_FILE": str(secret),
    }.items():
        monkeypatch.setenv(PREFIX + name, value)
    return secret


def replace(path: Path, content: str) -> None:
    """Rewrite ``path`` as a secret manager does: a new file renamed over the old one."""
    fresh = path.with_name(path.name + ".new")
    fresh.write_text(content)
    os.replace(fresh, path)


async def done(value: Any) -> Any:
    """A call's result on either face: a sync one as it is, an async one awaited."""
    return await value if inspect.isawaitable(value) else value


async def close(client: rp.Client | rp.AsyncClient) -> None:
    await done(client.aclose() if isinstance(client, rp.AsyncClient) else client.close())


def test_the_secret_is_the_file_less_one_trailing_newline(
    server: FakeServer, app_env: Path
) -> None:
    for content, secret in [
        (OLD, OLD),
        (OLD + "\n", OLD),
        (OLD + "\r\n", OLD),
        (f" {OLD} \n\n", f" {OLD} \n"),  # nothing else is stripped
        (f"\t{OLD}", f"\t{OLD}"),
    ]:
        server.add_app("file-app", secret)
        replace(app_env, content)
        with rp.Client.from_env(prefix=PREFIX) as client:
            assert client.authenticate().scope == "api"
        assert basic_pairs(server)[-1] == f"file-app:{secret}"


@pytest.mark.parametrize("cls", CLASSES, ids=["sync", "async"])
def test_a_rotated_file_is_read_at_the_next_token_request(
    server: FakeServer, app_env: Path, cls: type[rp.Client]
) -> None:
    async def run() -> None:
        client = cls.from_env(prefix=PREFIX)
        try:
            await done(client.root())
            server.add_app("file-app", NEW)  # the old secret stops working at once
            replace(app_env, NEW + "\n")
            server.advance_clock(961)  # the old token expires
            assert (await done(client.root(refresh=True))).status == 200
        finally:
            await close(client)

    asyncio.run(run())
    assert basic_pairs(server) == [f"file-app:{OLD}", f"file-app:{NEW}"]
    assert [r.status for r in server.requests if r.path == "/"] == [200, 401, 200]


@pytest.mark.parametrize("cls", CLASSES, ids=["sync", "async"])
def test_a_file_not_yet_rewritten_is_an_authentication_error(
    server: FakeServer, app_env: Path, cls: type[rp.Client]
) -> None:
    async def run() -> None:
        client = cls.from_env(prefix=PREFIX)
        try:
            server.add_app("file-app", NEW)
            with pytest.raises(rp.AuthenticationError) as caught:
                await done(client.authenticate())
            assert OLD not in str(caught.value) and NEW not in str(caught.value)
        finally:
            await close(client)

    asyncio.run(run())
    # The refused secret was read again once (unchanged): no second token request with it.
    assert basic_pairs(server) == [f"file-app:{OLD}"]


@pytest.mark.parametrize("cls", CLASSES, ids=["sync", "async"])
def test_the_admin_password_from_a_file(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, cls: type[rp.Client]
) -> None:
    server.add_admin("democreditor", "admin", "pa55word-from-file")
    password = tmp_path / "password"
    password.write_text("pa55word-from-file\r\n")
    for name, value in {
        "BASE_URL": server.base_url,
        "PROFILE": server.profile,
        "CREDITOR": "democreditor",
        "LOGIN": "admin",
        "PASSWORD_FILE": str(password),
    }.items():
        monkeypatch.setenv(PREFIX + name, value)

    async def run() -> str:
        client = cls.from_env(prefix=PREFIX)
        try:
            return str((await done(client.authenticate())).scope)
        finally:
            await close(client)

    assert asyncio.run(run()) == "api_admin"
    assert basic_pairs(server) == ["democreditor#admin:pa55word-from-file"]


@pytest.mark.parametrize("cls", CLASSES, ids=["sync", "async"])
def test_a_secret_and_its_file_both_set_is_refused(
    app_env: Path, monkeypatch: pytest.MonkeyPatch, cls: type[rp.Client]
) -> None:
    monkeypatch.setenv(PREFIX + "APP_SECRET", OLD)
    with pytest.raises(rp.ConfigurationError) as caught:
        cls.from_env(prefix=PREFIX)
    message = str(caught.value)
    assert f"{PREFIX}APP_SECRET " in message and f"{PREFIX}APP_SECRET_FILE" in message
    assert OLD not in message
    assert_no_secret_in_frames(caught.value, OLD)
    monkeypatch.delenv(PREFIX + "APP_SECRET")
    monkeypatch.setenv(PREFIX + "PASSWORD", OLD)
    monkeypatch.setenv(PREFIX + "PASSWORD_FILE", str(app_env))
    for name in ("APP_NAME", "APP_SECRET_FILE"):
        monkeypatch.delenv(PREFIX + name)
    monkeypatch.setenv(PREFIX + "CREDITOR", "democreditor")
    monkeypatch.setenv(PREFIX + "LOGIN", "admin")
    with pytest.raises(rp.ConfigurationError, match=f"{PREFIX}PASSWORD_FILE"):
        cls.from_env(prefix=PREFIX)


def bad_files(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    yield "does not exist", tmp_path / "missing"
    yield "is a directory", tmp_path
    empty = tmp_path / "empty"
    empty.write_text("")
    yield "is empty", empty
    newline = tmp_path / "newline"
    newline.write_text("\n")
    yield "is empty", newline
    latin = tmp_path / "latin"
    latin.write_bytes(OLD.encode() + b"\xff")
    yield "is not UTF-8", latin


@pytest.mark.parametrize("cls", CLASSES, ids=["sync", "async"])
def test_a_file_that_cannot_serve_fails_at_start_naming_variable_and_path(
    app_env: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, cls: type[rp.Client]
) -> None:
    for problem, path in bad_files(tmp_path):
        monkeypatch.setenv(PREFIX + "APP_SECRET_FILE", str(path))
        with pytest.raises(rp.ConfigurationError) as caught:
            cls.from_env(prefix=PREFIX)
        message = str(caught.value)
        assert problem in message and f"{PREFIX}APP_SECRET_FILE" in message and str(path) in message
        assert OLD not in message and OLD not in repr(caught.value)
        assert OLD.encode() not in pickle.dumps(caught.value)
        assert_no_secret_in_frames(caught.value, OLD)


@pytest.mark.parametrize("cls", CLASSES, ids=["sync", "async"])
def test_a_file_that_breaks_later_fails_the_token_request_naming_it(
    server: FakeServer, app_env: Path, cls: type[rp.Client]
) -> None:
    async def run() -> rp.ConfigurationError:
        client = cls.from_env(prefix=PREFIX)
        app_env.unlink()
        try:
            with pytest.raises(rp.ConfigurationError) as caught:
                await done(client.root())
            return caught.value
        finally:
            await close(client)

    error = asyncio.run(run())
    assert str(app_env) in str(error) and "does not exist" in str(error)
    assert server.requests == []  # nothing was sent


def test_a_file_rewritten_while_it_is_read_fails_no_call(server: FakeServer, app_env: Path) -> None:
    """Writers that truncate then write, and writers that rename, race the token requests of
    `authenticate()` (each one reads the file): no call fails."""
    server.add_app("file-app", OLD)
    stop = threading.Event()

    def truncating_writer() -> None:
        while not stop.wait(0.002):
            with open(app_env, "w") as file:  # truncates, then writes
                file.write(OLD + "\n")

    def renaming_writer() -> None:
        while not stop.wait(0.002):
            replace(app_env, OLD)

    with rp.Client.from_env(prefix=PREFIX) as client:
        for writer in (truncating_writer, renaming_writer):
            thread = threading.Thread(target=writer)
            thread.start()
            try:
                for _ in range(150):
                    client.authenticate()
            finally:
                stop.set()
                thread.join()
            stop.clear()
    assert len(server.token_requests) == 300
    assert set(basic_pairs(server)) == {f"file-app:{OLD}"}


def test_the_provider_of_a_file_shows_the_path_never_the_secret(app_env: Path) -> None:
    with rp.Client.from_env(prefix=PREFIX) as client:
        shown = repr(client) + repr(client.credentials)
        assert str(app_env) in repr(client.credentials)
        assert OLD not in shown
        with pytest.raises(TypeError):
            pickle.dumps(client.credentials)


@pytest.mark.parametrize("cls", CLASSES, ids=["sync", "async"])
def test_every_missing_variable_is_named_in_one_error(
    monkeypatch: pytest.MonkeyPatch, cls: type[rp.Client]
) -> None:
    for name in list(os.environ):
        if name.startswith(PREFIX):
            monkeypatch.delenv(name)
    with pytest.raises(rp.ConfigurationError) as caught:
        cls.from_env(prefix=PREFIX)
    message = str(caught.value)
    for name in ("APP_NAME", "APP_SECRET", "APP_SECRET_FILE", "CREDITOR", "LOGIN", "PASSWORD"):
        assert PREFIX + name in message
    assert f"{PREFIX}BASE_URL" in message and f"{PREFIX}PROFILE" in message
    # Credentials half given: the rest is named with the other settings.
    monkeypatch.setenv(PREFIX + "CREDITOR", "democreditor")
    with pytest.raises(rp.ConfigurationError) as caught:
        cls.from_env(prefix=PREFIX)
    message = str(caught.value)
    for name in ("LOGIN", "PASSWORD", "PASSWORD_FILE", "BASE_URL", "PROFILE"):
        assert PREFIX + name in message
    assert f"{PREFIX}APP_NAME" not in message
