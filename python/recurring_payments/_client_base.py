"""What `Client` and `AsyncClient` share: the constructor's checks, ``from_env`` (reading the
environment without leaving a secret in a frame), the user agent, the `Session` and the
token. The faces (`_client.py`, `_async_client.py`) add the requests and the entry point."""

from __future__ import annotations

import os
import sys
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from . import _core, _settings
from ._credentials import AdminCredentials, AppCredentials
from ._secret_files import CredentialsClass, SecretFileCredentials, credentials_of
from ._session import Session, telemetry_for_clients
from .errors import ConfigurationError, Error

if TYPE_CHECKING:
    import logging

    from typing_extensions import Self

    from ._resource_base import _ResourceBase


Credentials = AppCredentials | AdminCredentials
# What `credentials=` takes: the credentials, or a provider called before each token request
# (docs/guides/configuration.md); an `AsyncClient`'s provider may also be a coroutine function.
CredentialsSource = Credentials | Callable[[], Credentials]
AsyncCredentialsSource = (
    Credentials | Callable[[], Credentials] | Callable[[], Awaitable[Credentials]]
)
_Src = TypeVar("_Src")
_DEFAULT_SIZE = 32 * 2**20
_C = TypeVar("_C", bound="_ClientBase[Any]")
# Distinct credentials whose clients (token, entry point) an original keeps for
# `with_options(credentials=…)`, least recently used dropped first.
_IDENTITIES_KEPT = 1024
_R = TypeVar("_R", bound="_ResourceBase[Any]")
# Names that tools look up on any object, and may call: IPython's help (`client?`) calls
# `obj.getdoc()`, older IPython completers `obj.trait_names()`, pytest's doctest probes for
# mocks. No relation of the API is named like them; answering would fetch the entry point.
_PROBES = frozenset({"getdoc", "trait_names", "pytest_mock_example_attribute_that_shouldnt_exist"})


def _user_agent(extra: str | None) -> str:
    # `platform.python_version()` without `platform` (2 ms of a short script's start): the
    # first word of `sys.version`, which is what it parses.
    ours = f"recurring-payments/{_core.__version__} python/{sys.version.split(maxsplit=1)[0]}"
    return f"{extra} {ours}" if extra else ours


class _Logger:
    """The ``recurring_payments`` logger, as the native client uses it (``isEnabledFor``,
    ``debug``, ``warning``), with `logging` imported only once the application has imported
    it or a warning is due: before that nothing configured logging, so DEBUG is off (the root
    logger's default level, WARNING). Importing it cost a short script 3 to 5 ms. Once bound,
    the logger's own methods are this object's attributes: no frame of ours in between."""

    def isEnabledFor(self, level: int) -> bool:
        if "logging" not in sys.modules:
            return level >= _WARNING
        return self._bind().isEnabledFor(level)

    def debug(self, msg: str, *args: Any) -> None:
        self._bind().debug(msg, *args, stacklevel=2)

    def warning(self, msg: str, *args: Any) -> None:
        self._bind().warning(msg, *args, stacklevel=2)

    def _bind(self) -> logging.Logger:
        import logging

        logger = logging.getLogger("recurring_payments")
        self.isEnabledFor = logger.isEnabledFor  # type: ignore[method-assign]
        self.debug = logger.debug  # type: ignore[method-assign]
        self.warning = logger.warning  # type: ignore[method-assign]
        return logger


_WARNING = 30  # logging.WARNING
# One for every client: bound once, when `logging` is first needed.
_LOGGER = _Logger()


def _merged_headers(
    base: list[tuple[str, str]], given: list[tuple[str, str]]
) -> list[tuple[str, str]]:
    """``base`` with ``given`` added; a name given replaces every value of that name."""
    names = {name.lower() for name, _ in given}
    return [(n, v) for n, v in base if n.lower() not in names] + given


