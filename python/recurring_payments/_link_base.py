"""What `Link` and `AsyncLink` share: a link's fields, its variables, its expansion and its
display. The faces (`_resource.py`, `_async_resource.py`) add the requests."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

from . import _core
from ._session import Session

_LINK_FIELDS = ("title", "name", "type", "profile", "deprecation", "hreflang")


class _LinkBase(_core._LinkCore):
    """What :class:`Link` and ``AsyncLink`` share: the link's fields and its expansion. The
    fields live in the native base (``_core._LinkCore``), whose call is the sync face's GET."""

    __slots__ = ()

    # The native base holds the fields (the Rust `///` comments are what `help()` shows);
    # declared here for the reference pages and the type checkers, which read this module.
    _session: Session
    _resource_type: type[Any]  # what the native call makes (the sync face's `Resource`)

    rel: str
    """The full relation.

    >>> client.get_creditors.rel
    '...#get-creditors'
    """
    href: str
    """The href as sent: a template when ``templated``.

    >>> client.get_creditors.href
    'http://127.0.0.1:.../creditors{?reference}'
    """
    templated: bool
    """Whether ``href`` is an RFC 6570 template.

    >>> client.get_creditors.templated, client.create_orders.templated
    (True, False)
    """
    title: str | None
    """The link's ``title``, or ``None``.

    >>> print(client.get_creditors.title)
    None
    """
    name: str | None
    """The link's ``name`` (among links of one relation), or ``None``.

    >>> print(client.get_creditors.name)
    None
    """
    type: str | None
    """The media type the link's target is expected to have, or ``None``.

    >>> print(client.get_creditors.type)
    None
    """
    profile: str | None
    """The link's ``profile`` URI, or ``None``.

    >>> print(client.get_creditors.profile)
    None
    """
    deprecation: str | None
    """A URL saying why the link is deprecated, or ``None``; calling a deprecated link
    warns (``DeprecationWarning``).

    >>> print(client.get_creditors.deprecation)
    None
    """
    hreflang: str | None
    """The language of the link's target, or ``None``.

    >>> print(client.get_creditors.hreflang)
    None
    """

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

    @property
    def variables(self) -> list[str]:
        """The names of the template's variables (empty for a plain link).

        >>> client.get_creditors.variables, client.create_orders.variables
        (['reference'], [])
        """
        return self._declared()

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

    def __reduce__(self) -> tuple[Any, ...]:
        # Its fields and its session (which pickles as a detached one), as a slotted object's.
        fields = {f: getattr(self, f) for f in _LINK_FIELDS if getattr(self, f) is not None}
        args = (type(self), self._session, self.rel, self.href, self.templated, fields)
        return (_rebuild, args)

    def __repr__(self) -> str:
        short = self._session.short_name(self.rel)
        templated = " (templated)" if self.templated else ""
        return f"<{type(self).__name__} {short} {self.href}{templated}>"


def _rebuild(
    cls: type[_LinkBase],
    session: Session,
    rel: str,
    href: str,
    templated: bool,
    fields: dict[str, str],
) -> _LinkBase:
    """A link from its pickle or copy (``__reduce__``)."""
    link = cls._plain(session, rel, href, templated)
    for field, value in fields.items():
        setattr(link, field, value)
    return link
