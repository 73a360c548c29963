"""The synchronous client (API.md §2-3), and the base it shares with `AsyncClient`."""

from __future__ import annotations

import logging
import os
import platform
import threading
from collections.abc import Mapping
from types import ModuleType
from typing import Any, TypeVar
from urllib.parse import urljoin

from . import _core, _settings
from ._credentials import AdminCredentials, AppCredentials
from ._green import _blocking
from ._resource import Headers, Link, Resource
from .errors import ConfigurationError, Error, LinkNotFoundError

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


def _read_env(prefix: str, settings: dict[str, Any]) -> None:
    """Complete ``settings`` (the overrides of ``from_env``) from the environment."""
    if "credentials" not in settings:
        settings["credentials"] = _env_credentials(prefix)
    for name in ("BASE_URL", "PROFILE"):
        if not settings.get(name.lower()):
            _require(prefix, name)
            settings[name.lower()] = os.environ[prefix + name]
    settings.setdefault("rel_namespace", os.environ.get(prefix + "REL_NAMESPACE") or None)
    if "total_timeout" not in settings and os.environ.get(prefix + "TOTAL_TIMEOUT"):
        variable = prefix + "TOTAL_TIMEOUT"
        settings["total_timeout"] = _settings.parse_env_seconds(variable, os.environ[variable])


def _env_credentials(prefix: str) -> Credentials:
    # os.environ is read inline, never bound to a local: a frame holding the mapping or a
    # value would show the secret to whatever captures locals.
    if os.environ.get(prefix + "APP_NAME") or os.environ.get(prefix + "APP_SECRET"):
        _require(prefix, "APP_NAME", "APP_SECRET")
        return AppCredentials(os.environ[prefix + "APP_NAME"], os.environ[prefix + "APP_SECRET"])
    if os.environ.get(prefix + "CREDITOR") or os.environ.get(prefix + "LOGIN"):
        _require(prefix, "CREDITOR", "LOGIN", "PASSWORD")
        return AdminCredentials(
            os.environ[prefix + "CREDITOR"],
            os.environ[prefix + "LOGIN"],
            os.environ[prefix + "PASSWORD"],
        )
    raise ConfigurationError(
        f"missing credentials: set {prefix}APP_NAME and {prefix}APP_SECRET, "
        f"or {prefix}CREDITOR, {prefix}LOGIN and {prefix}PASSWORD"
    )


def _require(prefix: str, *names: str) -> None:
    missing = [prefix + name for name in names if not os.environ.get(prefix + name)]
    if missing:
        raise ConfigurationError(f"missing environment variable(s): {', '.join(missing)}")


_TELEMETRY: list[ModuleType | None] = []  # [the module or None] once looked for


