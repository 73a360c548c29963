"""``recurring-payments get``: follow relations from the entry point and print the resource.

Each positional argument is a step: a relation of the current resource (full, short or
attribute form, optionally ``REL[N]`` to pick one link of an array), a path (``/orders/42``)
or an absolute URL, each optionally followed by ``name=value`` template variables that apply
to it. Configuration comes from the environment, exactly as ``Client.from_env`` reads it.
"""

from __future__ import annotations

import argparse
import http
import json
import os
import re
import sys
from dataclasses import dataclass, field
from typing import Any, TextIO

from .._client import Client
from .._resource import Link, Resource, _send
from ..errors import ConfigurationError, Error, LinkNotFoundError

WIDTH = 80
USAGE_ERROR = 2  # bad arguments or configuration: nothing was asked of the API
API_ERROR = 1  # the API refused, or its answer lacks what the arguments name

EPILOG = """\
steps:
  REL            a relation of the current resource (the entry point at first):
                 full URI, short name (get-creditors) or attribute form
                 (get_creditors); REL[N] picks the Nth link of an array
  /PATH, URL     fetched directly (a path is resolved against the base URL)
  name=value     a template variable of the step just before it

examples:
  recurring-payments get                              # the entry point
  recurring-payments get get-creditors reference=democreditor
  recurring-payments get get-creditors reference=democreditor \\
                         get-mandates size=5          # follow from the creditor
  recurring-payments get /orders/{id} id=42 --json    # a path; the raw document

configuration (as Client.from_env): RECURRING_PAYMENTS_BASE_URL, _PROFILE,
_REL_NAMESPACE (optional), and _APP_NAME + _APP_SECRET or _CREDITOR + _LOGIN +
_PASSWORD (or _APP_SECRET_FILE, _PASSWORD_FILE: the secret in a file); all
missing ones are named at once; `recurring-payments serve --demo` prints a
sandbox's.

exit status: 0 success, 1 the API refused or its answer lacks a relation,
2 bad arguments or configuration.
"""

_INDEXED = re.compile(r"^(?P<rel>.+)\[(?P<index>\d+)\]$")


class UsageError(Exception):
    """Arguments that cannot be right whatever the API says."""


class VariableError(Exception):
    """A template variable the link does not declare (depends on the API's answer)."""


@dataclass
class Step:
    target: str
    variables: dict[str, str] = field(default_factory=dict)

    def direct(self, resource: Resource) -> bool:
        """A path or URL, fetched as it is, rather than a relation (relation names are often
        URIs too: a relation of ``resource`` wins)."""
        target = self.target
        if target.startswith("/"):
            return True
        if not target.startswith(("http:", "https:")):
            return False
        match = _INDEXED.match(target)
        return target not in resource.links and not (match and match["rel"] in resource.links)


def parse_steps(arguments: list[str]) -> list[Step]:
    """Group ``name=value`` arguments with the relation or path before them."""
    steps: list[Step] = []
    for argument in arguments:
        name, equals, value = argument.partition("=")
        is_variable = equals and name and not argument.startswith(("/", "http:", "https:"))
        if not is_variable:
            steps.append(Step(argument))
            continue
        if not steps:
            raise UsageError(f"{argument!r}: a template variable must follow a relation or path")
        if name in steps[-1].variables:
            raise UsageError(f"variable {name!r} given twice for {steps[-1].target!r}")
        steps[-1].variables[name] = value
    return steps


def _pick_link(resource: Resource, target: str) -> Link:
    """The link ``target`` names in ``resource`` (did-you-mean when there is none)."""
    index: int | None = None
    match = _INDEXED.match(target)
    if match and target not in resource.links:
        target, index = match["rel"], int(match["index"])
    rel = resource._all_relations().resolve(target)  # LinkNotFoundError with did-you-mean
    if rel not in resource.links:
        raise LinkNotFoundError(f"{target!r} is an embedded resource, not a link")
    found = resource.links[rel]
    if isinstance(found, Link):
        if index not in (None, 0):
            raise LinkNotFoundError(f"relation {target!r} has a single link; drop [{index}]")
        return found
    if index is None:
        if len(found) == 1:
            return found[0]
        raise LinkNotFoundError(
            f"relation {target!r} has {len(found)} links; pick one with {target}[N]"
        )
    if index >= len(found):
        raise LinkNotFoundError(f"relation {target!r} has {len(found)} links, no [{index}]")
    return found[index]


def walk(client: Client, steps: list[Step], err: TextIO) -> tuple[str, Resource]:
    """Follow ``steps``; returns the last URL requested and its resource."""
    session = client._session  # what a client shares with its resources (_session.Session)
    url = session.resolve("/")
    resource = client.root()
    for step in steps:
        try:
            if step.direct(resource):
                url = session.expand(step.target, step.variables, None, step.target)
            else:
                link = _pick_link(resource, step.target)
                if link.deprecation is not None:
                    print(f"note: {step.target!r} is deprecated (see {link.deprecation})", file=err)
                url = link.expand(**step.variables)
        except TypeError as exc:  # expand() refuses a variable the template does not declare
            raise VariableError(str(exc)) from None
        resource = _send(session, "GET", url, templated=False)  # expanded already
    return url, resource


