"""The native core of recurring_payments (Rust, PyO3). Import the public API from the package."""

from collections.abc import Mapping
from typing import Any

__version__: str

def expand_uri_template(template: str, variables: Mapping[str, Any]) -> str:
    """Expand an RFC 6570 template; raises TemplateError when it is malformed."""

def template_variables(template: str) -> list[str]:
    """The variable names a template declares, in order of first appearance."""
