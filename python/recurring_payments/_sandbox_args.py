"""The checks of the sandbox's arguments, the one layer that checks them (the native server
trusts what `recurring_payments.testing.FakeServer` hands it).

Misuse of the sandbox is a TypeError or ValueError naming the argument and what it accepts,
raised before anything changes: never a client error (rp.Error), which a test could mistake
for the client's behaviour.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

# The largest counts the native server takes (a u32, a u64).
U32 = 2**32 - 1
U64 = 2**64 - 1


def check_int(name: str, value: object, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if low <= value <= high:
        return value
    # A bound that is only the native type's limit is named when it is the one exceeded.
    accepted = f"from {low} to {high}" if value > high or high <= 65_535 else f">= {low}"
    raise ValueError(f"{name} must be an int {accepted}, not {value}")


def check_seconds(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number of seconds, not {type(value).__name__}")
    seconds = float(value)
    if not (math.isfinite(seconds) and seconds >= 0):
        raise ValueError(f"{name} must be a finite number of seconds >= 0, not {value}")
    return seconds


def check_bool(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, not {type(value).__name__}")
    return value


def check_str(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, not {type(value).__name__}")
    return value


def check_served(name: str, value: object) -> str:
    """A path the sandbox serves (``add_resource``, ``route``): matched as it is, so a query or
    a fragment in it would never match what it seems to (and was dropped silently)."""
    path = check_str(name, value)
    if "?" in path or "#" in path:
        raise ValueError(
            f"{name} must be a path without a query or fragment, not {path!r}: a route reads "
            "the query from request.query"
        )
    if path.rstrip("/") == "/oauth/token":
        raise ValueError(
            f"{name} {path!r} is the sandbox's own token endpoint; it cannot be replaced"
        )
    return path


def check_path(value: object) -> str | None:
    """A fault's ``path``: ``None`` (every API request), a path, or an absolute URL."""
    if value is None:
        return None
    path = check_str("path", value)
    if not path.startswith(("/", "http://", "https://")):
        raise ValueError(
            f"path must be None, a path starting with '/' or an absolute URL, not {path!r}"
        )
    return path


def check_headers(value: object) -> list[tuple[str, str]]:
    if value is None:
        return []
    if not isinstance(value, Mapping):
        raise TypeError(f"headers must be a mapping of str to str, not {type(value).__name__}")
    pairs = list(value.items())
    for name, text in pairs:
        if not isinstance(name, str) or not isinstance(text, str):
            raise TypeError(
                f"headers must be a mapping of str to str, not {type(name).__name__} to "
                f"{type(text).__name__}"
            )
    return pairs
