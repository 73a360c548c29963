"""The exception tree of ``recurring_payments`` (shaped like httpx's).

Every exception the library raises derives from :class:`Error`. Messages name the method and the
URL of the request and never contain a secret, a token or a ``Basic`` header.
"""

from __future__ import annotations

import builtins
import json as _json
from collections.abc import Mapping
from typing import Any

__all__ = [
    "AuthenticationError",
    "ClientError",
    "ConfigurationError",
    "Error",
    "HTTPError",
    "LinkNotFoundError",
    "NotFoundError",
    "ProtocolError",
    "ServerError",
    "TemplateError",
    "TimeoutError",
    "TransportError",
]


class Error(Exception):
    """Base class of every error raised by ``recurring_payments``.

    >>> try:
    ...     client.get("/nowhere")
    ... except rp.Error as err:
    ...     print(type(err).__name__, err)
    NotFoundError GET http://127.0.0.1:.../nowhere: HTTP 404 (902: no resource at /nowhere)
    """

    def __str__(self) -> str:
        # KeyError (a base of LinkNotFoundError) would quote the message; keep it plain.
        return str(self.args[0]) if self.args else ""


class ConfigurationError(Error, ValueError):
    """Bad client settings: a malformed ``base_url``, plain ``http://`` to a remote host, ...

    Also a ``ValueError``.

    >>> rp.Client("http://api.example.com", credentials=server.credentials, profile="p")
    Traceback (most recent call last):
    ...
    recurring_payments.errors.ConfigurationError: refusing plain http to api.example.com ...
    """


class TransportError(Error):
    """The request did not complete: connection refused or reset, TLS failure, body cut short.

    ``method`` and ``url`` name the request. GET requests are retried first (``retries``).

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

    Attributes: ``status``, ``method``, ``url``, ``headers`` (a dict, lower-case names),
    ``body`` (text), ``json`` (the parsed body or ``None``), and ``code``/``message`` taken from
    the API's ``{"code", "message"}`` error bodies (``None`` when absent).

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
        headers: Mapping[str, str] | None = None,
        body: str = "",
    ):
        self.status = status
        self.method = method
        self.url = url
        self.headers: dict[str, str] = dict(headers or {})
        self.body = body
        self.json: Any = _parse_json(body)
        payload = self.json if isinstance(self.json, dict) else {}
        code = payload.get("code")
        self.code: int | str | None = code if isinstance(code, (int, str)) else None
        text = payload.get("message")
        self.message: str | None = text if isinstance(text, str) else None
        if self.message is not None:
            detail = self.message if self.code is None else f"{self.code}: {self.message}"
            message = f"{message} ({detail})"
        super().__init__(message)


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

    def __init__(self, message: str, **kwargs: Any):
        super().__init__(message, **kwargs)
        payload = self.json if isinstance(self.json, dict) else {}
        error = payload.get("error")
        description = payload.get("error_description")
        self.error: str | None = error if isinstance(error, str) else None
        self.error_description: str | None = description if isinstance(description, str) else None
        if self.error is not None and self.message is None:
            detail = self.error if description is None else f"{self.error}: {description}"
            self.args = (f"{self.args[0]} ({detail})",)


class NotFoundError(ClientError):
    """A 404 answer.

    >>> client.get("/nowhere")
    Traceback (most recent call last):
    ...
    recurring_payments.errors.NotFoundError: GET http://...: HTTP 404 (902: no resource at /nowhere)
    """


class PreconditionFailedError(ClientError):
    """A 412 answer (temporary definition, replaced by the errors branch)."""


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
        headers: Any = None,
    ):
        super().__init__(message)
        self.method = method
        self.url = url
        self.status = status
        self.headers = dict(headers or {})


class TemplateError(Error, ValueError):
    """A malformed RFC 6570 URI template. Also a ``ValueError``.

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


def _parse_json(body: str) -> Any:
    if not body:
        return None
    try:
        return _json.loads(body)
    except ValueError:
        return None
