"""The client's settings, checked before the native client is built (docs/guides/configuration.md).

A bad value is a ``ConfigurationError`` naming the setting, raised at construction: not an
``OverflowError`` from the native layer, nor a ``TransportError`` on every later request.
Messages quote a value only when it cannot be a secret (never ``base_url``, ``token_store``,
``proxy``, ``user_agent`` or a header value: a URL may carry a password, a header an API key).
"""

from __future__ import annotations

import numbers
import operator
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from ._credentials import AdminCredentials, AppCredentials
from .errors import ConfigurationError

# Sane upper bounds: past them a value is a unit mistake (milliseconds given as seconds), and
# the native layer's integer types would overflow.
MAX_SECONDS = 1e6
MAX_RETRIES = 100
MAX_RESPONSE_SIZE = 2**40

# RFC 9110 §5.6.2: a field name is a token.
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
# A lone surrogate: what os.environ and os.fsdecode make of a byte that is not UTF-8. The
# native layer takes UTF-8 only, and Python's UnicodeEncodeError would carry the whole value.
_SURROGATE = re.compile("[\ud800-\udfff]")
# Headers the client owns (protocol, auth, framing); each has its own setting or none.
_RESERVED_HEADERS = {
    "authorization": "the client sends the bearer token itself",
    "accept": "the client sends the profile's media type (profile=)",
    "content-type": "the client sets it per method",
    "content-length": "the client frames the body",
    "host": "it comes from base_url",
    "user-agent": "use user_agent=",
    "transfer-encoding": "the client frames the body",
    "connection": "the client manages its connections",
    "keep-alive": "the client manages its connections",
    "upgrade": "the client manages its connections",
    "te": "the client frames the body",
    "trailer": "the client frames the body",
    "proxy-connection": "the client manages its connections",
}

# docs/guides/errors.md#conflicts-rate-limits-and-request-ids: the response headers that carry a
# request id, the first present wins.
DEFAULT_REQUEST_ID_HEADERS = ("Request-Id", "X-Request-Id", "X-Correlation-Id")


def check_credentials(value: object) -> AppCredentials | AdminCredentials:
    """``AppCredentials`` or ``AdminCredentials`` whose every field is text the native layer
    can take; a field is named, never quoted (it may be the secret)."""
    if not isinstance(value, (AppCredentials, AdminCredentials)):
        raise ConfigurationError(
            f"credentials must be AppCredentials or AdminCredentials, not {type(value).__name__}"
        )
    for name in value.__slots__:
        field = getattr(value, name)
        if not isinstance(field, str):
            raise ConfigurationError(
                f"credentials: {name} must be a str, not {type(field).__name__}"
            )
        _check_utf8(f"credentials: {name}", field)
    return value


def _check_utf8(name: str, value: str) -> str:
    if _SURROGATE.search(value):
        raise ConfigurationError(
            f"{name} holds a byte that is not UTF-8 (as os.environ keeps one it cannot decode); "
            "the value is not shown"
        )
    return value


def check_base_url(value: object) -> str:
    """An ``http(s)://`` URL without userinfo; the URL is never quoted (it may hold a password).

    The authority is found as the WHATWG parser of the native layer finds it (backslashes are
    slashes in http URLs), so no spelling slips a ``user:password@`` past this check.
    """
    if not isinstance(value, str):
        raise ConfigurationError(f"base_url must be a str, not {type(value).__name__}")
    _check_utf8("base_url", value)
    if _CONTROL.search(value) or value != value.strip() or " " in value:
        raise ConfigurationError("base_url must not contain spaces or control characters")
    scheme = _SCHEME.match(value)
    if scheme is None or scheme.group().lower() not in ("http:", "https:"):
        raise ConfigurationError("base_url must be an absolute http:// or https:// URL")
    rest = value[scheme.end() :].replace("\\", "/").lstrip("/")
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0]
    if "@" in authority:
        # A password here would be in every log line, error and repr; a bare user would be
        # sent as a Basic header. The URL is not quoted: it holds the secret.
        raise ConfigurationError(
            "base_url must not contain a user or password (user:password@host); "
            "pass credentials=AppCredentials(...) or AdminCredentials(...) instead"
        )
    return value


