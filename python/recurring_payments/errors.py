"""The exception tree of ``recurring_payments`` (shaped like httpx's).

Every exception the library raises derives from :class:`Error`. Messages name the method and the
URL of the request and never contain a secret, a token or a ``Basic`` header.

Errors are plain data: each one pickles and copies with its class, message and attributes, so it
crosses ``multiprocessing``, ``ProcessPoolExecutor`` and Celery.
"""

from __future__ import annotations

import builtins
import json as _json
from collections.abc import Iterable, Mapping
from typing import Any, TypeAlias

from ._headers import Headers

# What the constructors accept as ``headers=``: a mapping, or (name, value) pairs as received.
_HeadersLike: TypeAlias = Mapping[str, str] | Iterable[tuple[str, str]] | None

__all__ = [
    "AuthenticationError",
    "ClientError",
    "ConfigurationError",
    "ConflictError",
    "Error",
    "HTTPError",
    "InternalError",
    "LinkNotFoundError",
    "NotFoundError",
    "PreconditionFailedError",
    "ProtocolError",
    "RateLimitError",
    "ServerError",
    "TemplateError",
    "TimeoutError",
    "TransportError",
]


class Error(Exception):
    """Base class of every error raised by ``recurring_payments``.

    Every error has ``outcome_unknown`` (``True`` only when a POST or PATCH was written, wholly
    or in part, and no complete response arrived: the server may have processed it) and
    ``headers`` (a case-insensitive read-only mapping; empty when no response came) and
    ``request_id`` (the response's request id, from the client's ``request_id_headers``;
    ``None`` when no response came or it named none). Errors pickle and copy with their class,
    message and attributes.

    >>> import pickle
    >>> try:
    ...     client.get("/nowhere")
    ... except rp.Error as err:
    ...     print(type(err).__name__, err)
    ...     received = pickle.loads(pickle.dumps(err))  # e.g. from a multiprocessing worker
    NotFoundError GET http://127.0.0.1:.../nowhere: HTTP 404 (902: no resource at /nowhere)
    >>> type(received).__name__, received.status, received.outcome_unknown
    ('NotFoundError', 404, False)
    """

    outcome_unknown: bool = False
    headers: Headers = Headers([])
    request_id: str | None = None

    def __str__(self) -> str:
        # KeyError (a base of LinkNotFoundError) would quote the message; keep it plain.
        return str(self.args[0]) if self.args else ""

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuilt from its class, args and attribute dict without running `__init__` again
        # (keyword-only arguments, body parsing), so an attribute added later pickles too.
        # Exception's own reduce calls `cls(*args)`, which the keyword-only arguments refuse.
        return (_rebuild, (type(self), self.args), self.__dict__ or None)


class ConfigurationError(Error, ValueError):
    """Bad client settings: a malformed ``base_url``, plain ``http://`` to a remote host, ...

    Also a ``ValueError``.

    >>> rp.Client("http://api.example.com", credentials=server.credentials, profile="p")
    Traceback (most recent call last):
    ...
    recurring_payments.errors.ConfigurationError: refusing plain http to api.example.com ...

    Raised by a call when a redirect leads where the settings refuse to go (plain ``http://``
    off loopback): ``outcome_unknown`` is then ``True`` if an earlier hop of the call processed
    a POST or PATCH (answered 301/302/303).
    """

    def __init__(self, message: str, *, outcome_unknown: bool = False):
        super().__init__(message)
        if outcome_unknown:
            self.outcome_unknown = True


class InternalError(Error, RuntimeError):
    """The library cannot work in the state this process or thread is in: its I/O runtime
    cannot start or is gone, a lock was poisoned by a crash, or a request was started from a
    signal handler while the same thread waits for another request. Neither a setting nor the
    server caused it; nothing was sent (``outcome_unknown`` is ``False``). Also a
    ``RuntimeError``.

    >>> err = rp.InternalError("this thread's I/O runtime is gone")
    >>> isinstance(err, RuntimeError), isinstance(err, ValueError), err.outcome_unknown
    (True, False, False)
    """


class TransportError(Error):
    """The request did not complete: connection refused or reset, TLS failure, body cut short.

    ``method`` and ``url`` name the request. GET requests are retried first (``retries``).
    ``outcome_unknown`` is ``True`` when a POST or PATCH may have reached the server.

    >>> server.drop_next()  # the sandbox closes the next connection without answering
    >>> try:
    ...     server.client(retries=0).root()
    ... except rp.TransportError as err:
    ...     print(err.method, err.url == server.base_url + "/")
    GET True
    """

    def __init__(
        self,
        message: str,
        *,
        method: str | None = None,
        url: str | None = None,
        outcome_unknown: bool = False,
    ):
        super().__init__(message)
        self.method = method
        self.url = url
        self.outcome_unknown = outcome_unknown


