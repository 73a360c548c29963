"""The documents every benchmarked client reads, written for both servers.

``python benches/fixture.py OUT_DIR NGINX_BASE_URL`` writes

- ``OUT_DIR/sandbox.json``: links and resources for ``recurring_payments serve --resources``;
- ``OUT_DIR/site/``: the same documents as static files for nginx (``index.json`` is the entry
  point, with absolute hrefs to NGINX_BASE_URL, as the sandbox renders its own).

The entry point has a templated link ``bench-mandate`` (``/bench/mandates/{id}``, one small
mandate per id in ``MANDATE_IDS``), a plain link ``bench-mandates`` to a collection of
``COLLECTION_SIZE`` embedded mandates (~1.8 MB: 5 fields, a nested object and 3 links each), and
``bench-wide`` to a collection of ``COLLECTION_SIZE`` flat items of ``WIDE_FIELDS`` (8 scalar
fields) and 2 links each (~1.6 MB).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

MANDATE_IDS = [f"MD{n:04d}" for n in range(16)]
COLLECTION_SIZE = 5_000
LINKS = [
    {"rel": "bench-mandate", "href": "/bench/mandates/{id}", "templated": True},
    {"rel": "bench-mandates", "href": "/bench/mandates"},
    {"rel": "bench-wide", "href": "/bench/wide"},
]
WIDE_FIELDS = ("id", "reference", "status", "amount", "currency", "created", "debtor", "iban")


def mandate(n: int, ident: str) -> dict[str, Any]:
    return {
        "id": ident,
        "rum": f"RUM-BENCH-{n:06d}",
        "status": "active" if n % 7 else "revoked",
        "amount": f"{10 + n % 90}.50",
        "currency": "EUR",
        "debtor": {"name": f"Debtor {n:06d}", "iban": "FR7630006000011234567890189"},
        "_links": {
            "self": {"href": f"/bench/mandates/{ident}"},
            "creditor": {"href": "/bench/creditors/benchcreditor"},
            "payments": {"href": f"/bench/mandates/{ident}/payments{{?page}}", "templated": True},
        },
    }


def wide_item(n: int) -> dict[str, Any]:
    """8 scalar fields and 2 links: the shape of a typical list entry."""
    ident = f"MW{n:06d}"
    return {
        "id": ident,
        "reference": f"RUM-WIDE-{n:06d}",
        "status": "active" if n % 7 else "revoked",
        "amount": 10 + n % 90 + 0.5,
        "currency": "EUR",
        "created": f"2026-{1 + n % 12:02d}-{1 + n % 28:02d}T10:00:00Z",
        "debtor": f"Debtor {n:06d}",
        "iban": "FR7630006000011234567890189",
        "_links": {
            "self": {"href": f"/bench/wide/{ident}"},
            "creditor": {"href": "/bench/creditors/benchcreditor"},
        },
    }


def documents() -> dict[str, dict[str, Any]]:
    docs = {f"/bench/mandates/{ident}": mandate(n, ident) for n, ident in enumerate(MANDATE_IDS)}
    items = [mandate(n, f"MX{n:06d}") for n in range(COLLECTION_SIZE)]
    docs["/bench/mandates"] = {
        "count": len(items),
        "_links": {"self": {"href": "/bench/mandates"}},
        "_embedded": {"mandates": items},
    }
    docs["/bench/wide"] = {
        "count": COLLECTION_SIZE,
        "_links": {"self": {"href": "/bench/wide"}},
        "_embedded": {"items": [wide_item(n) for n in range(COLLECTION_SIZE)]},
    }
    return docs


def main(out: Path, nginx_base: str) -> None:
    docs = documents()
    out.mkdir(parents=True, exist_ok=True)
    (out / "sandbox.json").write_text(json.dumps({"links": LINKS, "resources": docs}))
    site = out / "site"
    entry = {
        "_links": {
            "self": {"href": f"{nginx_base}/"},
            **{
                f"{nginx_base}/alps#{link['rel']}": {
                    "href": nginx_base + str(link["href"]),
                    **({"templated": True} if link.get("templated") else {}),
                }
                for link in LINKS
            },
        }
    }
    for path, doc in {"/index": entry, **docs}.items():
        # /bench/mandates is both a document and a directory: store documents as `<path>.json`.
        target = site / (path.lstrip("/") + ".json")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(doc, separators=(",", ":")))
    sizes = [
        (site / "bench" / f"{name}.json").stat().st_size / 1e6 for name in ("mandates", "wide")
    ]
    print(
        f"fixture: {len(docs)} documents, collections {sizes[0]:.2f} MB and {sizes[1]:.2f} MB",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2].rstrip("/"))
