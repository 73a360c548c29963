"""The native docs have one text: what `help()` shows of a `_core` object (its Rust `///`
comment, the runtime `__doc__`) is what `_core.pyi` says of it, which the reference renders.

A stub docstring that differs from the runtime one fails here; change both, or write it in
the Rust comment and copy it. `__new__` is exempt: PyO3 gives a constructor no `__doc__` of
its own, so the stub is the only place its arguments are described for Python readers.
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Iterator
from pathlib import Path

import pytest

from recurring_payments import _core

STUB = Path(_core.__file__).with_name("_core.pyi")


def _documented(
    body: list[ast.stmt], owner: object, prefix: str
) -> Iterator[tuple[str, str, object]]:
    for node in body:
        if not isinstance(node, (ast.ClassDef, ast.FunctionDef)) or node.name == "__new__":
            continue
        runtime = (
            vars(owner).get(node.name)
            if isinstance(owner, type)
            else getattr(owner, node.name, None)
        )
        if runtime is None:
            continue
        doc = ast.get_docstring(node, clean=False)
        if doc is not None:
            yield prefix + node.name, doc, runtime
        if isinstance(node, ast.ClassDef):
            yield from _documented(node.body, runtime, f"{prefix}{node.name}.")


DOCUMENTED = list(_documented(ast.parse(STUB.read_text()).body, _core, ""))


def test_the_stub_documents_native_objects() -> None:
    assert len(DOCUMENTED) >= 40, [name for name, _, _ in DOCUMENTED]


@pytest.mark.parametrize(("name", "doc", "runtime"), DOCUMENTED, ids=[n for n, _, _ in DOCUMENTED])
def test_the_stub_docstring_is_the_runtime_one(name: str, doc: str, runtime: object) -> None:
    assert inspect.cleandoc(runtime.__doc__ or "") == inspect.cleandoc(doc), name