class TimeoutError(TransportError, builtins.TimeoutError):
    """The connection or the response took longer than ``connect_timeout``/``timeout``.

    Also the builtin ``TimeoutError``.

    >>> server.delay_next(0.5)
    >>> server.client(timeout=0.1, retries=0).root()
    Traceback (most recent call last):
    ...
    recurring_payments.errors.TimeoutError: GET http://127.0.0.1:.../: timed out: ...
    """


class HTTPError(Error):
    """The server answered with a status that is not 2xx.

    Attributes: ``status``, ``method``, ``url``, ``headers`` (case-insensitive, read-only),
    ``body`` (text), ``json`` (the parsed body, or ``None`` when it is empty, not JSON or nested
    deeper than 128 levels), ``code``/``message`` taken from the API's ``{"code", "message"}``
    error bodies (``None`` when absent), ``retry_after`` (seconds from ``Retry-After``, a delay
    or a date; ``None`` when absent or unreadable), ``request_id`` (the first header of the
    client's ``request_id_headers`` present; it then ends the message: ``… (request id
    abc123)``) and ``outcome_unknown`` (``False``: a response came; ``True`` when an earlier
    hop of the call processed a POST or PATCH, answered by 301/302/303).

    >>> try:
    ...     client.get("/nowhere")
    ... except rp.HTTPError as err:
    ...     print(err.status, err.method, err.code, err.message)
    404 GET 902 no resource at /nowhere
    """

    def __init__(
        self,
        message: str,
        *,
        status: int,
        method: str,
        url: str,
        headers: _HeadersLike = None,
        body: str = "",
        outcome_unknown: bool = False,
        request_id: str | None = None,
    ):
        self.status = status
        self.method = method
        self.url = url
        self.headers = _as_headers(headers)
        self.retry_after: float | None = _retry_after(self.headers.get("retry-after"))
        self.outcome_unknown = outcome_unknown
        self.request_id = request_id
        self.body = body
        self.json: Any = _parse_json(body)
        payload = self.json if isinstance(self.json, dict) else {}
        code = payload.get("code")
        self.code: int | str | None = code if isinstance(code, (int, str)) else None
        text = payload.get("message")
        self.message: str | None = text if isinstance(text, str) else None
        detail = self._detail(payload)
        if detail is not None:
            message = f"{message} ({detail})"
        super().__init__(_with_request_id(message, request_id))

    def _detail(self, payload: dict[str, Any]) -> str | None:
        """What the body says, for the message (``code: message``)."""
        if self.message is None:
            return None
        return self.message if self.code is None else f"{self.code}: {self.message}"


class ClientError(HTTPError):
    """A 4xx answer.

    >>> server.fail_next(409)
    >>> try:
    ...     client.root()
    ... except rp.ClientError as err:
    ...     print(err.status, err.message)
    409 failure injected by the sandbox (fail_next)
    """


class AuthenticationError(ClientError):
    """The token endpoint refused the credentials, or a request got a second 401.

    ``error`` and ``error_description`` come from the OAuth error body when there is one.

    >>> wrong = rp.AppCredentials("sandbox-app", "not-the-secret")
    >>> try:
    ...     rp.Client(server.base_url, credentials=wrong, profile=server.profile).authenticate()
    ... except rp.AuthenticationError as err:
    ...     print(err.status, err.error, err.error_description)
    401 invalid_client bad client credentials
    """

    error: str | None
    error_description: str | None

    def _detail(self, payload: dict[str, Any]) -> str | None:
        error = payload.get("error")
        description = payload.get("error_description")
        self.error = error if isinstance(error, str) else None
        self.error_description = description if isinstance(description, str) else None
        if self.error is not None and self.message is None:
            return self.error if description is None else f"{self.error}: {description}"
        return super()._detail(payload)


class NotFoundError(ClientError):
    """A 404 answer.

    >>> client.get("/nowhere")
    Traceback (most recent call last):
    ...
    recurring_payments.errors.NotFoundError: GET http://...: HTTP 404 (902: no resource at /nowhere)
    """


class ConflictError(ClientError):
    """A 409 answer: the request conflicts with the resource's current state (a duplicate
    reference, a state that forbids the change). Sending it again as it is would conflict again.

    >>> server.fail_next(409)
    >>> try:
    ...     client.root()
    ... except rp.ConflictError as err:
    ...     print(err.status, isinstance(err, rp.ClientError))
    409 True
    """


class RateLimitError(ClientError):
    """A 429 answer: too many requests. ``retry_after`` is the pause the server asks for
    (seconds, from ``Retry-After``; ``None`` when it gave none). A GET was already retried
    within ``retries`` and the call's deadline; a POST or PATCH never is.

    >>> server.fail_next(429, headers={"Retry-After": "7"})
    >>> try:
    ...     server.client(retries=0).root()
    ... except rp.RateLimitError as err:
    ...     print(err.status, err.retry_after)
    429 7.0
    """