def _read_env(prefix: str, settings: dict[str, Any]) -> None:
    """Complete ``settings`` (the overrides of ``from_env``) from the environment. Every
    variable that is missing is named in one error."""
    missing: list[str] = []
    if "credentials" not in settings:
        credentials = _env_credentials(prefix, missing)
        if credentials is not None:
            settings["credentials"] = credentials
    for name in ("BASE_URL", "PROFILE"):
        if not settings.get(name.lower()):
            if os.environ.get(prefix + name):
                settings[name.lower()] = os.environ[prefix + name]
            else:
                missing.append(prefix + name)
    if missing:
        raise ConfigurationError(_missing_message(prefix, missing))
    settings.setdefault("rel_namespace", os.environ.get(prefix + "REL_NAMESPACE") or None)
    # Read inline like the secrets: the URL may hold the Redis password.
    if "token_store" not in settings and os.environ.get(prefix + "TOKEN_STORE"):
        settings["token_store"] = os.environ[prefix + "TOKEN_STORE"]
    # The proxy URL may hold the proxy's password: read inline too.
    if "proxy" not in settings and os.environ.get(prefix + "PROXY"):
        settings["proxy"] = os.environ[prefix + "PROXY"]
    if "total_timeout" not in settings and os.environ.get(prefix + "TOTAL_TIMEOUT"):
        variable = prefix + "TOTAL_TIMEOUT"
        settings["total_timeout"] = _settings.parse_env_seconds(variable, os.environ[variable])


def _missing_message(prefix: str, missing: list[str]) -> str:
    if missing[0] != _NO_CREDENTIALS:
        return f"missing environment variable(s): {', '.join(missing)}"
    either = (
        f"missing credentials: set {prefix}APP_NAME and {prefix}APP_SECRET "
        f"(or {prefix}APP_SECRET_FILE), or {prefix}CREDITOR, {prefix}LOGIN and "
        f"{prefix}PASSWORD (or {prefix}PASSWORD_FILE)"
    )
    rest = missing[1:]
    return f"{either}; missing environment variable(s): {', '.join(rest)}" if rest else either


# Stands first in the list of what is missing when no credentials are set at all.
_NO_CREDENTIALS = "(credentials)"


def _env_credentials(prefix: str, missing: list[str]) -> Credentials | SecretFileCredentials | None:
    """The credentials the environment names, or None with what is missing added to
    ``missing``. A secret comes from ``APP_SECRET``/``PASSWORD`` or from the file that
    ``APP_SECRET_FILE``/``PASSWORD_FILE`` names (read now, and again at every token request)."""
    # os.environ is read inline, never bound to a local: a frame holding the mapping or a
    # value would show the secret to whatever captures locals.
    names: tuple[str, ...]
    kind: CredentialsClass
    if any(os.environ.get(prefix + n) for n in ("APP_NAME", "APP_SECRET", "APP_SECRET_FILE")):
        names, secret, kind = ("APP_NAME",), "APP_SECRET", AppCredentials
    elif any(os.environ.get(prefix + n) for n in ("CREDITOR", "LOGIN", "PASSWORD_FILE")):
        names, secret, kind = ("CREDITOR", "LOGIN"), "PASSWORD", AdminCredentials
    else:
        missing.append(_NO_CREDENTIALS)
        return None
    before = len(missing)
    missing.extend(prefix + name for name in names if not os.environ.get(prefix + name))
    in_file = bool(os.environ.get(prefix + secret + "_FILE"))
    if in_file and os.environ.get(prefix + secret):
        raise ConfigurationError(
            f"set {prefix}{secret} or {prefix}{secret}_FILE, not both: both are set"
        )
    if not in_file and not os.environ.get(prefix + secret):
        missing.append(f"{prefix}{secret} (or {prefix}{secret}_FILE)")
    if len(missing) > before:
        return None
    fields = tuple(os.environ[prefix + name] for name in names)
    if not in_file:
        return credentials_of(kind, fields, os.environ[prefix + secret])
    provider = SecretFileCredentials(
        kind, fields, prefix + secret + "_FILE", os.environ[prefix + secret + "_FILE"]
    )
    provider()  # read once now: a wrong path fails at start, not at the first request
    return provider


