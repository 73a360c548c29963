"""The public surface is a test: __all__ is exactly the documented names
(docs/reference/index.md)."""

from __future__ import annotations

import builtins

import pytest

import recurring_payments as rp

ERRORS = {
    "Error",
    "ConfigurationError",
    "InternalError",
    "TransportError",
    "TimeoutError",
    "HTTPError",
    "ClientError",
    "AuthenticationError",
    "NotFoundError",
    "ConflictError",
    "PreconditionFailedError",
    "RateLimitError",
    "ServerError",
    "ProtocolError",
    "TemplateError",
    "LinkNotFoundError",
}
SYNC = {"Client", "AppCredentials", "AdminCredentials", "Token", "Resource", "Link", "Headers"}
ASYNC = {"AsyncClient", "AsyncResource", "AsyncLink"}
DOCUMENTED = ERRORS | SYNC | ASYNC | {"expand_uri_template", "__version__"}


def test_all_is_the_documented_names() -> None:
    assert set(rp.__all__) == DOCUMENTED
    for name in rp.__all__:
        assert hasattr(rp, name), name


def test_version_matches_the_core() -> None:
    assert rp.__version__ == rp._core.__version__
    assert rp.__version__.count(".") == 2


@pytest.mark.parametrize(
    ("child", "parents"),
    [
        ("ConfigurationError", (rp.Error, ValueError)),
        ("InternalError", (rp.Error, RuntimeError)),
        ("TransportError", (rp.Error,)),
        ("TimeoutError", (rp.TransportError, builtins.TimeoutError)),
        ("HTTPError", (rp.Error,)),
        ("ClientError", (rp.HTTPError,)),
        ("AuthenticationError", (rp.ClientError,)),
        ("NotFoundError", (rp.ClientError,)),
        ("PreconditionFailedError", (rp.ClientError,)),
        ("ServerError", (rp.HTTPError,)),
        ("ProtocolError", (rp.Error,)),
        ("TemplateError", (rp.Error, ValueError)),
        ("LinkNotFoundError", (rp.Error, AttributeError, KeyError)),
    ],
)
def test_error_tree(child: str, parents: tuple[type, ...]) -> None:
    cls = getattr(rp, child)
    for parent in parents:
        assert issubclass(cls, parent), (child, parent)


def test_http_error_reads_the_api_error_body() -> None:
    err = rp.NotFoundError(
        "GET https://h/x: HTTP 404",
        status=404,
        method="GET",
        url="https://h/x",
        headers={"content-type": "application/json"},
        body='{"code": 904, "message": "Access denied"}',
    )
    assert (err.status, err.code, err.message) == (404, 904, "Access denied")
    assert err.json == {"code": 904, "message": "Access denied"}
    assert str(err) == "GET https://h/x: HTTP 404 (904: Access denied)"


def test_http_error_with_a_body_that_is_not_json() -> None:
    err = rp.ServerError(
        "POST https://h/x: HTTP 502", status=502, method="POST", url="u", body="<html>"
    )
    assert err.json is None and err.code is None and err.message is None
    assert err.body == "<html>"


def test_authentication_error_reads_the_oauth_body() -> None:
    err = rp.AuthenticationError(
        "POST https://h/oauth/token: HTTP 401",
        status=401,
        method="POST",
        url="https://h/oauth/token",
        body='{"error": "invalid_client", "error_description": "Bad credentials"}',
    )
    assert err.error == "invalid_client"
    assert err.error_description == "Bad credentials"
    assert "invalid_client: Bad credentials" in str(err)


def test_link_not_found_message_is_not_quoted_like_a_key_error() -> None:
    err = rp.LinkNotFoundError("no relation 'x'")
    assert str(err) == "no relation 'x'"


def test_template_values_of_every_documented_type() -> None:
    expand = rp.expand_uri_template
    assert expand("{?a,b,c,d}", {"a": "x", "b": 3, "c": 1.5, "d": True}) == "?a=x&b=3&c=1.5&d=true"
    assert expand("{/l*}", {"l": ["a", "b"]}) == "/a/b"
    assert expand("{?m*}", {"m": {"k": "v", "n": 1}}) == "?k=v&n=1"
    assert expand("{?a,b}", {"a": None, "b": "y"}) == "?b=y"
    assert expand("{?big}", {"big": 2**70}) == "?big=1180591620717411303424"


def test_template_rejects_values_it_cannot_render() -> None:
    with pytest.raises(TypeError, match="object"):
        rp.expand_uri_template("{x}", {"x": object()})
    with pytest.raises(rp.TemplateError):
        rp.expand_uri_template("{x", {})
