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
from typing import TYPE_CHECKING, Any

from . import _core as _core
from ._client import Client
from ._core import Token
from ._credentials import AdminCredentials, AppCredentials
from ._headers import Headers
from ._resource import Link, Resource
from .errors import (
    AuthenticationError,
    ClientError,
    ConfigurationError,
    ConflictError,
    Error,
    HTTPError,
    InternalError,
    LinkNotFoundError,
    NotFoundError,
    PreconditionFailedError,
    ProtocolError,
    RateLimitError,
    ServerError,
    TemplateError,
    TimeoutError,
    TransportError,
)

__version__: str = _core.__version__

# The async face imports asyncio, a third of this package's import: it loads on first use of
# one of its names (PEP 562), so a sync-only program (a Django worker, a script) never pays it.
_ASYNC_FACE = {
    "AsyncClient": "._async_client",
    "AsyncLink": "._async_resource",
    "AsyncResource": "._async_resource",
}
if TYPE_CHECKING:
    from ._async_client import AsyncClient
    from ._async_resource import AsyncLink, AsyncResource
else:  # hidden from type checkers: `rp.Typo` stays an error for them

    def __getattr__(name: str) -> Any:
        module = _ASYNC_FACE.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        from importlib import import_module

        value = getattr(import_module(module, __name__), name)
        globals()[name] = value  # found directly from now on
        return value

    def __dir__() -> list[str]:
        return sorted(set(globals()) | set(_ASYNC_FACE))


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
    "ConflictError",
    "Error",
    "HTTPError",
    "Headers",
    "InternalError",
    "Link",
    "LinkNotFoundError",
    "NotFoundError",
    "PreconditionFailedError",
    "ProtocolError",
    "RateLimitError",
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
