"""A client for the hypermedia (HAL+JSON) recurring-payments API, with a Rust core.

>>> import recurring_payments as rp
>>> client = rp.Client(server.base_url, credentials=server.credentials, profile=server.profile)
>>> client.get_creditors(reference="democreditor")["name"]
'Demo Creditor SAS'

The examples in the docstrings (``help(rp.Client.get)``) are tested: they run against the
sandbox with demo data, ``server = FakeServer(demo=True).start()`` (see
:mod:`recurring_payments.testing`), with ``client = server.client()`` (a :class:`Client`) and
``aclient = server.async_client()`` (an :class:`AsyncClient`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import _core as _core
from ._async_client import AsyncClient
from ._async_resource import AsyncLink, AsyncResource
from ._client import Client
from ._core import Token
from ._credentials import AdminCredentials, AppCredentials
from ._headers import Headers
from ._resource import Link, Resource
from .errors import (
    AuthenticationError,
    ClientError,
    ConfigurationError,
    Error,
    HTTPError,
    InternalError,
    LinkNotFoundError,
    NotFoundError,
    PreconditionFailedError,
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
    "AsyncClient",
    "AsyncLink",
    "AsyncResource",
    "AuthenticationError",
    "Client",
    "ClientError",
    "ConfigurationError",
    "Error",
    "HTTPError",
    "Headers",
    "InternalError",
    "Link",
    "LinkNotFoundError",
    "NotFoundError",
    "PreconditionFailedError",
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
    """Expand an RFC 6570 URI template (levels 1-4), the engine links use.

    Values may be ``str``, ``int``, ``float``, ``bool``, lists and dicts. ``None`` is undefined
    (left out) in a query expansion, and a ``TypeError`` in a path expansion, where leaving it out
    would address another resource. A value that would make a ``.`` or ``..`` path segment, and
    a malformed template, raise :class:`TemplateError`.

    >>> rp.expand_uri_template("/orders{?reference,size}", {"reference": "o 1", "size": 50})
    '/orders?reference=o%201&size=50'
    >>> rp.expand_uri_template("/mandates{/ids*}{?q*}", {"ids": [1, 2], "q": {"page": 0}})
    '/mandates/1/2?page=0'
    >>> rp.expand_uri_template("/orders/{id}/cancel", {"id": ".."})
    Traceback (most recent call last):
    ...
    recurring_payments.errors.TemplateError: ...
    """
    return _core.expand_uri_template(template, variables)
