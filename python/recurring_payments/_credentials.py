"""Credentials for the token endpoint (docs/reference/index.md#credentials-and-tokens). Immutable;
secrets are masked in repr/str."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class AppCredentials:
    """App access (scope ``api``): the app name and secret from the merchant dashboard.

    >>> AppCredentials("shop-app", "s3cr3t")
    AppCredentials(app_name='shop-app', app_secret='***')
    """

    app_name: str
    app_secret: str = field(repr=False)

    scope = "api"

    def __repr__(self) -> str:
        return f"AppCredentials(app_name={self.app_name!r}, app_secret='***')"

    __str__ = __repr__


@dataclass(frozen=True, slots=True)
class AdminCredentials:
    """Administrative access (scope ``api_admin``): a dashboard user of a creditor.

    >>> AdminCredentials("democreditor", "admin", "pw")
    AdminCredentials(creditor='democreditor', login='admin', password='***')
    """

    creditor: str
    login: str
    password: str = field(repr=False)

    scope = "api_admin"

    def __repr__(self) -> str:
        return f"AdminCredentials(creditor={self.creditor!r}, login={self.login!r}, password='***')"

    __str__ = __repr__
