"""Fail when a page of the built site shows a Markdown table as text: a row (`| a | b |`) that
the Markdown parser left in a paragraph, as it does after a blank line inside a table.

Usage: python scripts/check_site_tables.py SITE_DIR (tests/docs/test_doc_pages.py runs it on
the site it builds). Prints each page and row found; exit status 1 when there is one.
"""

from __future__ import annotations

import re
import sys
from html.parser import HTMLParser
from pathlib import Path

# A row as text: starts and ends with a pipe, with a cell between (`|---|` rows too).
ROW = re.compile(r"^\s*\|.+\|\s*$")
# Text inside these is not prose: a code block may show pipes on purpose.
HIDDEN = {"pre", "script", "style", "textarea"}
BLOCKS = {"p", "li", "td", "th", "dd", "dt", "blockquote", "h1", "h2", "h3", "h4", "h5", "h6"}


class ProseRows(HTMLParser):
    """Collects the text of block elements outside code blocks, and the lines that are rows."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.hidden = 0
        self.inline_code = 0
        self.text: list[str] = []
        self.rows: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in HIDDEN:
            self.hidden += 1
        elif tag == "code":
            self.inline_code += 1
        elif tag in BLOCKS:
            self._flush()

    def handle_endtag(self, tag: str) -> None:
        if tag in HIDDEN:
            self.hidden = max(0, self.hidden - 1)
        elif tag == "code":
            self.inline_code = max(0, self.inline_code - 1)
        elif tag in BLOCKS:
            self._flush()

    def handle_data(self, data: str) -> None:
        if self.hidden:
            return
        # Inline code is a cell's content: its own pipes (`a | b`) are not the table's.
        self.text.append(data.replace("|", "") if self.inline_code else data)

    def _flush(self) -> None:
        text = "".join(self.text)
        self.text = []
        self.rows += [line.strip() for line in text.splitlines() if ROW.match(line)]


def rows_as_text(html: str) -> list[str]:
    """The Markdown table rows left as text in a page."""
    parser = ProseRows()
    parser.feed(html)
    parser.close()
    parser._flush()
    return parser.rows


def main(site: Path) -> int:
    pages = sorted(site.rglob("*.html"))
    if not pages:
        print(f"{site}: no HTML page (build the site first: make docs)", file=sys.stderr)
        return 1
    found = 0
    for page in pages:
        for row in rows_as_text(page.read_text(encoding="utf-8")):
            found += 1
            print(f"{page.relative_to(site)}: a Markdown table row shown as text: {row[:100]}")
    return 1 if found else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(Path(sys.argv[1])))
