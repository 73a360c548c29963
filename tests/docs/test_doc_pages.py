"""What the pages must hold: the reference names every public name, each guarantee names test
files that exist, the README keeps the two quick-start commands and links into docs/ that
resolve (so they work on GitHub too), and no page of the built site shows a table as text."""

from __future__ import annotations

import ast
import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest
from docs_site import DOCS, ROOT, built_site

import recurring_payments as rp
from recurring_payments import errors, testing

REFERENCE = DOCS / "reference"


@pytest.fixture(scope="module")
def site() -> Path:
    return built_site()


DIRECTIVE = re.compile(r"^::: (\S+)\s*$", re.MULTILINE)


def documented() -> set[str]:
    """Every object a `::: name` directive of the reference pages renders."""
    return {m[1] for page in REFERENCE.glob("*.md") for m in DIRECTIVE.finditer(page.read_text())}


@pytest.mark.parametrize(
    "module, prefix",
    [
        (rp, "recurring_payments"),
        (errors, "recurring_payments.errors"),
        (testing, "recurring_payments.testing"),
    ],
)
def test_the_reference_renders_every_public_name(module: object, prefix: str) -> None:
    names = set(module.__all__) - {"__version__"}
    shown = documented()
    # The exceptions, exported by the package too, are rendered once, under errors.
    missing = {
        name
        for name in names
        if f"{prefix}.{name}" not in shown and f"recurring_payments.errors.{name}" not in shown
    }
    assert not missing, f"not in docs/reference/: {sorted(missing)}"
    assert "recurring_payments.__version__" in (REFERENCE / "index.md").read_text()


def test_every_guarantee_names_test_files_that_exist() -> None:
    text = (DOCS / "guarantees.md").read_text()
    listed = text.split("\n## ")[0]  # the guarantees, before the measurements
    bullets = re.findall(r"^- \*\*.*?(?=^- |\Z)", listed, re.MULTILINE | re.DOTALL)
    assert len(bullets) >= 10
    test_files = {p.name for p in (ROOT / "tests").rglob("test_*.py")}
    for bullet in bullets:
        named = re.findall(r"Tests: (.*)", bullet)
        assert named, f"a guarantee without its tests: {bullet[:60]!r}"
        for name in re.findall(r"`(test_\w+\.py)`", named[0]):
            assert name in test_files, f"{name} (named in guarantees.md) is not under tests/"


REPO_FILES = "https://github.com/recurring-payments/recurring-payments/blob/main/"


def test_the_readme_keeps_the_quick_start_and_links_into_the_site() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "make demo      # builds the package into .venv, walks the onboarding flow" in readme
    assert "make test      # cargo test, then pytest against the sandbox" in readme
    # The README is the PyPI project page, where a relative link leads nowhere: every link is
    # absolute, and one into this repository names a file that exists.
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme)
    assert all(link.startswith("https://") for link in links), links
    files = [link.removeprefix(REPO_FILES) for link in links if link.startswith(REPO_FILES)]
    assert len([file for file in files if file.startswith("docs/")]) >= 10
    for file in files:
        assert (ROOT / file).exists(), f"README links to {file}, which does not exist"
    # Its documentation list names every guide.
    guides = {f"docs/guides/{page.name}" for page in (DOCS / "guides").glob("*.md")}
    assert guides - set(files) == set(), "guides the README does not list"
    # The taste talks to the real API (not run), but it must at least be Python.
    (taste,) = re.findall(r"```python\n(.*?)```", readme, re.DOTALL)
    ast.parse(taste)
    assert "client.get_creditors(reference=" in taste


def test_the_retries_row_names_every_status_a_get_is_retried_on() -> None:
    # The errors guide says which (tests/client/test_call_outcomes.py checks the client).
    errors_guide = (DOCS / "guides" / "errors.md").read_text()
    assert "GETs are retried on connection errors, 429, 502, 503 and 504" in errors_guide
    configuration = (DOCS / "guides" / "configuration.md").read_text()
    (row,) = [line for line in configuration.splitlines() if line.startswith("| `retries` |")]
    assert "connection errors and 429/502/503/504" in row


def _public_members(klass: type) -> set[str]:
    """The members users call on a class of the package: its own and its package bases'."""
    names: set[str] = set()
    for base in klass.__mro__:
        if not base.__module__.startswith("recurring_payments"):
            continue  # Mapping.keys, Exception.args: Python's
        for name, value in vars(base).items():
            if name.startswith("_"):
                continue
            if isinstance(value, (property, classmethod, staticmethod)) or callable(value):
                names.add(name)
            elif inspect.ismethoddescriptor(value) or inspect.isgetsetdescriptor(value):
                names.add(name)
    return names


def test_the_built_reference_shows_every_public_member(site: Path) -> None:
    anchors: set[str] = set()
    for page in (site / "reference").glob("*.html"):
        anchors |= set(re.findall(r'id="(recurring_payments[\w.]*)"', page.read_text()))
    expected: set[str] = set()
    for module, prefix in (
        (rp, "recurring_payments"),
        (errors, "recurring_payments.errors"),
        (testing, "recurring_payments.testing"),
    ):
        for name in set(module.__all__) - {"__version__"}:
            obj = getattr(module, name)
            if module is rp and name in errors.__all__:
                continue  # rendered under recurring_payments.errors
            expected.add(f"{prefix}.{name}")
            if inspect.isclass(obj):
                expected |= {f"{prefix}.{name}.{m}" for m in _public_members(obj)}
    missing = sorted(expected - anchors)
    assert not missing, f"not in the built reference: {missing}"


def test_no_page_shows_a_markdown_table_as_text(site: Path) -> None:
    checked = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "check_site_tables.py"), str(site)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (checked.returncode, checked.stdout) == (0, ""), checked.stdout + checked.stderr


def test_the_table_check_finds_a_table_broken_by_a_blank_line(tmp_path: Path) -> None:
    # What a blank line inside a table renders to: the rows after it as one paragraph.
    (tmp_path / "page.html").write_text(
        "<table><tr><td><code>timeout</code></td></tr></table>\n"
        "<p>| <code>telemetry</code> | <code>True</code> | spans |\n"
        "| <code>trust_env</code> | <code>True</code> | proxies |</p>\n"
        "<pre><code>| a | b |   (a code block may show pipes)</code></pre>\n"
        "<p>a | b, or <code>x | y</code> in prose</p>\n"
    )
    checked = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "check_site_tables.py"), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert checked.returncode == 1
    assert checked.stdout.splitlines() == [
        "page.html: a Markdown table row shown as text: | telemetry | True | spans |",
        "page.html: a Markdown table row shown as text: | trust_env | True | proxies |",
    ]
