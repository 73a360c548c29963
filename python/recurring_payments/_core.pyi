from collections.abc import Sequence
from typing import final

@final
class RelIndex:
    """The names of a resource's relations (rels), built once and looked up many times.

    A rel such as ``https://api.example.com/alps#get-creditors`` is reachable by the full rel,
    by its short name ``get-creditors`` (the rest after ``namespace``; with ``namespace=None``,
    the part after ``#`` of any ``<uri>#<name>`` rel), and by the attribute form
    ``get_creditors`` (hyphens become underscores). IANA rels (``self``, ``next``,
    ``edit-form``, ...) are used as they are. A CURIE ``(name, href)`` such as
    ``("ex", "https://x/rels/{rel}")`` makes ``ex:thing`` and ``https://x/rels/thing`` name the
    same rel, and ``thing`` too.

    Full rels and CURIE forms win over short names, which win over attribute forms. Two rels
    with one short name make that name ambiguous; each stays reachable by its full rel.
    """

    def __new__(
        cls,
        rels: Sequence[str],
        curies: Sequence[tuple[str, str]] = ...,
        namespace: str | None = None,
    ) -> RelIndex:
        """Index ``rels`` (duplicates are ignored).

        ``curies`` are ``(name, href)`` pairs whose ``href`` contains ``{rel}``; ``namespace``
        is the rel namespace, e.g. ``"https://api.example.com/alps#"`` (``None`` or ``""``
        infers it per rel).
        """

    def find(self, name: str) -> str | None:
        """The full rel ``name`` designates, or ``None`` if none.

        Raises ``LinkNotFoundError`` if ``name`` is ambiguous, naming the candidate rels.
        """

    def resolve(self, name: str) -> str:
        """The full rel ``name`` designates.

        Raises ``LinkNotFoundError`` (also an ``AttributeError`` and a ``KeyError``) if there is
        none, with a did-you-mean and the available names, or if ``name`` is ambiguous.
        """

    def attribute_names(self) -> list[str]:
        """Names usable as attributes (for ``dir()`` and tab completion), sorted: the attribute
        form of every name that designates exactly one rel."""

    def short_name(self, rel: str) -> str | None:
        """The shortest unambiguous name of the full rel ``rel``, for display: its short name,
        else its CURIE form, else ``rel`` itself. ``None`` if ``rel`` is not in the index."""