class PreconditionFailedError(ClientError):
    """A 412 answer: the resource changed since it was read (``if_match=`` did not match).

    >>> server.fail_next(412)
    >>> try:
    ...     client.root()
    ... except rp.PreconditionFailedError as err:
    ...     print(err.status, isinstance(err, rp.ClientError))
    412 True
    """


class ServerError(HTTPError):
    """A 5xx answer. GET requests are retried first (``retries``, honouring ``Retry-After``).

    >>> server.fail_next(503)
    >>> try:
    ...     server.client(retries=0).root()
    ... except rp.ServerError as err:
    ...     print(err.status, err.code)
    503 999
    """


class ProtocolError(Error):
    """The answer broke the protocol: not JSON, not a JSON object, wrong content type, a bad
    token response, nesting too deep, or a body larger than ``max_response_size``.

    ``method`` and ``url`` name the request; for a response, ``status``, ``headers`` and
    ``request_id`` are its own (a 201 with a malformed body was still created:
    ``err.headers["Location"]``), otherwise ``None`` and empty. A known request id ends the
    message (``… (request id abc123)``).

    >>> server.malformed_next()  # a 200 whose body is not JSON
    >>> client.root()
    Traceback (most recent call last):
    ...
    recurring_payments.errors.ProtocolError: GET http://...: response body is not valid JSON: ...
    """

    def __init__(
        self,
        message: str,
        *,
        method: str | None = None,
        url: str | None = None,
        status: int | None = None,
        headers: _HeadersLike = None,
        outcome_unknown: bool = False,
        request_id: str | None = None,
    ):
        super().__init__(_with_request_id(message, request_id))
        self.method = method
        self.url = url
        self.status = status
        self.headers = _as_headers(headers)
        self.outcome_unknown = outcome_unknown
        self.request_id = request_id


class TemplateError(Error, ValueError):
    """A malformed RFC 6570 URI template, or a template value that would change the structure of
    the path (``.`` or ``..`` as a path segment). Also a ``ValueError``.

    >>> rp.expand_uri_template("/orders{?reference", {})
    Traceback (most recent call last):
    ...
    recurring_payments.errors.TemplateError: malformed URI template "/orders{?reference": ...
    """


class LinkNotFoundError(Error, AttributeError, KeyError):
    """A relation name that the resource does not have, or that names two relations.

    Also an ``AttributeError`` and a ``KeyError``; the message suggests the closest names.

    >>> client.root().get_creditor
    Traceback (most recent call last):
    ...
    recurring_payments.errors.LinkNotFoundError: no relation 'get_creditor' in this resource;
    did you mean 'get_creditors'? available: ...
    """


def _rebuild(cls: type[Error], args: tuple[Any, ...]) -> Error:
    """Unpickle an error (the name is part of the pickles: keep it)."""
    err = cls.__new__(cls, *args)
    err.args = args  # OSError (a base of TimeoutError) takes its args in __init__, not __new__
    return err


_NO_HEADERS = Error.headers
# Deepest error body decoded: serde_json's limit, the core's for success bodies. Deeper would
# exhaust the stack (json.loads: RecursionError) or, barely parsed, break copy.deepcopy later.
_MAX_JSON_DEPTH = 128
# `Retry-After` delays that do not fit a u64 are unreadable, as in the core.
_MAX_DELAY = 2**64 - 1


def _with_request_id(message: str, request_id: str | None) -> str:
    """The message, ended by the request id support asks for when the response named one."""
    return message if request_id is None else f"{message} (request id {request_id})"


def _as_headers(headers: _HeadersLike) -> Headers:
    if headers is None:
        return _NO_HEADERS
    if isinstance(headers, Headers):
        return headers  # immutable: shared
    if isinstance(headers, Mapping):
        return Headers(list(headers.items()))
    return Headers([(name, value) for name, value in headers])


def _parse_json(body: str) -> Any:
    if not body:
        return None
    try:
        value = _json.loads(body)
    except (ValueError, RecursionError):
        return None
    # Counting brackets (C speed) spares the walk for every ordinary body.
    if body.count("[") + body.count("{") > _MAX_JSON_DEPTH and not _within_depth(value):
        return None
    return value


def _within_depth(value: Any) -> bool:
    # Iterative: a recursive walk is what must not happen on hostile input.
    stack = [(value, 1)] if isinstance(value, (dict, list)) else []
    while stack:
        node, depth = stack.pop()
        if depth > _MAX_JSON_DEPTH:
            return False
        children = node.values() if isinstance(node, dict) else node
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return True


def _retry_after(value: str | None) -> float | None:
    """``Retry-After`` in seconds: a delay, or an HTTP date (from now, never negative)."""
    if value is None:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():
        seconds = int(value) if len(value) <= 20 else _MAX_DELAY + 1
        return float(seconds) if seconds <= _MAX_DELAY else None
    # Imported for the rare HTTP date only: email.utils alone was a fifth of the package's import.
    import email.utils
    from datetime import datetime, timezone

    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:  # asctime dates carry no zone; HTTP dates are GMT
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())
