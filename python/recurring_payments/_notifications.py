"""Notifications (docs/guides/notifications.md): the HAL document the API POSTs to an app's
notification URL.

Nothing in a posted body is trusted. It is read as a response would be (a HAL JSON object,
within ``max_response_size``, not nested too deep), and its ``self`` link must be one usable
URL on the API's origin: ``verify_notification`` then GETs it with the client's token, so a
forged body can never send the token elsewhere. Shared by both faces of the client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import _core
from .errors import Error, ProtocolError

if TYPE_CHECKING:
    from urllib.parse import SplitResult

_DEFAULT_PORTS = {"http": 80, "https": 443}


def read_notification(base_url: str, body: object, max_size: int) -> tuple[_core.Document, str]:
    """The document of a notification ``body`` and the absolute URL of its ``self`` link
    (resolved against ``base_url``); ``ProtocolError`` for anything unusable, before anything
    is sent; ``TypeError`` for a body that is neither bytes nor str."""
    data = _bytes_of(body, max_size)
    try:
        document = _core.Document(data)
    except ProtocolError as err:  # the core names a response's body; this one was posted
        raise _refused(str(err).replace("response body", "the body", 1)) from None
    return document, _self_url(document, base_url)


def _bytes_of(body: object, max_size: int) -> bytes:
    """The body's bytes (a ``str`` as UTF-8), refused above ``max_size`` bytes."""
    if isinstance(body, str):
        if len(body) > max_size:  # at least one byte per character: no need to encode it
            raise _too_large(max_size)
        try:
            data = body.encode("utf-8")
        except UnicodeEncodeError:
            raise _refused("the body is not valid UTF-8 (it holds a lone surrogate)") from None
    elif isinstance(body, (bytes, bytearray, memoryview)):
        size = body.nbytes if isinstance(body, memoryview) else len(body)
        if size > max_size:
            raise _too_large(max_size)
        data = body if isinstance(body, bytes) else bytes(body)
    else:
        raise TypeError(
            "a notification body is the request's raw body, bytes or str (request.body in "
            f"Django, request.get_data() in Flask), not {type(body).__name__}"
        )
    if len(data) > max_size:
        raise _too_large(max_size)
    return data


def _self_url(document: _core.Document, base_url: str) -> str:
    """The absolute URL of the document's one ``self`` link, on the API's origin."""
    links: Any = document.get("_links") or {}
    link = links.get("self")
    if isinstance(link, list):
        if len(link) != 1:
            raise _refused(f"its self link is an array of {len(link)} links, not one")
        link = link[0]
    if link is None:
        raise _refused("it has no self link")
    href = link.get("href") if isinstance(link, dict) else None
    if not isinstance(href, str) or not href:
        raise _refused("its self link has an empty href")
    templated = link.get("templated") is True
    try:
        if templated and _core.template_variables(href):
            raise _refused("its self link is a template that needs variables")
        url = _core.expand_target(base_url, href, None, templated, None)
    except ProtocolError:
        raise
    except Error as err:  # a malformed template or an href that cannot be resolved
        raise _refused(f"its self link is not a usable URL ({type(err).__name__})") from None
    from urllib.parse import urlsplit  # here: 4 ms of the package's import otherwise

    parts = urlsplit(url)  # the core's canonical form: what a request to it would address
    if "@" in parts.netloc:
        # Not quoted: the userinfo may hold a password.
        raise _refused("its self link carries userinfo (user@ or user:password@)")
    api = urlsplit(_core.expand_target(base_url, "", None, False, None))
    if _origin(parts) != _origin(api):
        raise _refused(
            f"its self link {url} is not on the API's origin "
            f"{api.scheme}://{api.netloc.rpartition('@')[2]}",
            url=url,
        )
    return url


def _origin(parts: SplitResult) -> tuple[str, str | None, int | None]:
    """Scheme, host and port (the default one when none is written) of a canonical URL."""
    return parts.scheme, parts.hostname, parts.port or _DEFAULT_PORTS.get(parts.scheme)


def _refused(why: str, url: str | None = None) -> ProtocolError:
    return ProtocolError(f"notification refused: {why}", url=url)


def _too_large(max_size: int) -> ProtocolError:
    return _refused(f"the body is larger than max_response_size ({max_size} bytes)")