def _provider_name(provider: object) -> str:
    """What messages and ``repr()`` call a credentials provider: its qualified name (a
    function's, a bound method's, or its class's), never its ``repr()`` nor its output."""
    name = getattr(provider, "__qualname__", None)
    return name if isinstance(name, str) else type(provider).__qualname__


def _source(credentials: Any) -> str | None:
    """Check ``credentials=``: the provider's name if it is a provider, else ``None`` once
    the credentials passed the constructor's checks."""
    if isinstance(credentials, (AppCredentials, AdminCredentials)):
        _settings.check_credentials(credentials)
        return None
    if callable(credentials):
        return _provider_name(credentials)
    raise ConfigurationError(
        "credentials must be AppCredentials, AdminCredentials or a provider (a callable "
        f"with no arguments that returns them), not {type(credentials).__name__}"
    )


class _Same:
    """``credentials=`` as a key of the identities a client keeps: equal when of the same
    class and equal (``==``: the same fields; for providers, the same function or bound
    methods of the same object). Unhashable providers still compare, in one bucket."""

    __slots__ = ("_hash", "value")

    def __init__(self, value: object) -> None:
        self.value = value
        try:
            self._hash = hash((type(value), value))
        except Exception:  # unhashable (or a __hash__ that fails): compared in one bucket
            self._hash = hash(type(value))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _Same) or type(other.value) is not type(self.value):
            return False
        try:
            return bool(self.value == other.value)
        except Exception:
            return False


class _Identities:
    """The clients an original made for ``with_options(credentials=…)``, one per distinct
    credentials (each with its own native client: token, token flight, entry point), the last
    1,024 used kept. Derived clients with equal credentials share one."""

    def __init__(self) -> None:
        self._clients: OrderedDict[_Same, Any] = OrderedDict()
        self._lock = threading.Lock()
        self._lock_made = (os.getpid(), threading.Lock)

    def get(self, key: _Same, make: Callable[[], _C]) -> _C:
        with self._guard():
            found: _C | None = self._clients.get(key)
            if found is not None:
                self._clients.move_to_end(key)
                return found
            made = make()
            self._clients[key] = made
            if len(self._clients) > _IDENTITIES_KEPT:
                self._clients.popitem(last=False)
            return made

    def clear(self) -> None:
        with self._guard():
            self._clients.clear()

    def _guard(self) -> threading.Lock:
        # As the entry point's lock: a lock held across fork, or made before gevent patched
        # threading, is replaced.
        made = (os.getpid(), threading.Lock)
        if self._lock_made != made:
            self._lock, self._lock_made = threading.Lock(), made
        return self._lock


