"""The `devplace` command line: one module per subcommand, each with `register(subparsers)`.

A subcommand module adds its parser to `subparsers` and sets `func`, a callable taking the
parsed arguments and returning the exit status.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import sys
from typing import NoReturn

__all__ = ["main"]

# Subcommand name -> the module that registers it.
SUBCOMMANDS = {
    "demo": "devplace.cli.demo",
    "profile": "devplace.cli.profile",
    "devices": "devplace.cli.devices",
    "cluster": "devplace.cli.cluster",
    "place": "devplace.autoplacer.command",
    "tensorboard": "devplace.cli.tensorboard",
}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser for every subcommand, or for subcommand `only` alone (the others' modules
    are then not imported: `place` loads scipy)."""
    parser = argparse.ArgumentParser(
        prog="devplace",
        description="See and control where every TensorFlow op runs.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module in SUBCOMMANDS.items():
        if only in (None, name):
            importlib.import_module(module).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    given = sys.argv[1:] if argv is None else argv
    parser = build_parser(given[0] if given and given[0] in SUBCOMMANDS else None)
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        _refuse_unknown(parser, args, unknown)
    if getattr(args, "func", None) is None:
        parser.print_help()
        return 2
    return int(args.func(args) or 0)


def _refuse_unknown(
    parser: argparse.ArgumentParser, args: argparse.Namespace, unknown: list[str]
) -> NoReturn:
    """Exit with the usage of the (sub)command given, naming each unknown option and the
    closest option that command has (`--output`: did you mean --out?)."""
    command = parser
    while True:
        subs = [a for a in command._actions if isinstance(a, argparse._SubParsersAction)]
        name = getattr(args, subs[0].dest, None) if subs else None
        if name not in (subs[0].choices if subs else {}):
            break
        command = subs[0].choices[name]
    options = [option for action in command._actions for option in action.option_strings]
    hints = []
    for arg in unknown:
        given = arg.split("=", 1)[0]
        close = difflib.get_close_matches(given, options, n=1, cutoff=0.6)
        if given.startswith("-") and close:
            hints.append(f"{given}: did you mean {close[0]}?")
    command.error("; ".join([f"unrecognized arguments: {' '.join(unknown)}", *hints]))


if __name__ == "__main__":
    sys.exit(main())
