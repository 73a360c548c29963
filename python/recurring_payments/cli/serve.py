"""``serve``: the sandbox server in the foreground, its settings printed as shell exports."""

from __future__ import annotations

import argparse
import json
import shlex
import signal
import sys
import time
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from ..testing import FakeServer

# The prefix of the settings `Client.from_env()` reads (printed as exports by `serve`).
ENV_PREFIX = "RECURRING_PAYMENTS_"


def add_parser(commands: Any) -> None:
    serve = commands.add_parser(
        "serve",
        help="run the sandbox server in the foreground",
        description=(
            "Run the sandbox server until Ctrl-C or SIGTERM. Prints its base URL, profile, "
            "relation namespace and app credentials as shell exports (eval-able), which is "
            "also the configuration Client.from_env() reads."
        ),
    )
    # No defaults for --host, --token-ttl and --journal-limit: FakeServer's apply (importing it
    # to print them would make every command pay for the sandbox's imports).
    serve.add_argument("--host", help="address to listen on (default: 127.0.0.1)")
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
        metavar="SECONDS",
        help="access token lifetime (default: FakeServer's token_ttl, 960)",
    )
    serve.add_argument(
        "--journal-limit",
        type=int,
        metavar="N",
        help="requests kept in the journal (default: FakeServer's journal_limit)",
    )
    serve.set_defaults(func=run)


def run(args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    from ..testing import FakeServer

    # A plain flag, not a threading.Event: the handler runs between two bytecodes of the main
    # thread, which may be holding the Event's lock inside wait(); set() would then deadlock.
    stopping: list[int] = []

    def on_signal(signum: int, frame: object) -> None:
        stopping.append(signum)

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        try:
            given = {
                "token_ttl": args.token_ttl,
                "host": args.host,
                "journal_limit": args.journal_limit,
            }
            chosen = {name: value for name, value in given.items() if value is not None}
            server = FakeServer(demo=args.demo, port=args.port, tls=args.tls, **chosen).start()
        except (OSError, ValueError) as exc:  # a port taken; a bad argument
            print(f"recurring-payments serve: {exc}", file=sys.stderr)
            return 1
        if args.resources:
            try:
                load_resources(server, args.resources)
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
            # Short slices: a sleep goes on for what is left of it after the handler has run,
            # and on Windows an endless wait is not interrupted by Ctrl-C.
            while not stopping:
                time.sleep(0.1)
        finally:
            server.stop()
        print("# stopped", file=out)
        out.flush()
        return 0
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def load_resources(server: FakeServer, path: str) -> None:
    """Add the links and resources of the JSON file at ``path`` (see ``serve --help``)."""
    with open(path, encoding="utf-8") as file:
        spec = json.load(file)
    if not isinstance(spec, dict) or set(spec) - {"links", "resources"}:
        raise ValueError("expected an object with 'links' and/or 'resources'")
    for link in spec.get("links", []):
        server.add_link(link["rel"], link["href"], templated=link.get("templated") is True)
    for resource_path, document in spec.get("resources", {}).items():
        server.add_resource(resource_path, document)
