"""A client for the hypermedia (HAL+JSON) recurring-payments API, with a Rust core."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import _core as _core
from ._client import Client
from ._core import Token
from ._credentials import AdminCredentials, AppCredentials
from ._resource import Headers, Link, Resource
from .errors import (
    AuthenticationError,
    ClientError,
    ConfigurationError,
    Error,
    HTTPError,
    LinkNotFoundError,
    NotFoundError,
    ProtocolError,
    ServerError,
    TemplateError,
    TimeoutError,
    TransportError,
)

__version__: str = _core.__version__

__all__ = [
    "AdminCredentials",
    "AppCredentials",
    "AuthenticationError",
    "Client",
    "ClientError",
    "ConfigurationError",
    "Error",
    "HTTPError",
    "Headers",
    "Link",
    "LinkNotFoundError",
    "NotFoundError",
    "ProtocolError",
    "Resource",
    "ServerError",
    "TemplateError",
    "TimeoutError",
    "Token",
    "TransportError",
    "__version__",
    "expand_uri_template",
]


def expand_uri_template(template: str, variables: Mapping[str, Any]) -> str:
    """Expand an RFC 6570 URI template (levels 1-4).

    Values may be ``str``, ``int``, ``float``, ``bool``, lists and dicts; ``None`` is undefined.

    >>> expand_uri_template("/orders{?reference,size}", {"reference": "o 1", "size": 50})
    '/orders?reference=o%201&size=50'
    """
    return _core.expand_uri_template(template, variables)