def check_seconds(name: str, value: object, *, zero: bool = False) -> float:
    """A finite number of seconds, > 0 (``>= 0`` with ``zero``), at most ``MAX_SECONDS``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ConfigurationError(f"{name} must be a number of seconds, not {type(value).__name__}")
    seconds = float(value)
    low_ok = seconds >= 0 if zero else seconds > 0
    if not (low_ok and seconds <= MAX_SECONDS):  # also false for NaN
        bound = ">= 0" if zero else "> 0"
        raise ConfigurationError(
            f"{name} must be a finite number of seconds {bound} and <= {MAX_SECONDS:g}, "
            f"got {seconds!r}"
        )
    return seconds


def check_retries(value: object) -> int:
    """``retries``: an int from 0 to ``MAX_RETRIES``."""
    return _check_int("retries", value, 0, MAX_RETRIES)


def check_headers(value: object) -> list[tuple[str, str]]:
    """``headers``: a mapping of valid names and values, none that the client sets itself."""
    return _check_headers(value)


def _check_int(name: str, value: object, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ConfigurationError(f"{name} must be an int, not {type(value).__name__}")
    number = operator.index(value)
    if not low <= number <= high:
        raise ConfigurationError(f"{name} must be between {low} and {high}, got {number}")
    return number


def _check_bool(name: str, value: object) -> bool:
    # A truthy string such as "false" from a config file must not turn a safety off.
    if not isinstance(value, bool):
        raise ConfigurationError(f"{name} must be True or False, not {type(value).__name__}")
    return value


def _check_text(name: str, value: str) -> str:
    if _CONTROL.search(value):
        raise ConfigurationError(f"{name} must not contain control characters")
    return _check_utf8(name, value)


def _check_profile(value: object) -> str:
    if not isinstance(value, str):
        raise ConfigurationError(f"profile must be a str (a URL), not {type(value).__name__}")
    if not value or '"' in value:
        raise ConfigurationError("profile must be a non-empty URL without '\"'")
    return _check_text("profile", value)


def _check_rel_namespace(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ConfigurationError(f"rel_namespace must be a str or None, not {type(value).__name__}")
    return _check_text("rel_namespace", value)


def _check_verify(value: object) -> bool | str:
    if isinstance(value, bool):
        return value
    if isinstance(value, (str, os.PathLike)):
        path = os.fspath(value)
        if isinstance(path, str) and path and not _CONTROL.search(path):
            return _check_utf8("verify", path)
        raise ConfigurationError("verify must be True, False or a CA bundle path")
    raise ConfigurationError(
        f"verify must be True, False or a CA bundle path, not {type(value).__name__}"
    )


def _check_user_agent(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ConfigurationError(f"user_agent must be a str or None, not {type(value).__name__}")
    if not all(" " <= ch <= "~" for ch in value):
        # CR/LF would split the header; the wire would refuse them on every request otherwise.
        raise ConfigurationError("user_agent must be printable ASCII (no control characters)")
    return value


def _check_headers(value: object) -> list[tuple[str, str]]:
    """Extra headers as ``(name, value)`` pairs; values are never quoted (an API key...)."""
    if value is None:
        return []
    if not isinstance(value, Mapping):
        raise ConfigurationError(
            f"headers must be a mapping of names to values, not {type(value).__name__}"
        )
    pairs: list[tuple[str, str]] = []
    seen: set[str] = set()
    for name, text in value.items():
        if not isinstance(name, str) or not _TOKEN.fullmatch(name):
            raise ConfigurationError(f"headers: {name!r} is not a valid header name")
        lower = name.lower()
        if lower in _RESERVED_HEADERS:
            raise ConfigurationError(
                f"headers: {name!r} cannot be set this way ({_RESERVED_HEADERS[lower]})"
            )
        if lower in seen:
            raise ConfigurationError(f"headers: {name!r} is given twice (names ignore case)")
        seen.add(lower)
        if not isinstance(text, str):
            raise ConfigurationError(
                f"headers: the value of {name!r} must be a str, not {type(text).__name__}"
            )
        text = text.strip(" \t")
        if re.search(r"[\x00-\x08\x0a-\x1f\x7f]", text):
            raise ConfigurationError(
                f"headers: the value of {name!r} must not contain control characters"
            )
        pairs.append((name, _check_utf8(f"headers: the value of {name!r}", text)))
    return pairs


def check_token_store(value: object) -> str | None:
    """``None`` (tokens stay in the process) or a ``redis://`` / ``rediss://`` URL
    (docs/guides/fleets.md).

    The URL is never quoted: it may hold the Redis password.
    """
    if value is None:
        return None
    if not isinstance(value, str):
        raise ConfigurationError(
            f"token_store must be None or a redis:// URL, not {type(value).__name__}"
        )
    scheme = _SCHEME.match(value)
    if scheme is None or scheme.group().lower() not in ("redis:", "rediss:"):
        raise ConfigurationError(
            "token_store must be None or a redis:// or rediss:// URL (the URL is not shown)"
        )
    if _CONTROL.search(value) or value != value.strip() or " " in value:
        raise ConfigurationError("token_store must not contain spaces or control characters")
    return _check_utf8("token_store", value)


def _check_request_id_headers(value: object) -> tuple[str, ...]:
    """Header names (a sequence of ``str``, possibly empty), each a valid field name."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise ConfigurationError(
            "request_id_headers must be a sequence of header names such as "
            f"('Request-Id', 'X-Request-Id'), not {type(value).__name__}"
        )
    names: list[str] = []
    for name in value:
        if not isinstance(name, str) or not _TOKEN.fullmatch(name):
            shown = repr(name) if isinstance(name, str) else type(name).__name__
            raise ConfigurationError(f"request_id_headers: {shown[:60]} is not a valid header name")
        names.append(name)
    return tuple(names)


