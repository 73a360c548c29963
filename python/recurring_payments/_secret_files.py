"""Secrets kept in files (``APP_SECRET_FILE``, ``PASSWORD_FILE`` of ``from_env``): a credentials
provider that reads the file again at every token request, so a secret rotated by rewriting the
file (a Kubernetes or Docker secret updated in place) is picked up without a restart.

Nothing here holds the secret longer than one read: no attribute, no cache. Errors name the
variable and the path, never the content, and no frame of theirs keeps the content in a local.
"""

from __future__ import annotations

import time
from typing import NoReturn

from ._credentials import AdminCredentials, AppCredentials
from .errors import ConfigurationError

# A file read as empty is looked at again, every pause, until it has stayed empty this long: a
# writer that truncates the file and then writes it leaves it empty for a moment, and a moment
# can be long for a writer starved of CPU (or of the GIL, when it is a thread of this process).
_EMPTY_FOR = 0.5
_EMPTY_PAUSE = 0.005


class SecretFileError(ConfigurationError):
    """A secret file that cannot serve. Its message names the variable and the path, never
    the content, so a client that called the provider shows it (``_message_is_safe``)."""

    _message_is_safe = True


def read_secret(variable: str, path: str) -> str:
    """The file's content less one trailing newline (``\\n`` or ``\\r\\n``); nothing else is
    stripped. A file that is missing, unreadable, not UTF-8 or empty is a ``ConfigurationError``
    naming ``variable`` and ``path``."""
    deadline = None
    while True:
        text, problem = _read(path)
        if problem is None:
            return text
        if problem != "is empty":
            break
        now = time.monotonic()
        deadline = deadline or now + _EMPTY_FOR
        if now >= deadline:
            break
        time.sleep(_EMPTY_PAUSE)
    raise SecretFileError(f"{variable}: the file {path!r} {problem}")


def _read(path: str) -> tuple[str, str | None]:
    """The secret in ``path`` and None, or ``""`` and why there is none. It returns rather
    than raises, so that no frame holding the content is part of an error's traceback."""
    try:
        with open(path, "rb") as file:
            raw = file.read()
    except FileNotFoundError:
        return "", "does not exist"
    except IsADirectoryError:
        return "", "is a directory"
    except PermissionError:
        return "", "cannot be read (permission denied)"
    except OSError as err:
        return "", f"cannot be read ({type(err).__name__})"
    try:
        text = _strip_newline(raw.decode("utf-8"))
    except UnicodeDecodeError:
        return "", "is not UTF-8 text"
    return (text, None) if text else ("", "is empty")


def _strip_newline(text: str) -> str:
    if text.endswith("\r\n"):
        return text[:-2]
    if text.endswith("\n"):
        return text[:-1]
    return text


CredentialsClass = type[AppCredentials] | type[AdminCredentials]


def credentials_of(
    kind: CredentialsClass, fields: tuple[str, ...], secret: str
) -> AppCredentials | AdminCredentials:
    """``kind`` made of its fields before the secret (app name; creditor, login) and ``secret``."""
    if kind is AppCredentials:
        return AppCredentials(fields[0], secret)
    return AdminCredentials(fields[0], fields[1], secret)


class SecretFileCredentials:
    """A credentials provider whose secret is the content of a file, read at every call.

    ``from_env`` makes one for ``APP_SECRET_FILE`` or ``PASSWORD_FILE``; two compare equal when
    they read the same file for the same app or user, so clients derived with them share a
    token. Its ``repr`` names the file, never the secret.
    """

    __slots__ = ("_fields", "_kind", "_path", "_variable")

    def __init__(
        self,
        kind: CredentialsClass,
        fields: tuple[str, ...],
        variable: str,
        path: str,
    ) -> None:
        self._kind = kind
        self._fields = fields
        self._variable = variable
        self._path = path

    def __call__(self) -> AppCredentials | AdminCredentials:
        return credentials_of(self._kind, self._fields, read_secret(self._variable, self._path))

    def _key(self) -> tuple[object, ...]:
        return (self._kind, self._fields, self._path)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SecretFileCredentials):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        names = ("app_name",) if self._kind is AppCredentials else ("creditor", "login")
        shown = ", ".join(f"{n}={v!r}" for n, v in zip(names, self._fields, strict=True))
        return f"{self._kind.__name__}({shown}) with the secret from {self._path!r}"

    def __reduce__(self) -> NoReturn:
        # Like a client, a provider does not travel: it would carry a path into another host.
        raise TypeError("secret-file credentials cannot be pickled")
