"""Command line: ``python -m recurring_payments <command>`` (also ``recurring-payments``).

Commands: ``demo`` walks the onboarding flow; ``serve`` runs the sandbox in the foreground;
``get`` follows relations and prints a resource.
"""

from __future__ import annotations

import argparse
import json
import shlex
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TextIO

from . import __version__, _demo, _get

if TYPE_CHECKING:
    from .testing import FakeServer

ENV_PREFIX = "RECURRING_PAYMENTS_"

Command = Callable[[argparse.Namespace], int]


def build_parser() -> argparse.ArgumentParser:
    """The parser with one sub-parser per command; each sets ``func``."""
    parser = argparse.ArgumentParser(
        prog="recurring-payments",
        description="Client for the hypermedia recurring-payments API, and its sandbox.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _demo.add_parser(commands)
    _add_serve(commands)
    _get.add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = build_parser().parse_args(argv)
    func: Command = args.func
    return func(args)


# -- serve ------------------------------------------------------------------------------------


def _add_serve(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    serve = commands.add_parser(
        "serve",
        help="run the sandbox server in the foreground",
        description=(
            "Run the sandbox server until Ctrl-C or SIGTERM. Prints its base URL, profile, "
            "relation namespace and app credentials as shell exports (eval-able), which is "
            "also the configuration Client.from_env() reads."
        ),
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on")
    serve.add_argument("--port", type=int, default=0, help="port (default: an ephemeral one)")
    serve.add_argument("--demo", action="store_true", help="serve the demo data")
    serve.add_argument(
        "--tls",
        action="store_true",
        help="serve HTTPS with a throwaway CA (printed as SSL_CERT_FILE)",
    )
    serve.add_argument(
        "--resources",
        metavar="FILE",
        help=(
            'also serve the links and documents of a JSON file: {"links": [{"rel", "href", '
            '"templated"?}], "resources": {"/path": document}} (the benchmarks use it)'
        ),
    )
    serve.add_argument(
        "--token-ttl",
        type=float,
        default=960.0,
        metavar="SECONDS",
        help="access token lifetime (default: 960)",
    )
    serve.add_argument(
        "--journal-limit",
        type=int,
        default=10_000,
        metavar="N",
        help="requests kept in the journal (default: 10000)",
    )
    serve.set_defaults(func=_serve)


def _serve(args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    from .testing import FakeServer

    stop = threading.Event()

    def on_signal(signum: int, frame: object) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        try:
            server = FakeServer(
                args.token_ttl,
                args.demo,
                host=args.host,
                port=args.port,
                journal_limit=args.journal_limit,
                tls=args.tls,
            ).start()
        except ValueError as exc:
            print(f"recurring-payments serve: {exc}", file=sys.stderr)
            return 1
        if args.resources:
            try:
                _load_resources(server, args.resources)
            except (OSError, ValueError, TypeError, KeyError) as exc:
                server.stop()
                print(f"recurring-payments serve: {args.resources}: {exc!r}", file=sys.stderr)
                return 1
        creds = server.credentials
        settings = {
            "BASE_URL": server.base_url,
            "PROFILE": server.profile,
            "REL_NAMESPACE": server.rel_namespace,
            "APP_NAME": creds.app_name,
            "APP_SECRET": creds.app_secret,
        }
        kind = "demo data" if args.demo else "empty"
        print(f"# recurring-payments sandbox ({kind}) running; stop with Ctrl-C", file=out)
        for name, value in settings.items():
            print(f"export {ENV_PREFIX}{name}={shlex.quote(value)}", file=out)
        if args.tls:
            # The client's default verify=True then trusts the sandbox's CA (and only it).
            print(f"export SSL_CERT_FILE={shlex.quote(server.ca_path)}", file=out)
        out.flush()
        try:
            stop.wait()
        finally:
            server.stop()
        print("# stopped", file=out)
        out.flush()
        return 0
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _load_resources(server: FakeServer, path: str) -> None:
    """Add the links and resources of the JSON file at ``path`` (see ``serve --help``)."""
    with open(path, encoding="utf-8") as file:
        spec = json.load(file)
    if not isinstance(spec, dict) or set(spec) - {"links", "resources"}:
        raise ValueError("expected an object with 'links' and/or 'resources'")
    for link in spec.get("links", []):
        server.add_link(link["rel"], link["href"], templated=link.get("templated") is True)
    for resource_path, document in spec.get("resources", {}).items():
        server.add_resource(resource_path, document)
