"""Exits non-zero when the module imported as ``urllib3`` is not the ``urllib3`` distribution
(urllib3-future, which niquests brings, copies itself over it): requests and the urllib3 peer
would then not be what the results call them. benches/run.sh runs it before any workload."""

from __future__ import annotations

import importlib.metadata as metadata
import sys

try:
    import urllib3
except ImportError:  # not installed: the urllib3 peer is left out, requests does not run
    sys.exit(0)

if urllib3.__version__ != metadata.version("urllib3"):
    sys.exit(
        f"urllib3 {urllib3.__version__} is imported, the urllib3 distribution is "
        f"{metadata.version('urllib3')}: urllib3-future overrides it (benches/run.sh)"
    )