class _ClientBase(Generic[_Src]):
    """What :class:`Client` and ``AsyncClient`` share: configuration, the :class:`Session`
    (native client, relation indexes) and the token. Subclasses send the requests (blocking,
    or as coroutines) and cache the entry point. ``_Src`` is what ``credentials=`` takes."""

    _session: Session  # set last, once every check passed
    # A derived client's view of the original's entry point: (the original's, its own).
    _root_pair: tuple[Any, Any] | None

    def __init__(
        self,
        base_url: str,
        *,
        credentials: _Src,
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
        token_store: str | None = None,
        request_id_headers: Sequence[str] = _settings.DEFAULT_REQUEST_ID_HEADERS,
        proxy: str | None = None,
        trust_env: bool = True,
    ) -> None:
        # Nothing is stored before every check passed: repr() of a client whose constructor
        # raised (or of a subclass asking before calling us) shows no unchecked value.
        settings: _settings.Settings
        failed: Error | None = None
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
                token_store=token_store,
                request_id_headers=request_id_headers,
                proxy=proxy,
                trust_env=trust_env,
            )
            provider_name = _source(credentials)
            native = _core.NativeClient(
                settings,
                credentials=credentials,
                user_agent=_user_agent(settings.user_agent),
                logger=_LOGGER,
                provider_name=provider_name,
            )
        except Error as err:
            failed = err.with_traceback(None)
        except (TypeError, ValueError, OverflowError) as err:
            # A value the checks let through and the native layer refused: its error may quote
            # the value (a UnicodeEncodeError holds the whole string), so only its kind is kept,
            # and it is raised below, outside this block, so as not to chain to it.
            failed = ConfigurationError(
                f"a setting the native client cannot take ({type(err).__name__}); "
                "the value is not shown"
            )
        if failed is not None:
            # Error trackers capture the locals of every frame of a traceback: forget the
            # arguments (base_url may hold a password, headers an API key, credentials a
            # secret) and drop the frames of the checks, which held them too.
            base_url = credentials = headers = token_store = proxy = None  # type: ignore[assignment]
            settings = None  # type: ignore[assignment]
            raise failed from None
        self._base_url = settings.base_url
        self._profile = settings.profile
        self._credentials = credentials
        self._total_timeout: float = settings.total_timeout
        self._extra_headers: list[tuple[str, str]] = settings.headers
        self._config = settings  # the checked settings (notifications read their size limit)
        # What `with_options` starts from: timeout, connect_timeout, total_timeout, retries.
        self._call_settings = (
            settings.timeout,
            settings.connect_timeout,
            settings.total_timeout,
            settings.retries,
        )
        # The client a derived one comes from (`with_options`), whose entry point it shares.
        self._origin: _ClientBase[_Src] | None = None
        # The original every client derived from it shares, and the identities it keeps for
        # `with_options(credentials=…)`.
        self._first: _ClientBase[_Src] = self
        self._identities = _Identities()
        self._init_root_cache()
        telemetry_module = telemetry_for_clients() if settings.telemetry else None
        self._session = Session(native, settings.base_url, settings.rel_namespace, telemetry_module)

    @classmethod
    def from_env(cls: type[_C], prefix: str = "RECURRING_PAYMENTS_", **overrides: Any) -> _C:
        """Build a client from environment variables: ``<prefix>BASE_URL``, ``PROFILE``,
        ``REL_NAMESPACE`` (optional), ``TOTAL_TIMEOUT`` (optional, seconds), ``TOKEN_STORE``
        (optional, a Redis URL: fleet mode), ``PROXY`` (optional, a proxy URL), and ``APP_NAME`` +
        ``APP_SECRET`` or ``CREDITOR`` + ``LOGIN`` + ``PASSWORD``. Keyword arguments override
        or add constructor arguments.

        ``APP_SECRET_FILE`` (in place of ``APP_SECRET``) and ``PASSWORD_FILE`` (in place of
        ``PASSWORD``) name a file whose content, less one trailing newline, is the secret. It is
        read now (a wrong path fails here) and again at every token request, so a secret
        rotated by rewriting the file (a Kubernetes or Docker secret) is used without a restart.

        ``Client.from_env()`` in a Django settings module or a Flask app factory reads
        ``RECURRING_PAYMENTS_BASE_URL`` and so on; every missing variable is named, in one error:

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
    def credentials(self) -> _Src:
        """The credentials given (their secret masked in ``repr()``), or the provider.

        >>> client.credentials
        AppCredentials(app_name='sandbox-app', app_secret='***')

        A provider (a callable with no arguments returning the credentials; on
        ``AsyncClient`` an ``async def`` too) is called before each token request, once per
        token flight, on the caller's thread or event loop: a secret that changes, read from
        a file or a secret manager, is picked up without a restart.

        >>> def read_secret():
        ...     return server.credentials  # e.g. read a mounted secret file
        >>> with rp.Client(server.base_url, credentials=read_secret,
        ...                profile=server.profile) as rotating:
        ...     rotating.root().status, rotating
        (200, <Client http://127.0.0.1:... credentials provider read_secret>)
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
        session = getattr(self, "_session", None)
        closed = session is None or session.native is None
        credentials = getattr(self, "_credentials", None)
        if closed:
            state = "closed"
        elif isinstance(credentials, (AppCredentials, AdminCredentials)):
            state = repr(credentials)
        else:  # a provider: named, never called nor shown (its repr could hold anything)
            state = f"credentials provider {_provider_name(credentials)}"
        return f"<{type(self).__name__} {base_url} {state}>"

    def __reduce_ex__(self, protocol: object) -> Any:
        # A client holds credentials and connections: it never travels. Its resources do
        # (pickled without the client) and `client.attach(res)` binds them on the other side.
        raise TypeError(
            f"a {type(self).__name__} cannot be pickled or deep-copied: pickle its resources "
            "instead, and bind them to a client there with client.attach(res)"
        )

    def __copy__(self: _C) -> _C:
        # A shallow copy shares everything, the session included (as before `__reduce_ex__`).
        twin = object.__new__(type(self))
        twin.__dict__.update(self.__dict__)
        return twin

    def with_options(
        self,
        *,
        credentials: _Src | None = None,
        timeout: float | None = None,
        connect_timeout: float | None = None,
        total_timeout: float | None = None,
        retries: int | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Self:
        """A client for calls with other settings, e.g. a view that must answer fast:
        ``client.with_options(total_timeout=5, retries=0).get_creditors(reference=ref)``.

        It shares this client's connections, token, token store and cached entry point (a
        token or entry point fetched through either serves both), and applies the settings
        given to every call made through it and through the resources and links it returns.
        An option not given stays as it is; ``headers`` adds to (and overrides by name) the
        client's ``headers``. No I/O: nothing is sent, no pool or token is made. This client
        is unchanged; closing the derived one closes nothing this one uses.

        >>> quick = client.with_options(total_timeout=5, retries=0)
        >>> quick.get_creditors(reference="democreditor")["name"]
        'Demo Creditor SAS'

        ``credentials`` (credentials, or a provider) makes a client acting as that app or
        dashboard user: the same connections and settings, with its own token, token flight
        and entry point. Clients derived from one original with equal credentials share them
        (the original keeps those of the last 1,024 distinct credentials), so a view that
        derives a client per request asks for one token per tenant, not one per request.

        >>> server.add_admin("democreditor", "admin", "pw")
        >>> dashboard_user = rp.AdminCredentials("democreditor", "admin", "pw")
        >>> admin = client.with_options(credentials=dashboard_user)
        >>> admin.authenticate().scope, client.authenticate().scope
        ('api_admin', 'api')
        >>> client.with_options(credentials=dashboard_user).token == admin.token
        True
        """
        self._live()  # a closed client derives nothing
        failed: Error | None = None
        base: _ClientBase[_Src] = self
        try:
            if credentials is not None:
                base = self._first._identity(credentials)
            settings = self._derived_settings(timeout, connect_timeout, total_timeout, retries)
            extra = self._extra_headers
            if headers is not None:
                extra = _merged_headers(extra, _settings.check_headers(headers))
            timeout, connect_timeout, total_timeout, retries = settings
            options = _core.CallOptions(
                timeout=timeout,
                connect_timeout=connect_timeout,
                total_timeout=total_timeout,
                retries=retries,
                headers=extra,
            )
        except Error as err:
            failed = err.with_traceback(None)
        if failed is not None:
            # A header value may be an API key, credentials hold a secret: not in a frame's
            # locals.
            headers, extra, credentials = None, [], None
            raise failed from None
        derived = object.__new__(type(self))
        derived.__dict__.update(self.__dict__)
        if base is self:
            derived._origin = self._origin or self
            session = self._session
        else:  # another identity: its entry point, native client and token
            derived._origin = base
            derived._credentials = base._credentials
            session = base._session
        derived._init_root_cache()
        derived._call_settings = settings
        derived._total_timeout = settings[2]
        derived._extra_headers = extra
        derived._session = session.derived(options)
        return derived

    def _identity(self, credentials: object) -> Self:
        """The original's client acting with ``credentials`` (itself for credentials equal to
        its own), made on first use and kept as `_Identities` says. Checked first."""
        key = _Same(credentials)
        if key == _Same(self._credentials):
            return self
        provider_name = _source(credentials)
        return self._identities.get(key, lambda: self._made_identity(credentials, provider_name))

    def _made_identity(self, credentials: Any, provider_name: str | None) -> Self:
        native = self._live().with_credentials(credentials, provider_name=provider_name)
        made = object.__new__(type(self))
        made.__dict__.update(self.__dict__)
        made._credentials = credentials
        made._origin = None
        made._init_root_cache()
        # Not the owner: the original's close closes it (with every identity of its family).
        session = self._session.derived(None)
        session.native = native
        made._session = session
        return made

    def _derived_settings(
        self, timeout: object, connect_timeout: object, total_timeout: object, retries: object
    ) -> tuple[float, float, float, int]:
        """This client's call settings with those given (checked as the constructor does)."""
        old = self._call_settings
        return (
            old[0] if timeout is None else _settings.check_seconds("timeout", timeout),
            old[1]
            if connect_timeout is None
            else _settings.check_seconds("connect_timeout", connect_timeout),
            old[2]
            if total_timeout is None
            else _settings.check_seconds("total_timeout", total_timeout),
            old[3] if retries is None else _settings.check_retries(retries),
        )

    # --- internals shared with resources and links ---------------------------------------------
    def _live(self) -> _core.NativeClient:
        session: Session | None = getattr(self, "_session", None)
        if session is None:
            raise RuntimeError("this client is closed")
        return session.live()

    def _init_root_cache(self) -> None:
        raise NotImplementedError  # the entry point cache is sync or async

    def _own_root(self, root: _R) -> _R:
        """The entry point ``root`` (cached by the original client) as this derived client's:
        its links are followed with this client's options. Made once per entry point."""
        pair = self._root_pair
        if pair is None or pair[0] is not root:
            pair = self._root_pair = (root, root._bound(self._session))
        return pair[1]

    def _close(self) -> None:
        # Resources keep the session (to resolve their URLs); only the native client goes.
        self._session.close()
        self._init_root_cache()
        if self._first is self:
            self._identities.clear()


def named_publicly(cls: type[_C]) -> type[_C]:
    """``cls`` (``Client`` or ``AsyncClient``) with its own copies of the shared constructor,
    ``from_env`` and ``with_options``, named ``Client.__init__`` and so on: Python names a
    function by its qualified name in the ``TypeError`` of a bad call (a missing or unknown
    argument), and users never see ``_ClientBase``. Same code, defaults and annotations."""
    for name in ("__init__", "from_env", "with_options"):
        member = _ClientBase.__dict__[name]
        if isinstance(member, classmethod):
            setattr(cls, name, classmethod(_renamed(member.__func__, cls)))
        else:
            setattr(cls, name, _renamed(member, cls))
    return cls


def _renamed(function: Any, owner: type) -> Any:
    qualname = f"{owner.__name__}.{function.__name__}"
    code = function.__code__
    if sys.version_info >= (3, 11):  # the name of a call's TypeError: the code's, since 3.11
        code = code.replace(co_qualname=qualname)
    twin = type(function)(
        code, function.__globals__, function.__name__, function.__defaults__, function.__closure__
    )
    twin.__kwdefaults__ = function.__kwdefaults__
    twin.__annotations__ = function.__annotations__
    twin.__doc__ = function.__doc__
    twin.__module__ = owner.__module__
    twin.__qualname__ = qualname  # the name of a call's TypeError on 3.10
    twin.__dict__.update(function.__dict__)
    return twin
