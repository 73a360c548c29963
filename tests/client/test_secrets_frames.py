"""Secrets in tracebacks (docs/guarantees.md#settings-and-secrets): error trackers (Sentry, Rollbar,
Django's debug page) capture the local variables of every frame of a traceback, and of the
exceptions chained to it. When `from_env()` or the constructor raises, no such frame may hold a
secret; and `repr()` works on a client whose constructor raised or has not run.

What a tracker captures is modelled as Sentry's serializer does it: strings, bytes, mappings
(os.environ included) and sequences walked, any other object shown by its `repr()`.
"""

from __future__ import annotations

import os
import pickle
import types
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

import recurring_payments as rp
from recurring_payments.testing import FakeServer

APP_SECRET = "app-s3cr3t-in-env"
PASSWORD = "admin-pa55word-in-env"
URL_PASSWORD = "url-pa55word"
CLASSES = [rp.Client, rp.AsyncClient]


def chain(err: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    todo = [err]
    while todo:
        e = todo.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        yield e
        todo += [c for c in (e.__cause__, e.__context__) if c is not None]


# The library's frames (not this test's, nor the secret watch's wrapper of Client.__init__).
LIBRARY = (os.path.dirname(rp.__file__) + os.sep, "<leaky module>")


def frames(err: BaseException) -> Iterator[types.FrameType]:
    for e in chain(err):
        tb = e.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code.co_filename.startswith(LIBRARY):
                yield tb.tb_frame
            tb = tb.tb_next


def shows(value: Any, secret: str, depth: int = 0) -> bool:
    """Whether a tracker serializing `value` would write `secret`."""
    if depth > 8:
        return False
    if isinstance(value, str):
        return secret in value
    if isinstance(value, (bytes, bytearray)):
        return secret.encode() in value
    if isinstance(value, Mapping):
        return any(
            shows(k, secret, depth + 1) or shows(v, secret, depth + 1) for k, v in value.items()
        )
    if isinstance(value, (list, tuple, set, frozenset)):
        return any(shows(v, secret, depth + 1) for v in value)
    try:
        return secret in repr(value)
    except Exception:
        return False


def assert_no_secret_in_frames(err: BaseException, *secrets: str) -> None:
    checked = list(frames(err))
    assert checked, "the error has no frame of the library: the check would be vacuous"
    for frame in checked:
        for name, value in frame.f_locals.items():
            for secret in secrets:
                where = f"{frame.f_code.co_name}: local {name!r}"
                assert not shows(value, secret), where
    for e in chain(err):
        for secret in secrets:
            assert secret not in str(e) and secret not in repr(e)


@pytest.fixture
def env(server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    monkeypatch.setenv("RP_T_BASE_URL", server.base_url)
    monkeypatch.setenv("RP_T_PROFILE", server.profile)
    monkeypatch.setenv("RP_T_APP_NAME", "shop-app")
    monkeypatch.setenv("RP_T_APP_SECRET", APP_SECRET)
    return monkeypatch


# (what, variable, value): each makes from_env raise a ConfigurationError, in from_env itself
# or in the constructor it calls (Python checks or the native client).
BROKEN_ENV = [
    ("missing variable (from_env)", "RP_T_PROFILE", ""),
    ("unparsable TOTAL_TIMEOUT (from_env)", "RP_T_TOTAL_TIMEOUT", "soon"),
    ("TOTAL_TIMEOUT out of range (constructor)", "RP_T_TOTAL_TIMEOUT", "-5"),
    ("base_url not a URL (constructor)", "RP_T_BASE_URL", "not a url"),
    ("base_url with a bad port (native client)", "RP_T_BASE_URL", "https://api.example:99999/"),
    ("plain http to a remote host (native client)", "RP_T_BASE_URL", "http://api.example/"),
    ("base_url with a password", "RP_T_BASE_URL", f"https://u:{URL_PASSWORD}@api.example/"),
    ("app name with ':' (native client)", "RP_T_APP_NAME", "shop:app"),
    # A byte the environment could not decode (os.environ keeps it as a lone surrogate): the
    # native client's UnicodeEncodeError held the whole secret, in its message and `.object`.
    ("app secret not UTF-8 (constructor)", "RP_T_APP_SECRET", APP_SECRET + "\udcff"),
]


@pytest.mark.parametrize("cls", CLASSES, ids=["sync", "async"])
@pytest.mark.parametrize(("what", "variable", "value"), BROKEN_ENV, ids=[b[0] for b in BROKEN_ENV])
def test_from_env_leaves_no_secret_in_any_frame(
    env: pytest.MonkeyPatch, cls: type[rp.Client], what: str, variable: str, value: str
) -> None:
    env.setenv(variable, value)
    with pytest.raises(rp.ConfigurationError) as caught:
        cls.from_env(prefix="RP_T_")
    assert_no_secret_in_frames(caught.value, APP_SECRET, URL_PASSWORD)


@pytest.mark.parametrize("cls", CLASSES, ids=["sync", "async"])
def test_from_env_with_admin_credentials_and_bad_overrides(
    env: pytest.MonkeyPatch, cls: type[rp.Client]
) -> None:
    for name in ("APP_NAME", "APP_SECRET"):
        env.delenv(f"RP_T_{name}")
    env.setenv("RP_T_CREDITOR", "democreditor")
    env.setenv("RP_T_LOGIN", "admin")
    env.setenv("RP_T_PASSWORD", PASSWORD)
    for overrides in ({"timeout": "30"}, {"retries": 2**40}, {"headers": {"Authorization": "x"}}):
        with pytest.raises(rp.ConfigurationError) as caught:
            cls.from_env(prefix="RP_T_", **overrides)
        assert_no_secret_in_frames(caught.value, PASSWORD)
    env.delenv("RP_T_PASSWORD")
    with pytest.raises(rp.ConfigurationError, match="RP_T_PASSWORD") as caught:
        cls.from_env(prefix="RP_T_")
    assert_no_secret_in_frames(caught.value, PASSWORD)


@pytest.mark.parametrize("cls", CLASSES, ids=["sync", "async"])
def test_the_constructor_drops_a_refused_base_url_and_header_values(
    server: FakeServer, cls: type[rp.Client]
) -> None:
    url = server.base_url.replace("http://", f"http://shop:{URL_PASSWORD}@")
    with pytest.raises(rp.ConfigurationError) as caught:
        cls(url, credentials=server.credentials, profile=server.profile)
    assert_no_secret_in_frames(caught.value, URL_PASSWORD)
    key = "header-api-k3y"
    with pytest.raises(rp.ConfigurationError) as caught:
        cls(
            server.base_url,
            credentials=rp.AppCredentials("shop-app", APP_SECRET),
            profile=server.profile,
            headers={"X-Api-Key": key + "\r\n"},
        )
    assert_no_secret_in_frames(caught.value, key, APP_SECRET)
    with pytest.raises(rp.ConfigurationError, match="app_name") as caught:
        cls(  # headers accepted, then the native client refuses the credentials
            server.base_url,
            credentials=rp.AppCredentials("shop:app", APP_SECRET),
            profile=server.profile,
            headers={"X-Api-Key": key},
        )
    assert_no_secret_in_frames(caught.value, key, APP_SECRET)


NOT_UTF8 = "\udcff"  # what os.environ and os.fsdecode make of the byte 0xff


@pytest.mark.parametrize("cls", CLASSES, ids=["sync", "async"])
def test_a_setting_the_native_client_cannot_take_is_refused_without_quoting_it(
    server: FakeServer, cls: type[rp.Client]
) -> None:
    key = "header-api-k3y"
    good: dict[str, Any] = {
        "credentials": rp.AppCredentials("shop-app", APP_SECRET),
        "profile": server.profile,
        "headers": {"X-Api-Key": key},
    }
    admin = rp.AdminCredentials("democreditor", "admin", PASSWORD + NOT_UTF8)
    bad: list[tuple[str, dict[str, Any]]] = [
        ("app_secret", {"credentials": rp.AppCredentials("shop-app", APP_SECRET + NOT_UTF8)}),
        ("password", {"credentials": admin}),
        ("app_secret must be a str", {"credentials": rp.AppCredentials("shop-app", 12345)}),  # type: ignore[arg-type]
        ("login must be a str", {"credentials": rp.AdminCredentials("c", None, PASSWORD)}),  # type: ignore[arg-type]
        ("X-Api-Key", {"headers": {"X-Api-Key": key + NOT_UTF8}}),
        ("token_store", {"token_store": f"redis://:{URL_PASSWORD}{NOT_UTF8}@127.0.0.1:9/0"}),
        ("verify", {"verify": "/etc/ssl/" + NOT_UTF8}),
        ("profile", {"profile": server.profile + NOT_UTF8}),
    ]
    for expected, change in bad:
        with pytest.raises(rp.ConfigurationError, match=expected) as caught:
            cls(server.base_url, **{**good, **change})
        assert_no_secret_in_frames(caught.value, APP_SECRET, PASSWORD, key, URL_PASSWORD)
        pickled = pickle.dumps(caught.value)
        assert all(s.encode() not in pickled for s in (APP_SECRET, PASSWORD, key, URL_PASSWORD))
    with pytest.raises(rp.ConfigurationError, match="base_url") as caught:
        cls(server.base_url + "/" + URL_PASSWORD + NOT_UTF8, **good)
    assert_no_secret_in_frames(caught.value, URL_PASSWORD, key, APP_SECRET)


LEAKY = """
import os
def leaky_from_env(prefix):
    env = {k: v for k, v in os.environ.items() if k.startswith(prefix)}
    raise ValueError(f"missing {len(env)}")
def leaky_environ(prefix):
    environ = os.environ
    raise ValueError(prefix)
"""


@pytest.mark.parametrize("leaky", ["leaky_from_env", "leaky_environ"])
def test_the_check_sees_a_secret_where_a_tracker_would(env: pytest.MonkeyPatch, leaky: str) -> None:
    # The model itself: a secret in a local dict, or os.environ held in a local, is found.
    namespace: dict[str, Any] = {}
    exec(compile(LEAKY, "<leaky module>", "exec"), namespace)
    with pytest.raises(ValueError) as caught:
        namespace[leaky]("RP_T_")
    with pytest.raises(AssertionError, match=r"local '(env|environ)'"):
        assert_no_secret_in_frames(caught.value, APP_SECRET)


@pytest.mark.parametrize("cls", CLASSES, ids=["sync", "async"])
def test_repr_of_a_half_built_client(server: FakeServer, cls: type[rp.Client]) -> None:
    bare = object.__new__(cls)
    assert repr(bare) == f"<{cls.__name__} (not set up)>"
    assert "root" in dir(bare)
    with pytest.raises(RuntimeError, match="closed"):
        bare.token  # noqa: B018

    seen: list[str] = []

    class Eager(cls):  # type: ignore[valid-type, misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            seen.append(repr(self))  # before the base constructor ran
            try:
                super().__init__(*args, **kwargs)
            finally:
                seen.append(repr(self))  # after it raised (or not)

    with pytest.raises(rp.ConfigurationError):
        Eager(server.base_url, credentials=server.credentials, profile=server.profile, retries=-1)
    url = server.base_url.replace("http://", f"http://u:{URL_PASSWORD}@")
    with pytest.raises(rp.ConfigurationError):
        Eager(url, credentials=server.credentials, profile=server.profile)
    assert seen == ["<Eager (not set up)>"] * 4
    good = Eager(server.base_url, credentials=server.credentials, profile=server.profile)
    assert seen[-1].startswith(f"<Eager {server.base_url} AppCredentials(")
    assert repr(good) == seen[-1]
