"""The sandbox's one HTTP client: `FakeServer.notify` POSTs a notification body to an app's
notification URL, as the API would."""

from __future__ import annotations

from urllib.parse import SplitResult, urlsplit

from ._sandbox_args import check_str


def _notification_url(value: object) -> SplitResult:
    """``notify``'s ``url``: absolute ``http(s)://host[:port]/...``, without userinfo."""
    url = check_str("url", value)
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"url must be an absolute http:// or https:// URL, not {url!r}")
    if "@" in parts.netloc:
        raise ValueError("url must not carry userinfo (user:password@)")
    parts.port  # noqa: B018  (raises ValueError for a port that is not a number in range)
    return parts


def post_notification(url: str, body: bytes, profile: str) -> int:
    """POST ``body`` to ``url`` as a HAL document of ``profile``; the status the app answered."""
    parts = _notification_url(url)
    import http.client  # only here: notify is the one sandbox method that is an HTTP client

    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    connection = kind(parts.netloc, timeout=30.0)
    headers = {
        "Content-Type": f'application/hal+json; profile="{profile}"',
        "User-Agent": "recurring-payments-sandbox",
    }
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        connection.request("POST", target, body=body, headers=headers)
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()
