"""Every ```python block of the site (docs/**/*.md) runs, so the guides never rot: page by
page, the blocks of a page in order in one fresh namespace with nothing in it, as a reader
pastes them into a new interpreter. A page that talks to the API starts its sandbox in its
first block (docs/development.md, "Writing a page"). A block that cannot run carries, on the
line before it, an HTML comment `<!-- not run: REASON -->`; a reason is required, and such a
comment must precede a block. Whatever a page leaves running (a server, a client) is stopped
after it, whether it passed or not."""

from __future__ import annotations

import contextlib
import gc
import io
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import recurring_payments as rp
from recurring_payments.testing import FakeServer

DOCS = Path(__file__).resolve().parents[2] / "docs"
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<ticks>`{3,})(?P<info>[^`\n]*)$")
NOT_RUN = re.compile(r"^\s*<!--\s*not run\b(?P<rest>.*?)-->\s*$")


@dataclass
class Block:
    line: int  # 1-based line of the opening fence
    language: str
    source: str
    skip_reason: str | None  # None: the block runs


def blocks_of(text: str) -> list[Block]:
    """The fenced code blocks of a Markdown page, with the `not run` comment before each."""
    blocks: list[Block] = []
    lines = text.splitlines()
    i = 0
    previous = ""  # the last non-blank line before the current one
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if opening is None:
            if lines[i].strip():
                previous = lines[i]
            i += 1
            continue
        indent, ticks = opening["indent"], opening["ticks"]
        body: list[str] = []
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(ticks):
            line = lines[j]
            body.append(line[len(indent) :] if line.startswith(indent) else line.lstrip())
            j += 1
        note = NOT_RUN.match(previous)
        reason = None if note is None else note["rest"].lstrip(" :").strip()
        language = opening["info"].strip().split(" ")[0].lower()
        blocks.append(Block(i + 1, language, "\n".join(body) + "\n", reason))
        previous = lines[j] if j < len(lines) else ""
        i = j + 1
    return blocks


PAGES = sorted(p for p in DOCS.rglob("*.md"))
PAGE_IDS = [str(p.relative_to(DOCS)) for p in PAGES]


def test_the_pages_are_found() -> None:
    # A guard on the collector: the guides are there and hold Python blocks.
    names = set(PAGE_IDS)
    assert {"quickstart.md", "concepts.md", "guides/errors.md", "guides/testing.md"} <= names
    python = [b for p in PAGES for b in blocks_of(p.read_text("utf-8")) if b.language == "python"]
    assert len(python) >= 30


def test_the_parser_reads_fences_and_reasons() -> None:
    page = "\n".join(
        [
            "text",
            "<!-- not run: needs a Django project -->",
            "```python",
            "import django_project",
            "```",
            "",
            "- a list item:",
            "",
            "    ```python",
            "    x = 1",
            "    ```",
            "<!-- not run -->",
            "```python",
            "y = 2",
            "```",
        ]
    )
    first, second, third = blocks_of(page)
    assert (first.skip_reason, first.source) == (
        "needs a Django project",
        "import django_project\n",
    )
    assert (second.skip_reason, second.source, second.line) == (None, "x = 1\n", 9)
    assert third.skip_reason == ""  # a comment without a reason: test_skipped_... fails it


@pytest.mark.parametrize("page", PAGES, ids=PAGE_IDS)
def test_every_skipped_block_says_why(page: Path) -> None:
    text = page.read_text("utf-8")
    for block in blocks_of(text):
        if block.skip_reason is not None:
            assert block.skip_reason, f"{page.name}:{block.line}: `not run` needs a reason"
    # A `not run` comment must stand right before a block (else it skips nothing).
    comments = sum(1 for line in text.splitlines() if NOT_RUN.match(line))
    skipped = sum(1 for b in blocks_of(text) if b.skip_reason is not None)
    assert comments == skipped, f"{page.name}: a `not run` comment is not before a code block"


def _close_what_the_page_left(namespace: dict[str, Any], servers_before: set[int]) -> None:
    for value in list(namespace.values()):
        if isinstance(value, rp.Client):
            value.close()
        elif isinstance(value, rp.AsyncClient):
            value._close()  # what aclose() does, without an event loop
    for server in running_servers():
        if id(server) not in servers_before:
            server.stop()


def running_servers() -> list[FakeServer]:
    """Every FakeServer of this process that is listening (the ones a page may leave)."""
    return [o for o in gc.get_objects() if isinstance(o, FakeServer) and o.running]


def run_page(page: Path) -> dict[str, Any]:
    """Run the page's Python blocks in order in a fresh namespace; returns the namespace."""
    blocks = [b for b in blocks_of(page.read_text("utf-8")) if b.language == "python"]
    namespace: dict[str, Any] = {"__name__": "__docs__"}
    before = {id(server) for server in running_servers()}
    printed = io.StringIO()
    name = page.relative_to(DOCS) if page.is_relative_to(DOCS) else page.name
    try:
        for block in blocks:
            if block.skip_reason is None:
                code = compile(block.source, f"{name}:{block.line}", "exec")
                with contextlib.redirect_stdout(printed):
                    exec(code, namespace)
    finally:
        _close_what_the_page_left(namespace, before)
    return namespace


@pytest.mark.parametrize("page", PAGES, ids=PAGE_IDS)
def test_the_python_blocks_run(page: Path) -> None:
    run_page(page)  # a page without Python (the reference, the CLI) runs nothing


def test_a_page_gets_nothing_from_outside_and_leaves_nothing_running(tmp_path: Path) -> None:
    # A name no block of the page defines fails as it would for a reader.
    (tmp_path / "uses_client.md").write_text("```python\nclient.get_creditors()\n```\n")
    with pytest.raises(NameError, match="'client'"):
        run_page(tmp_path / "uses_client.md")
    # A page that starts a server and fails before it stops it leaves no server running.
    before = {id(server) for server in running_servers()}
    (tmp_path / "leaves_a_server.md").write_text(
        "```python\nfrom recurring_payments.testing import FakeServer\n"
        "server = FakeServer().start()\nraise RuntimeError\n```\n"
    )
    with pytest.raises(RuntimeError):
        run_page(tmp_path / "leaves_a_server.md")
    assert {id(server) for server in running_servers()} <= before
