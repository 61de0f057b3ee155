"""`devplace tensorboard TRACE.json --logdir DIR`: a saved profile for TensorBoard's Graphs."""

from __future__ import annotations

import argparse
import sys

from devplace.core.errors import Error

__all__ = ["register"]

_DESCRIPTION = """\
Write a trace saved by dp.save_profile as a TensorBoard event file: its ops on the devices they
ran on, the edges the trace records, and each op's time and output bytes as the run metadata of
TAG. View it with `tensorboard --logdir DIR`, Graphs dashboard ("Color by: Device", or pick TAG
for compute time and memory). From a live session, dp.tensorboard(sess, fetches, logdir) writes
more: the whole graph and each op's requested device too.
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `tensorboard` command."""
    parser = subparsers.add_parser(
        "tensorboard",
        help="a saved profile for TensorBoard's Graphs dashboard",
        description=_DESCRIPTION,
    )
    parser.add_argument("trace", metavar="TRACE.json", help="a trace written by save_profile")
    parser.add_argument("--logdir", required=True, metavar="DIR", help="folder to write into")
    parser.add_argument("--tag", default="run", help="the run metadata's tag (default: run)")
    parser.set_defaults(func=_write)


def _write(args: argparse.Namespace) -> int:
    from devplace.views.tensorboard_log import tensorboard_from_profile

    try:
        events = tensorboard_from_profile(args.trace, args.logdir, args.tag)
    except (Error, OSError) as err:
        print(f"devplace tensorboard: error: {err}", file=sys.stderr)
        return 1
    print(f"wrote {events}; view it with: tensorboard --logdir {args.logdir}")
    return 0
