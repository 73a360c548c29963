"""Command line: ``python -m recurring_payments <command>`` (also ``recurring-payments``).

Commands: ``demo`` walks the onboarding flow (:mod:`.demo`); ``serve`` runs the sandbox in the
foreground (:mod:`.serve`); ``get`` follows relations and prints a resource (:mod:`.get`).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence

from .. import __version__
from . import demo, get, serve

Command = Callable[[argparse.Namespace], int]


def build_parser() -> argparse.ArgumentParser:
    """The parser with one sub-parser per command; each sets ``func``."""
    parser = argparse.ArgumentParser(
        prog="recurring-payments",
        description="Client for the hypermedia recurring-payments API, and its sandbox.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    demo.add_parser(commands)
    serve.add_parser(commands)
    get.add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = build_parser().parse_args(argv)
    func: Command = args.func
    return func(args)
