"""Counts the adversarial scenarios of the suite by category (issue 12, "Attack it yourselves").

A test joins a category with `pytest.mark.attack("money")` (on the test or as the module's
`pytestmark`), or through MODULES below for whole modules; at the end of the run the
passed scenarios per category are printed, and these are the figures the README's Guarantees
section quotes. Categories: money, token, origin, secrets, inputs, process, hal.
"""

from __future__ import annotations

from collections import Counter

import pytest

CATEGORIES = ("money", "token", "origin", "secrets", "inputs", "process", "hal")
# Whole modules of one category: their tests count there unless a test carries its own mark.
MODULES = {
    "test_faults.py": "money",
    "test_faults_auth.py": "token",
    "test_tls.py": "origin",
    "test_errors_as_data.py": "process",
    "test_fork_under_load.py": "process",
    "test_interpreter_exit.py": "process",
    "test_pool_release.py": "process",
    "test_secret_watch.py": "secrets",
    "test_properties.py": "inputs",
    "test_settings.py": "inputs",
    "test_secrets_frames.py": "secrets",
    "test_green_threads.py": "process",
    "test_template_paths.py": "inputs",
    "test_hal_by_others.py": "hal",
    "test_documents.py": "hal",
}
_passed: Counter[str] = Counter()
_failed: Counter[str] = Counter()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "attack(category): an adversarial scenario of that category (issue 12)"
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        module = MODULES.get(item.path.name)
        if module is not None and item.get_closest_marker("attack") is None:
            item.add_marker(pytest.mark.attack(module))
        mark = item.get_closest_marker("attack")
        if mark is not None and (not mark.args or mark.args[0] not in CATEGORIES):
            raise pytest.UsageError(f"{item.nodeid}: attack category must be one of {CATEGORIES}")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    outcome = yield
    report = outcome.get_result()
    mark = item.get_closest_marker("attack")
    if mark is None or report.when != "call":
        return
    (_passed if report.passed else _failed)[mark.args[0]] += 1


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not (_passed or _failed):
        return
    counts = ", ".join(f"{c} {_passed[c]}" for c in CATEGORIES if _passed[c] or _failed[c])
    failed = sum(_failed.values())
    terminalreporter.write_line(
        f"adversarial scenarios passed: {counts} (total {sum(_passed.values())}, failed {failed})"
    )
