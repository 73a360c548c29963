"""A griffe extension for the API reference: the docstrings are written for `help()` (doctest
examples, reST roles), so this turns them into Markdown without changing what `help()` shows.

- A doctest example (from a `>>>` line to the next blank line) becomes a ```pycon block; left
  alone, Markdown would read `>>>` as nested block quotes.
- reST roles (:class:`Client`, :meth:`FakeServer.fail_next`) and ``literals`` become code spans;
  a reST literal block's `::` becomes `:` (the indented block after it is code in Markdown too).
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:class|meth|func|mod|attr|exc|data|obj):`~?([^`]+)`")
_LITERAL = re.compile(r"``(.+?)``")


def to_markdown(text: str) -> str:
    out: list[str] = []
    in_example = False
    for line in text.splitlines():
        stripped = line.lstrip()
        if not in_example and stripped.startswith(">>>"):
            out += ["", "```pycon"]
            in_example = True
        elif in_example and not stripped:
            out += ["```", ""]
            in_example = False
            continue
        if not in_example:
            line = _LITERAL.sub(r"`\1`", _ROLE.sub(r"`\1`", line))
            if line.endswith("::"):
                line = line[:-1]
        out.append(line)
    if in_example:
        out.append("```")
    return "\n".join(out)


class DoctestFences(griffe.Extension):
    def __init__(self) -> None:
        super().__init__()
        self._done: set[int] = set()  # each docstring once: a second pass would nest fences

    def _convert(self, obj: griffe.Object) -> None:
        docstring = obj.docstring
        if docstring is not None and id(docstring) not in self._done:
            self._done.add(id(docstring))
            docstring.value = to_markdown(docstring.value)

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        self._convert(obj)

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        self._convert(pkg)  # the package itself is not among on_object's objects
