"""Settings are checked at construction (docs/guides/configuration.md,
docs/guarantees.md#settings-and-secrets): a bad value is a ConfigurationError naming the setting,
raised before anything is sent, for Client and AsyncClient alike. Before: a user_agent with CR/LF
was accepted and every request then failed as a TransportError, retries=2**40 raised OverflowError,
timeout="30" a bare ValueError.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest
from conftest import header

import recurring_payments as rp
from recurring_payments.testing import FakeServer

NAN, INF = float("nan"), float("inf")
SECRET = "pw-in-the-url-s3cr3t"
HEADER_SECRET = "api-key-s3cr3t"

# (setting, bad value): each must be refused, naming the setting.
BAD: list[tuple[str, Any]] = [
    *[("user_agent", v) for v in ("shop\r\nX-Injected: 1", "shop\n", "shop\x00", "caf\xe9", 5)],
    *[("retries", v) for v in (2**40, -1, 101, 1.5, "2", True, None)],
    *[
        (name, v)
        for name in ("timeout", "connect_timeout", "total_timeout")
        for v in ("30", NAN, INF, -INF, 0, -1, 1e7, True, None, b"1")
    ],
    *[("token_leeway", v) for v in (-1, NAN, INF, 1e7, "30", True, None)],
    *[("max_response_size", v) for v in (2**70, 2**41, 0, -1, 1.5, "1", True, None)],
    *[("verify", v) for v in (1, None, "", "ca\x00.pem", b"/ca.pem", 0.5)],
    *[("allow_http", v) for v in ("false", 1, 0, None)],
    *[("profile", v) for v in ("", 'p"q', "p\r\nX: 1", None, 5)],
    *[("rel_namespace", v) for v in (5, "https://x/alps\n#", b"ns#")],
    *[
        ("headers", v)
        for v in (
            {"Authorization": "Bearer x"},
            {"accept": "text/html"},
            {"CONTENT-TYPE": "text/plain"},
            {"Host": "evil.example"},
            {"content-length": "1"},
            {"Transfer-Encoding": "chunked"},
            {"User-Agent": "x"},
            {"X-Bad Name": "v"},
            {"": "v"},
            {"X-Säure": "v"},
            {"X-Key": HEADER_SECRET + "\r\nInjected: 1"},
            {"X-Key": HEADER_SECRET + "\n"},
            {"X-Key": HEADER_SECRET + "\x00"},
            {"X-Key": 5},
            {5: "v"},
            {"X-A": "a", "x-a": "b"},
            [("X-A", "v")],
            "X-A: v",
        )
    ],
    *[
        ("base_url", v)
        for v in (
            f"https://user:{SECRET}@api.example.com",
            f"https://user:{SECRET}@api.example.com@other.example",
            f"https:\\\\user:{SECRET}@api.example.com\\",
            f"HTTPS://user:{SECRET}@api.example.com/",
            f"https://:{SECRET}@api.example.com",
            "https://user@api.example.com",  # a bare user: refused too (see the README)
            "https://@api.example.com",
            f"user:{SECRET}@api.example.com",
            "not a url",
            " https://api.example.com",
            "https://api.example.com\n",
            "ftp://api.example.com",
            "/relative",
            5,
            None,
        )
    ],
    ("credentials", "user:password"),
    ("credentials", None),
]


def build(cls: type[rp.Client] | type[rp.AsyncClient], server: FakeServer, **settings: Any) -> Any:
    args: dict[str, Any] = {
        "base_url": server.base_url,
        "credentials": server.credentials,
        "profile": server.profile,
    }
    args.update(settings)
    return cls(**args)


@pytest.mark.parametrize("cls", [rp.Client, rp.AsyncClient], ids=["sync", "async"])
@pytest.mark.parametrize(("setting", "value"), BAD, ids=[f"{s}={v!r}"[:60] for s, v in BAD])
def test_a_bad_setting_is_a_configuration_error_naming_it(
    server: FakeServer, cls: type[rp.Client], setting: str, value: Any
) -> None:
    with pytest.raises(rp.ConfigurationError) as caught:
        build(cls, server, **{setting: value})
    message = str(caught.value)
    assert setting in message, message
    for hidden in (SECRET, HEADER_SECRET, server.credentials.app_secret):
        assert hidden not in message and hidden not in repr(caught.value)
    assert caught.value.__cause__ is None
    assert server.requests == []


@pytest.mark.parametrize("cls", [rp.Client, rp.AsyncClient], ids=["sync", "async"])
def test_good_settings_are_accepted_and_normalised(server: FakeServer, cls: type[Any]) -> None:
    client = build(
        cls,
        server,
        timeout=30,
        connect_timeout=Fraction(1, 2),
        total_timeout=12,
        retries=0,
        token_leeway=0,
        max_response_size=2**40,
        verify=False,
        user_agent="shop/1.0 (+https://shop.example)",
        headers={"X-Shop-Id": " 42\t", "x-request-source": "checkout"},
    )
    assert client._total_timeout == 12.0 and isinstance(client._total_timeout, float)
    assert client._extra_headers == [("X-Shop-Id", "42"), ("x-request-source", "checkout")]
    default = build(cls, server)
    assert default._total_timeout == 25.0 and default._extra_headers == []


def test_a_bad_user_agent_no_longer_fails_every_request_later(server: FakeServer) -> None:
    # The bug: accepted here, then every request was a TransportError.
    with pytest.raises(rp.ConfigurationError, match="user_agent"):
        server.client(user_agent="shop\r\n")
    with server.client(user_agent="shop/1.0") as client:
        assert client.root().status == 200
    user_agent = header(server.requests[-1], "user-agent")
    assert user_agent is not None and user_agent.startswith("shop/1.0 recurring-payments/")


def test_a_password_in_base_url_is_refused_without_quoting_it(server: FakeServer) -> None:
    url = server.base_url.replace("http://", f"http://shop:{SECRET}@")
    for cls in (rp.Client, rp.AsyncClient):
        with pytest.raises(rp.ConfigurationError, match="user or password") as caught:
            build(cls, server, base_url=url)
        assert SECRET not in str(caught.value) and "shop" not in str(caught.value)
    assert server.requests == []


def test_total_timeout_from_env(server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RP_TEST_BASE_URL", server.base_url)
    monkeypatch.setenv("RP_TEST_PROFILE", server.profile)
    monkeypatch.setenv("RP_TEST_APP_NAME", server.credentials.app_name)
    monkeypatch.setenv("RP_TEST_APP_SECRET", server.credentials.app_secret)
    assert rp.Client.from_env(prefix="RP_TEST_")._total_timeout == 25.0
    monkeypatch.setenv("RP_TEST_TOTAL_TIMEOUT", "12.5")
    for cls in (rp.Client, rp.AsyncClient):
        assert cls.from_env(prefix="RP_TEST_")._total_timeout == 12.5
        assert cls.from_env(prefix="RP_TEST_", total_timeout=3)._total_timeout == 3.0
    monkeypatch.setenv("RP_TEST_TOTAL_TIMEOUT", "soon")
    with pytest.raises(rp.ConfigurationError, match="RP_TEST_TOTAL_TIMEOUT"):
        rp.Client.from_env(prefix="RP_TEST_")
    monkeypatch.setenv("RP_TEST_TOTAL_TIMEOUT", "-1")
    with pytest.raises(rp.ConfigurationError, match="total_timeout"):
        rp.AsyncClient.from_env(prefix="RP_TEST_")


BAD_BUNDLE = """
import sys
import recurring_payments as rp
cls = rp.Client if sys.argv[1] == "sync" else rp.AsyncClient
settings = dict(credentials=rp.AppCredentials("a", "s"), profile="https://x/alps")
for path in sys.argv[2:]:
    for _ in range(2):
        try:
            cls("https://api.example", verify=path, **settings)
        except rp.ConfigurationError as err:
            print("refused:", "CA bundle" in str(err))
cls("https://api.example", **settings)  # the pools' registry still usable
print("built")
"""


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_bad_ca_bundle_is_refused_and_later_clients_still_build(tmp_path: Any, kind: str) -> None:
    # In a child with a time limit: the failed build deadlocked on the pools' registry, and
    # every later client of the process hung with it.
    import subprocess
    import sys

    not_pem = tmp_path / "hostname"
    not_pem.write_text("not a certificate\n")
    paths = [str(tmp_path / "missing.pem"), str(tmp_path), str(not_pem)]
    done = subprocess.run(
        [sys.executable, "-c", BAD_BUNDLE, kind, *paths],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n") == ["refused: True"] * 6 + ["built", ""]