def check_proxy(value: object) -> str | None:
    """``None`` or an ``http://`` / ``https://`` proxy URL, possibly with the proxy's
    ``user:password@``. The URL is never quoted: it may hold that password (the native layer
    checks the rest: a host, no path)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise ConfigurationError(f"proxy must be None or a URL, not {type(value).__name__}")
    _check_utf8("proxy", value)
    scheme = _SCHEME.match(value)
    if scheme is None or scheme.group().lower() not in ("http:", "https:"):
        raise ConfigurationError(
            "proxy must be an http:// or https:// URL such as http://host:3128 "
            "(the URL is not shown)"
        )
    if _CONTROL.search(value) or value != value.strip() or " " in value:
        raise ConfigurationError("proxy must not contain spaces or control characters")
    return value


def parse_env_seconds(variable: str, text: str) -> float:
    """An environment variable holding seconds (``TOTAL_TIMEOUT``); the value is quoted."""
    try:
        return float(text)
    except ValueError:
        raise ConfigurationError(
            f"{variable} must be a number of seconds, got {text[:40]!r}"
        ) from None


def _by(check: Callable[[str, object], object]) -> dict[str, Any]:
    """A field's metadata: ``check(name, value)`` checks and normalises the value given."""
    return {"check": check}


def _ints(low: int, high: int) -> Callable[[str, object], int]:
    return lambda name, value: _check_int(name, value, low, high)


def _ignoring_name(check: Callable[[object], object]) -> Callable[[str, object], object]:
    return lambda _name, value: check(value)


@dataclass(frozen=True, slots=True, kw_only=True)
class Settings:
    """Every setting in the type the native client takes, each declared once with its check
    (the constructor's arguments are checked in this order; `check` builds it). Fields that
    may hold a password or an API key are kept out of ``repr()``."""

    base_url: str = field(repr=False, metadata=_by(_ignoring_name(check_base_url)))
    profile: str = field(metadata=_by(_ignoring_name(_check_profile)))
    rel_namespace: str | None = field(metadata=_by(_ignoring_name(_check_rel_namespace)))
    timeout: float = field(metadata=_by(check_seconds))
    connect_timeout: float = field(metadata=_by(check_seconds))
    total_timeout: float = field(metadata=_by(check_seconds))
    retries: int = field(metadata=_by(_ints(0, MAX_RETRIES)))
    token_leeway: float = field(
        metadata=_by(lambda name, value: check_seconds(name, value, zero=True))
    )
    max_response_size: int = field(metadata=_by(_ints(1, MAX_RESPONSE_SIZE)))
    allow_http: bool = field(metadata=_by(_check_bool))
    verify: bool | str = field(metadata=_by(_ignoring_name(_check_verify)))
    user_agent: str | None = field(repr=False, metadata=_by(_ignoring_name(_check_user_agent)))
    headers: list[tuple[str, str]] = field(repr=False, metadata=_by(_ignoring_name(_check_headers)))
    telemetry: bool = field(metadata=_by(_check_bool))
    token_store: str | None = field(repr=False, metadata=_by(_ignoring_name(check_token_store)))
    request_id_headers: tuple[str, ...] = field(
        metadata=_by(_ignoring_name(_check_request_id_headers))
    )
    proxy: str | None = field(repr=False, metadata=_by(_ignoring_name(check_proxy)))
    trust_env: bool = field(metadata=_by(_check_bool))


def check(**given: object) -> Settings:
    """Every setting checked and normalised, or ``ConfigurationError`` for the first bad one
    (``check_seconds("timeout", "30")``: "timeout must be a number of seconds, not str")."""
    checked: dict[str, Any] = {}
    for setting in fields(Settings):
        checked[setting.name] = setting.metadata["check"](setting.name, given[setting.name])
    return Settings(**checked)
