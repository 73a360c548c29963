"""What `Link` and `AsyncLink` share: a link's fields, its variables, its expansion and its
display. The faces (`_resource.py`, `_async_resource.py`) add the requests."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from . import _core
from ._session import Session

if TYPE_CHECKING:
    from typing_extensions import Self

_new = object.__new__
_LINK_FIELDS = ("title", "name", "type", "profile", "deprecation", "hreflang")


class _LinkBase:
    """What :class:`Link` and ``AsyncLink`` share: the link's fields and its expansion."""

    __slots__ = (
        "_session",
        "_variables",
        "deprecation",
        "href",
        "hreflang",
        "name",
        "profile",
        "rel",
        "templated",
        "title",
        "type",
    )

    rel: str
    href: str
    templated: bool
    title: str | None
    name: str | None
    type: str | None
    profile: str | None
    deprecation: str | None
    hreflang: str | None

    def __init__(self, session: Session, rel: str, data: Mapping[str, Any]) -> None:
        self._session = session
        self.rel = rel
        self.href = data["href"]
        templated = self.templated = data.get("templated") is True
        self.title = self.name = self.type = self.profile = None
        self.deprecation = self.hreflang = None
        if len(data) > 1 + templated:  # most links are {"href"} or {"href", "templated"}
            for field in _LINK_FIELDS:
                value = data.get(field)
                if isinstance(value, str):
                    setattr(self, field, value)
        self._variables: list[str] | None = None

    @classmethod
    def _plain(cls, session: Session, rel: str, href: str, templated: bool) -> Self:
        """What ``cls(session, rel, {"href": href, "templated": templated})`` makes, without
        the dict: a resource's attribute (``mandate.creditor``) whose link object holds those
        two members alone, read by the core (``RelCache.attribute``)."""
        self = _new(cls)
        self._session = session
        self.rel = rel
        self.href = href
        self.templated = templated
        self.title = self.name = self.type = self.profile = None
        self.deprecation = self.hreflang = None
        self._variables = None
        return self

    @property
    def variables(self) -> list[str]:
        """The names of the template's variables (empty for a plain link).

        >>> client.get_creditors.variables, client.create_orders.variables
        (['reference'], [])
        """
        return list(self._declared())

    def _declared(self) -> list[str]:
        # Parsed once per link (the core checks each call's variables when it expands them).
        if self._variables is None:
            self._variables = _core.template_variables(self.href) if self.templated else []
        return self._variables

    def expand(self, **variables: Any) -> str:
        """The absolute URL of this link with ``variables`` filled in (RFC 6570).

        A variable the template does not declare raises ``TypeError``.

        >>> client.get_creditors.expand(reference="demo creditor")
        'http://127.0.0.1:.../creditors?reference=demo%20creditor'
        >>> client.get_creditors.expand(ref="x")
        Traceback (most recent call last):
        ...
        TypeError: '...#get-creditors' got unexpected variable(s) 'ref'; it declares reference
        """
        return self._session.expand(self.href, variables, self.templated, self.rel or None)

    def _call_name(self) -> str:
        """How a call of this link reads: its attribute (``get_creditors``), else ``link``."""
        attribute = self._session.short_name(self.rel).replace("-", "_")
        return attribute if attribute.isidentifier() else "link"

    def _positional_error(self, call: str | None = None, first: str = "") -> TypeError:
        """The ``TypeError`` of a positional argument to ``call`` (by default this link's
        attribute name, as in ``client.get_creditors("x")``): a template's variables are
        keyword arguments, named here as the call would take them. ``first``: the positional
        arguments the call does take (``follow``'s relation)."""
        if call is None:
            call = self._call_name()
        declared = self._declared()
        if not declared:
            short = self._session.short_name(self.rel)
            return TypeError(f"{call} takes no template variables: link {short!r} is not templated")
        keywords = ", ".join(f"{name}=..." for name in declared)
        return TypeError(
            f"{call} takes template variables as keyword arguments: {call}({first}{keywords})"
        )

    def _warn_if_deprecated(self) -> None:
        if self.deprecation is not None:
            warnings.warn(
                f"link {self.rel!r} is deprecated (see {self.deprecation})",
                DeprecationWarning,
                stacklevel=3,
            )

    def __repr__(self) -> str:
        short = self._session.short_name(self.rel)
        templated = " (templated)" if self.templated else ""
        return f"<{type(self).__name__} {short} {self.href}{templated}>"
