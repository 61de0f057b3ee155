"""The `devplace` command line: one module per subcommand, each with `register(subparsers)`.

A subcommand module adds its parser to `subparsers` and sets `func`, a callable taking the
parsed arguments and returning the exit status.
"""

from __future__ import annotations

import argparse
import importlib
import sys

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


def build_parser() -> argparse.ArgumentParser:
    """The parser for every subcommand."""
    parser = argparse.ArgumentParser(
        prog="devplace",
        description="See and control where every TensorFlow op runs.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in SUBCOMMANDS.values():
        importlib.import_module(module).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help()
        return 2
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