# -- display --------------------------------------------------------------------------------


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def _compact(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)


def _short_href(client: Client, href: str) -> str:
    """``href`` relative to the base URL when it is on the API's origin (shorter to read)."""
    base = client.base_url.rstrip("/")
    if href.startswith(base + "/") or href == base:
        return href[len(base) :] or "/"
    return href


def render(client: Client, url: str, resource: Resource, out: TextIO) -> None:
    """The resource on an 80-column terminal: request, status, state, links, embedded."""
    status = resource.status or 0
    try:
        phrase = http.HTTPStatus(status).phrase
    except ValueError:
        phrase = ""
    print(f"GET {url}", file=out)
    print(f"HTTP {status} {phrase}".rstrip(), file=out)
    if resource.url and resource.url != url:
        print(f"self {resource.url}", file=out)

    state = list(resource.items())
    print(f"\nState ({len(state)})" if state else "\nState: empty", file=out)
    width = min(max((len(k) for k, _ in state), default=0), 24)
    for key, value in state:
        line = f"  {key:<{width}}  {_compact(value)}"
        print(_fit(line, WIDTH), file=out)

    entries: list[tuple[str, Link]] = []
    for rel, value in resource.links.items():
        name = client._session.short_name(rel)
        if isinstance(value, list):
            entries.extend((f"{name}[{i}]", link) for i, link in enumerate(value))
        else:
            entries.append((name, value))
    if entries:
        print(f"\nLinks ({len(entries)})", file=out)
        width = min(max(len(name) for name, _ in entries), 28)
        for name, link in entries:
            href = _short_href(client, link.href)
            notes = []
            if link.templated:
                notes.append(f"vars: {', '.join(link.variables) or 'none'}")
            if link.title:
                notes.append(f"title: {link.title}")
            if link.deprecation:
                notes.append("deprecated")
            line = f"  {name:<{width}}  {href}"
            note = f"({'; '.join(notes)})" if notes else ""
            if len(line) + 2 + len(note) <= WIDTH:
                print(f"{line}  {note}".rstrip(), file=out)
                continue
            if len(line) <= WIDTH:
                print(line, file=out)
            else:  # the href whole on its own line, copyable
                print(f"  {name}", file=out)
                print(f"      {href}", file=out)
            if note:
                print(_fit(f"      {note}", WIDTH), file=out)

    embedded = resource.embedded
    if embedded:
        print(f"\nEmbedded ({len(embedded)})", file=out)
        for rel, items in embedded.items():
            name = client._session.short_name(rel)
            count = f"{len(items)} items" if isinstance(items, list) else "1 resource"
            print(_fit(f"  {name}  {count}", WIDTH), file=out)


# -- the command ------------------------------------------------------------------------------


def run(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Entry of ``recurring-payments get``."""
    out = out or sys.stdout  # looked up now, so redirections (pytest's capsys) apply
    err = err or sys.stderr
    prog = "recurring-payments get"
    try:
        steps = parse_steps(args.steps)
    except UsageError as exc:
        print(f"{prog}: {exc}", file=err)
        return USAGE_ERROR
    try:
        client = Client.from_env(prefix=args.env_prefix)
    except ConfigurationError as exc:
        print(f"{prog}: configuration: {exc} (see {prog} --help)", file=err)
        return USAGE_ERROR
    try:
        with client:
            url, resource = walk(client, steps, err)
            if args.json:
                json.dump(resource.to_dict(), out, indent=2, ensure_ascii=False)
                print(file=out)
            else:
                render(client, url, resource, out)
        return 0
    except VariableError as exc:
        print(f"{prog}: {exc}", file=err)
        return API_ERROR
    except Error as exc:
        print(f"{prog}: {type(exc).__name__}: {exc}", file=err)
        return API_ERROR
    except BrokenPipeError:  # `| head`: the reader went away; say nothing more
        _silence_stdout()
        return 0
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=err)
        return 130


def _silence_stdout() -> None:
    # Python flushes stdout at exit, which would raise again: point it at /dev/null.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def add_parser(commands: Any) -> None:
    get = commands.add_parser(
        "get",
        help="follow relations from the entry point and print the resource",
        description=(
            "Follow relations from the entry point (or fetch a path) and print the resource\n"
            "reached: its URL and status, state, links (templates and their variables) and\n"
            "embedded resources. --json prints the document itself."
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    get.add_argument(
        "steps",
        nargs="*",
        metavar="REL_OR_PATH [name=value ...]",
        help="relations to follow, paths or URLs, each with its template variables",
    )
    get.add_argument("--json", action="store_true", help="print the raw document as JSON")
    get.add_argument(
        "--env-prefix",
        default="RECURRING_PAYMENTS_",
        metavar="PREFIX",
        help="prefix of the configuration variables (default: RECURRING_PAYMENTS_)",
    )
    get.set_defaults(func=run)
