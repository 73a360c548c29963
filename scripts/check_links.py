"""Every citation and link names something the repository holds (run by `make lint`).

- No tracked file cites a document outside the repository: the design notes and the protocol
  text the project was first written from are not shipped, so a reader of the sdist or of
  GitHub could not open them. Cite the pages of docs/ instead (docs/design.md#conventions).
- A citation `docs/<page>.md#<anchor>` in any tracked file names a page that exists and a
  heading (or an `id=`) of that page.
- Every relative Markdown link of README.md, CHANGELOG.md, BENCHMARKS.md and docs/ names a file
  that exists, and its `#anchor` a heading of that file. The README links into the repository
  by absolute GitHub URLs (it is also the PyPI page): those are checked as repository paths.

Usage: python scripts/check_links.py [ROOT]; exits 1 and lists each problem.
"""

from __future__ import annotations

import re
import subprocess
import sys
import unicodedata
from functools import cache
from pathlib import Path

REPO_URL = "https://github.com/recurring-payments/recurring-payments/blob/main/"
# Spelled in pieces so that this file does not cite them itself.
OUTSIDE = re.compile(
    "|".join(
        [
            r"\bAPI" + r"\.md\b",
            r"\bARCHITECTURE" + r"\.md\b",
            r"\.\./shared" + r"\b",
            r"\.\./spec" + r"/",
            r"/work/" + r"shared",
        ]
    )
)
# A bare section sign and number cites a section of that outside contract; an RFC's or a
# draft's is "RFC 9110 §8.4.1", "HAL draft §8.3" (dotted, or after the RFC's name).
SECTION = re.compile(r"(?<![\w§])§\s?(\d+)(?![.\d])")
NOT_OURS = re.compile(r"(?:RFC\s?\d+|draft|RFC\s?\d+\s§\S+,)\s*$")
CITATION = re.compile(r"(?<![\w/.(])(docs/[\w./-]+\.md)(?:#([\w-]+))?")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*(?:\{#([\w-]+)\})?\s*#*$")
HTML_ID = re.compile(r"""\bid=["']([\w-]+)["']""")
FENCE = re.compile(r"^\s*(```|~~~)")


def slugify(text: str) -> str:
    """Python-Markdown's toc slug (what mkdocs gives a heading)."""
    text = re.sub(r"<[^>]+>", "", text)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def prose(text: str) -> list[tuple[int, str]]:
    """The lines of a Markdown text outside fenced code blocks, numbered from 1."""
    lines, fenced = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            lines.append((number, line))
    return lines


@cache
def anchors(root: Path, path: Path) -> frozenset[str]:
    text = path.read_text()
    # A page that includes another (pymdownx.snippets, from the root) has its headings too.
    for included in re.findall(r'^--8<--\s+"([^":]+)', text, re.MULTILINE):
        text += "\n" + (root / included).read_text()
    found: set[str] = set()
    for _, line in prose(text):
        if m := HEADING.match(line):
            found.add(m.group(2) or slugify(m.group(1)))
        found.update(HTML_ID.findall(line))
    return frozenset(found)


def check_target(root: Path, page: Path, anchor: str | None, where: str) -> list[str]:
    if not page.is_file():
        return [f"{where}: {page.relative_to(root)} does not exist"]
    if anchor and page.suffix == ".md" and anchor not in anchors(root, page):
        return [f"{where}: {page.relative_to(root)} has no heading or id #{anchor}"]
    return []


def check_links(root: Path, rel: str) -> list[str]:
    path = root / rel
    problems: list[str] = []
    for number, line in prose(path.read_text()):
        for target in LINK.findall(line):
            where = f"{rel}:{number}"
            if target.startswith(REPO_URL):
                target = "/" + target.removeprefix(REPO_URL)
            elif re.match(r"[a-z][a-z0-9+.-]*:", target):
                continue  # another site, mailto:
            file, _, anchor = target.partition("#")
            if not file:
                page = path
            elif file.startswith("/"):
                page = root / file.lstrip("/")
            else:
                page = (path.parent / file).resolve()
            problems += check_target(root, page, anchor or None, where)
    return problems


def main() -> int:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    files = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=root,
        capture_output=True,
        check=True,
        text=True,
    ).stdout.split("\0")
    problems: list[str] = []
    for rel in filter(None, files):
        path = root / rel
        if not path.is_file() or path.is_symlink() or rel.startswith("fuzz/corpus/"):
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if m := OUTSIDE.search(line):
                problems.append(f"{rel}:{number}: cites {m.group(0)}, not in the repository")
            for m in SECTION.finditer(line):
                if int(m.group(1)) <= 12 and not NOT_OURS.search(line[: m.start()][-24:]):
                    problems.append(f"{rel}:{number}: cites {m.group(0)} of no page: cite docs/")
            for page, anchor in CITATION.findall(line):
                problems += check_target(root, root / page, anchor or None, f"{rel}:{number}")
        if rel.endswith(".md") and (rel.startswith("docs/") or "/" not in rel):
            problems += check_links(root, rel)
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
