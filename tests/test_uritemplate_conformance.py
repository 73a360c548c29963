"""All 270 cases of the RFC 6570 conformance suite through the public expand_uri_template."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import recurring_payments as rp

SUITE = Path(__file__).parent / "data" / "uritemplate-test"
FILES = [
    "spec-examples.json",
    "spec-examples-by-section.json",
    "extended-tests.json",
    "negative-tests.json",
]


def _cases() -> list[Any]:
    cases = []
    for name in FILES:
        groups = json.loads((SUITE / name).read_text(encoding="utf-8"))
        for group_name, group in groups.items():
            for template, expected in group["testcases"]:
                cases.append(
                    pytest.param(
                        template,
                        group["variables"],
                        expected,
                        id=f"{name}:{group_name}:{template}",
                    )
                )
    return cases


CASES = _cases()


def test_the_suite_has_270_cases() -> None:
    assert len(CASES) == 270


@pytest.mark.parametrize(("template", "variables", "expected"), CASES)
def test_conformance(template: str, variables: dict[str, Any], expected: Any) -> None:
    if expected is False:
        with pytest.raises(rp.TemplateError):
            rp.expand_uri_template(template, variables)
    elif isinstance(expected, list):
        assert rp.expand_uri_template(template, variables) in expected
    else:
        assert rp.expand_uri_template(template, variables) == expected