def _telemetry_module() -> ModuleType | None:
    """``_telemetry`` if ``opentelemetry-api`` can be imported (looked for once), else None."""
    if not _TELEMETRY:
        try:
            from . import _telemetry
        except ImportError:
            _TELEMETRY.append(None)
        else:
            _TELEMETRY.append(_telemetry)
    return _TELEMETRY[0]


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
        telemetry: bool = True,
    ) -> None:
        # Nothing is stored before every check passed: repr() of a client whose constructor
        # raised (or of a subclass asking before calling us) shows no unchecked value.
        self._native: _core.NativeClient | None = None
        settings: _settings.Settings
        try:
            settings = _settings.check(
                base_url=base_url,
                profile=profile,
                rel_namespace=rel_namespace,
                timeout=timeout,
                connect_timeout=connect_timeout,
                total_timeout=total_timeout,
                retries=retries,
                token_leeway=token_leeway,
                max_response_size=max_response_size,
                allow_http=allow_http,
                verify=verify,
                user_agent=user_agent,
                headers=headers,
                telemetry=telemetry,
            )
            if not isinstance(credentials, (AppCredentials, AdminCredentials)):
                raise ConfigurationError(
                    "credentials must be AppCredentials or AdminCredentials, "
                    f"not {type(credentials).__name__}"
                )
            native = _core.NativeClient(
                settings.base_url,
                credentials=credentials,
                profile=settings.profile,
                timeout=settings.timeout,
                connect_timeout=settings.connect_timeout,
                retries=settings.retries,
                token_leeway=settings.token_leeway,
                max_response_size=settings.max_response_size,
                allow_http=settings.allow_http,
                verify=settings.verify,
                user_agent=_user_agent(settings.user_agent),
                logger=logger,
                total_timeout=settings.total_timeout,
                headers=settings.headers,
            )
        except Error as err:
            # Error trackers capture the locals of every frame of a traceback: forget the
            # arguments (base_url may hold a password, headers an API key, credentials a
            # secret) and drop the frames of the checks, which held them too.
            base_url = credentials = headers = None  # type: ignore[assignment]
            settings = None  # type: ignore[assignment]
            raise err.with_traceback(None) from None
        self._base_url = settings.base_url
        self._profile = settings.profile
        self._credentials = credentials
        self._rel_namespace = settings.rel_namespace
        self._total_timeout: float = settings.total_timeout
        self._extra_headers: list[tuple[str, str]] = settings.headers
        # OpenTelemetry (API.md §9): the module when telemetry is on and the API installed.
        self._telemetry: ModuleType | None = _telemetry_module() if settings.telemetry else None
        self._indexes: dict[tuple[tuple[str, ...], tuple[tuple[str, str], ...]], _core.RelIndex]
        self._indexes = {}
        self._init_root_cache()
        self._native = native

    @classmethod
    def from_env(cls: type[_C], prefix: str = "RECURRING_PAYMENTS_", **overrides: Any) -> _C:
        """Build a client from environment variables: ``<prefix>BASE_URL``, ``PROFILE``,
        ``REL_NAMESPACE`` (optional), ``TOTAL_TIMEOUT`` (optional, seconds), and ``APP_NAME`` +
        ``APP_SECRET`` or ``CREDITOR`` + ``LOGIN`` + ``PASSWORD``. Keyword arguments override
        or add constructor arguments.

        ``Client.from_env()`` in a Django settings module or a Flask app factory reads
        ``RECURRING_PAYMENTS_BASE_URL`` and so on; a missing variable is named:

        >>> rp.Client.from_env(prefix="SHOP_API_", timeout=10.0)
        Traceback (most recent call last):
        ...
        recurring_payments.errors.ConfigurationError: missing credentials: set SHOP_API_APP_NAME ...
        """
        # No frame of this call keeps a secret in its locals once it raised (error trackers
        # capture them): secrets go from os.environ into the credentials object, whose repr
        # masks them, within one expression, and `overrides` is emptied on the way out.
        try:
            _read_env(prefix, overrides)
            return cls(**overrides)
        except BaseException:
            overrides.clear()
            raise

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
        # getattr: also for a client whose constructor raised, or has not run yet.
        base_url = getattr(self, "_base_url", None)
        if base_url is None:
            return f"<{type(self).__name__} (not set up)>"
        native = getattr(self, "_native", None)
        state = "closed" if native is None else repr(getattr(self, "_credentials", None))
        return f"<{type(self).__name__} {base_url} {state}>"

    # --- internals shared with resources and links ---------------------------------------------
    def _live(self) -> _core.NativeClient:
        native: _core.NativeClient | None = getattr(self, "_native", None)
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
        self._root_lock_made = (os.getpid(), threading.Lock)

    def authenticate(self) -> _core.Token:
        """Fetch a token now (validates the credentials at start-up).

        >>> token = client.authenticate()
        >>> token.scope, token == client.token
        ('api', True)
        """
        native = self._live()
        call = None if self._telemetry is None else self._telemetry.start()
        if call is None:
            return _blocking(native.authenticate)
        try:
            return _blocking(native.authenticate, headers=call.headers, recorder=call.sink)
        finally:
            call.flush()

    def root(self, refresh: bool = False) -> Resource:
        """The entry point (GET ``/``), cached per client; ``refresh=True`` fetches it again.

        >>> root = client.root()
        >>> root.url == server.base_url + "/", client.root() is root
        (True, True)
        >>> client.root(refresh=True) is root
        False
        """
        root = self._root
        if root is not None and not refresh:
            return root
        with self._root_guard():
            if self._root is None or refresh:
                self._root = self._send("GET", "/", None)
            return self._root

    def get(self, url: str, **variables: Any) -> Resource:
        """GET ``url`` (absolute, relative to ``base_url``, or an RFC 6570 template).

        >>> client.get("/creditors/{reference}", reference="democreditor")["name"]
        'Demo Creditor SAS'
        """
        return self._send("GET", self._target(url, variables), None, template=_template(url))

    def post(self, url: str, body: Any, /, **variables: Any) -> Resource:
        """POST ``body`` as JSON. Never retried (but for the one replay after a 401).

        >>> order = client.post("/orders", {"reference": "o-1", "started": True})
        >>> order.status, order["state"]
        (201, 'open.running')
        """
        return self._send("POST", self._target(url, variables), body, template=_template(url))

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
        target = self._target(url, variables)
        return self._send("PATCH", target, body, if_match, template=_template(url))

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
        if name == "aclose":  # contextlib.aclosing, anyio: this client is not the async one
            raise AttributeError("'Client' has no aclose(): call client.close() (it is sync)")
        link = getattr(self.root(), name)
        if not isinstance(link, Link):
            raise LinkNotFoundError(f"{name!r} is not a single link of the entry point")
        return link

    def __dir__(self) -> list[str]:
        # Tab completion does no I/O: relations only once the entry point is cached. It never
        # fetches it nor waits for a fetch in flight (a hung API would freeze the shell).
        names = set(super().__dir__())
        root = getattr(self, "_root", None)
        if root is not None:
            names |= set(root._all_relations().attribute_names()) - _PROBES - {"aclose"}
        return sorted(names)

    def _root_guard(self) -> threading.Lock:
        # A lock made before fork may be held forever; one made before gevent or eventlet
        # patched threading would block the hub's thread: replace either.
        made = (os.getpid(), threading.Lock)
        if self._root_lock_made != made:
            self._root_lock, self._root_lock_made = threading.Lock(), made
        return self._root_lock

    def _send(
        self,
        method: str,
        url: str,
        body: Any,
        if_match: str | None = None,
        template: str | None = None,
    ) -> Resource:
        native = self._live()
        # Under gevent/eventlet the wait runs on the hub's thread pool (API.md §8).
        # Spans are children of this thread's current context (API.md §9), recorded here
        # (under gevent the wait runs on a native thread, where the SDK's locks must not be).
        call = None if self._telemetry is None else self._telemetry.start(template)
        if call is None:
            reply = _blocking(native.request, method, url, body, if_match=if_match)
        else:
            try:
                reply = _blocking(
                    native.request,
                    method,
                    url,
                    body,
                    if_match=if_match,
                    headers=call.headers,
                    recorder=call.sink,
                )
            finally:
                call.flush()
        status, _final_url, headers, document = reply
        return Resource(self, document or {}, status=status, headers=Headers(headers))


def _template(url: str) -> str | None:
    """``url`` when it is a URI template (a span's ``url.template``), else None."""
    return url if "{" in url else None
