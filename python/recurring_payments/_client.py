"""The synchronous client (API.md §2-3), and the base it shares with `AsyncClient`."""

from __future__ import annotations

import logging
import os
import platform
import threading
from collections.abc import Mapping
from typing import Any, TypeVar
from urllib.parse import urljoin

from . import _core
from ._credentials import AdminCredentials, AppCredentials
from ._resource import Headers, Link, Resource
from .errors import ConfigurationError, LinkNotFoundError

logger = logging.getLogger("recurring_payments")

Credentials = AppCredentials | AdminCredentials
_DEFAULT_SIZE = 32 * 2**20
_C = TypeVar("_C", bound="_ClientBase")
# Names that tools look up on any object, and may call: IPython's help (`client?`) calls
# `obj.getdoc()`, older IPython completers `obj.trait_names()`, pytest's doctest probes for
# mocks. No relation of the API is named like them; answering would fetch the entry point.
_PROBES = frozenset({"getdoc", "trait_names", "pytest_mock_example_attribute_that_shouldnt_exist"})


def _user_agent(extra: str | None) -> str:
    ours = f"recurring-payments/{_core.__version__} python/{platform.python_version()}"
    return f"{extra} {ours}" if extra else ours


class _ClientBase:
    """What :class:`Client` and ``AsyncClient`` share: configuration, the native client, the
    token and URL helpers. Subclasses send the requests (blocking, or as coroutines)."""

    def __init__(
        self,
        base_url: str,
        *,
        credentials: Credentials,
        profile: str,
        rel_namespace: str | None = None,
        timeout: float = 30.0,
        connect_timeout: float = 10.0,
        retries: int = 2,
        token_leeway: float = 30.0,
        max_response_size: int = _DEFAULT_SIZE,
        allow_http: bool = False,
        verify: bool | str | os.PathLike[str] = True,
        user_agent: str | None = None,
        total_timeout: float = 25.0,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        if not isinstance(credentials, (AppCredentials, AdminCredentials)):
            raise ConfigurationError("credentials must be AppCredentials or AdminCredentials")
        if not isinstance(retries, int) or retries < 0:
            raise ConfigurationError("retries must be an int >= 0")
        if not isinstance(max_response_size, int) or max_response_size <= 0:
            raise ConfigurationError("max_response_size must be a positive int")
        self._base_url = base_url
        self._profile = profile
        self._credentials = credentials
        self._rel_namespace = rel_namespace
        self._native: _core.NativeClient | None = _core.NativeClient(
            base_url,
            credentials=credentials,
            profile=profile,
            timeout=float(timeout),
            connect_timeout=float(connect_timeout),
            retries=retries,
            token_leeway=float(token_leeway),
            max_response_size=max_response_size,
            allow_http=bool(allow_http),
            verify=verify,
            user_agent=_user_agent(user_agent),
            logger=logger,
            total_timeout=float(total_timeout),
            headers=list((headers or {}).items()),
        )
        self._indexes: dict[tuple[tuple[str, ...], tuple[tuple[str, str], ...]], _core.RelIndex]
        self._indexes = {}
        self._init_root_cache()

    @classmethod
    def from_env(cls: type[_C], prefix: str = "RECURRING_PAYMENTS_", **overrides: Any) -> _C:
        """Build a client from environment variables: ``<prefix>BASE_URL``, ``PROFILE``,
        ``REL_NAMESPACE`` (optional), and ``APP_NAME`` + ``APP_SECRET`` or ``CREDITOR`` +
        ``LOGIN`` + ``PASSWORD``. Keyword arguments override or add constructor arguments.

        ``Client.from_env()`` in a Django settings module or a Flask app factory reads
        ``RECURRING_PAYMENTS_BASE_URL`` and so on; a missing variable is named:

        >>> rp.Client.from_env(prefix="SHOP_API_", timeout=10.0)
        Traceback (most recent call last):
        ...
        recurring_payments.errors.ConfigurationError: missing credentials: set SHOP_API_APP_NAME ...
        """
        env = {k[len(prefix) :]: v for k, v in os.environ.items() if k.startswith(prefix)}

        def need(*names: str) -> list[str]:
            missing = [prefix + n for n in names if not env.get(n)]
            if missing:
                raise ConfigurationError(f"missing environment variable(s): {', '.join(missing)}")
            return [env[n] for n in names]

        credentials: Credentials
        if "credentials" in overrides:
            credentials = overrides.pop("credentials")
        elif env.get("APP_NAME") or env.get("APP_SECRET"):
            credentials = AppCredentials(*need("APP_NAME", "APP_SECRET"))
        elif env.get("CREDITOR") or env.get("LOGIN"):
            credentials = AdminCredentials(*need("CREDITOR", "LOGIN", "PASSWORD"))
        else:
            raise ConfigurationError(
                f"missing credentials: set {prefix}APP_NAME and {prefix}APP_SECRET, "
                f"or {prefix}CREDITOR, {prefix}LOGIN and {prefix}PASSWORD"
            )
        base_url = overrides.pop("base_url", None) or need("BASE_URL")[0]
        profile = overrides.pop("profile", None) or need("PROFILE")[0]
        overrides.setdefault("rel_namespace", env.get("REL_NAMESPACE") or None)
        return cls(base_url, credentials=credentials, profile=profile, **overrides)

    # --- public API --------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        """The environment's base address, as given; relative hrefs resolve against it.

        >>> client.base_url == server.base_url
        True
        """
        return self._base_url

    @property
    def profile(self) -> str:
        """The profile URL that every ``Accept`` header names.

        >>> client.profile
        'http://127.0.0.1:.../alps/v1'
        """
        return self._profile

    @property
    def credentials(self) -> Credentials:
        """The credentials given (their secret masked in ``repr()``).

        >>> client.credentials
        AppCredentials(app_name='sandbox-app', app_secret='***')
        """
        return self._credentials

    @property
    def token(self) -> _core.Token | None:
        """The current token, or ``None`` before the first request.

        >>> client.token is None
        True
        >>> client.root().status, client.token.scope
        (200, 'api')
        """
        return self._live().token

    def __repr__(self) -> str:
        state = "closed" if self._native is None else repr(self._credentials)
        return f"<{type(self).__name__} {self._base_url} {state}>"

    # --- internals shared with resources and links ---------------------------------------------
    def _live(self) -> _core.NativeClient:
        native = self._native
        if native is None:
            raise RuntimeError("this client is closed")
        return native

    def _resolve(self, href: str) -> str:
        native = self._native
        if native is None:
            # Resources outlive their client (a notebook cell showing an old result): resolve
            # against the base URL alone, without bringing the closed client back.
            return urljoin(self._base_url, href)
        return native.resolve(href)

    def _target(
        self,
        href: str,
        variables: Mapping[str, Any],
        templated: bool | None = None,
        rel: str = "",
        declared: list[str] | None = None,
    ) -> str:
        """``href`` expanded with ``variables``, not resolved: requests resolve it natively."""
        if templated is None:
            templated = "{" in href
        if not templated:
            if variables:
                raise TypeError(f"{rel or href!r} is not a template; it takes no variables")
            return href
        if declared is None:  # a Link passes the list it has parsed once
            declared = _core.template_variables(href)
        unknown = [name for name in variables if name not in declared]
        if unknown:
            raise TypeError(
                f"{rel or href!r} got unexpected variable(s) {', '.join(map(repr, unknown))}; "
                f"it declares {', '.join(declared) or 'none'}"
            )
        return _core.expand_uri_template(href, variables)

    def _rel_index(self, rels: list[str], curies: list[tuple[str, str]]) -> _core.RelIndex:
        # Pages of one collection share their relations: build each index once.
        key = (tuple(rels), tuple(curies))
        index = self._indexes.get(key)
        if index is None:
            if len(self._indexes) > 256:
                self._indexes.clear()
            index = self._indexes[key] = _core.RelIndex(rels, curies, self._rel_namespace)
        return index

    def _init_root_cache(self) -> None:
        raise NotImplementedError  # the entry point cache is sync or async

    def _close(self) -> None:
        self._native = None
        self._init_root_cache()

    def _short_name(self, rel: str) -> str:
        return _core.RelIndex([rel], [], self._rel_namespace).short_name(rel) or rel


class Client(_ClientBase):
    """A client of the API, safe to share between threads (one per process is the norm).

    >>> client = rp.Client(server.base_url, credentials=server.credentials,
    ...                    profile=server.profile, timeout=10.0)
    >>> creditor = client.get_creditors(reference="democreditor")
    >>> creditor["name"], creditor.status
    ('Demo Creditor SAS', 200)
    >>> client.create_orders.post({"reference": "o-1", "started": True}).status
    201

    Every relation of the entry point is an attribute (``client.create_orders``); the entry
    point is fetched once, on first use, and cached. ``with rp.Client(...) as client:`` closes
    it at the end of the block. Constructor arguments: see the README's configuration
    reference (``base_url``, ``credentials`` and ``profile`` are required).
    """

    def _init_root_cache(self) -> None:
        self._root: Resource | None = None
        self._root_lock = threading.Lock()
        self._pid = os.getpid()

    def authenticate(self) -> _core.Token:
        """Fetch a token now (validates the credentials at start-up).

        >>> token = client.authenticate()
        >>> token.scope, token == client.token
        ('api', True)
        """
        return self._live().authenticate()

    def root(self, refresh: bool = False) -> Resource:
        """The entry point (GET ``/``), cached per client; ``refresh=True`` fetches it again.

        >>> root = client.root()
        >>> root.url == server.base_url + "/", client.root() is root
        (True, True)
        >>> client.root(refresh=True) is root
        False
        """
        if self._pid != os.getpid():  # a lock inherited through fork may be held forever
            self._root_lock, self._pid = threading.Lock(), os.getpid()
        root = self._root
        if root is not None and not refresh:
            return root
        with self._root_lock:
            if self._root is None or refresh:
                self._root = self._send("GET", "/", None)
            return self._root

    def get(self, url: str, **variables: Any) -> Resource:
        """GET ``url`` (absolute, relative to ``base_url``, or an RFC 6570 template).

        >>> client.get("/creditors/{reference}", reference="democreditor")["name"]
        'Demo Creditor SAS'
        """
        return self._send("GET", self._target(url, variables), None)

    def post(self, url: str, body: Any, /, **variables: Any) -> Resource:
        """POST ``body`` as JSON. Never retried (but for the one replay after a 401).

        >>> order = client.post("/orders", {"reference": "o-1", "started": True})
        >>> order.status, order["state"]
        (201, 'open.running')
        """
        return self._send("POST", self._target(url, variables), body)

    def patch(
        self, url: str, body: Any, /, *, if_match: str | None = None, **variables: Any
    ) -> Resource:
        """PATCH with a JSON merge patch (``application/merge-patch+json``).

        ``if_match`` (typically ``res.etag``) sends ``If-Match``: the server applies the patch
        only to that version, else answers 412 (:class:`PreconditionFailedError`).

        >>> order = client.post("/orders", {"reference": "o-1"})
        >>> client.patch(order.url, {"started": True}, if_match=order.etag)["started"]
        True
        """
        return self._send("PATCH", self._target(url, variables), body, if_match)

    def close(self) -> None:
        """Forget the token and the cached entry point; later requests raise RuntimeError.

        >>> client.close()
        >>> client.root()
        Traceback (most recent call last):
        ...
        RuntimeError: this client is closed
        """
        self._close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __getattr__(self, name: str) -> Link:
        # Relations of the entry point; private and dunder names are never relations.
        if name.startswith("_") or name in _PROBES:
            raise AttributeError(name)
        link = getattr(self.root(), name)
        if not isinstance(link, Link):
            raise LinkNotFoundError(f"{name!r} is not a single link of the entry point")
        return link

    def __dir__(self) -> list[str]:
        names = set(super().__dir__())
        try:
            names |= set(self.root()._all_relations().attribute_names())
        except Exception:  # tab completion must never raise
            pass
        return sorted(names)

    def _send(self, method: str, url: str, body: Any, if_match: str | None = None) -> Resource:
        native = self._live()
        status, _final_url, headers, document = native.request(method, url, body, if_match=if_match)
        return Resource(self, document or {}, status=status, headers=Headers(headers))
