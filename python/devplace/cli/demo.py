"""`devplace demo`: the seeds' colocate experiment, written to a folder."""

from __future__ import annotations

import argparse
import sys

from devplace.core.errors import Error

__all__ = ["register"]

_DESCRIPTION = """\
Run the colocate experiment of ADCME's "Parallel Computing" chapter: a = Variable(1.0) and
b = sin(a) placed by assign_to_device("/device:GPU:0"), c = cos(b) on CPU:0, then
g = gradients(c, a, colocate=true|false), each profiled with run_profile(sess, g + c).

Writes OUT/true.json and OUT/false.json (Chrome traces: open in chrome://tracing or Perfetto,
or draw with `devplace profile show`), and OUT/colocate.png with both timelines lane by lane,
and prints each placement with its cross-device transfer count and bytes.

Uses GPU:0 when this machine has one. Otherwise the seeds' GPU:0 is mapped onto a second
logical CPU device (/device:CPU:1) so that colocation really moves ops between devices; the
output says what was mapped. Logical CPU devices share one thread pool, so their timings do not
rank the placements; the placement and the transfers are the result.
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `demo` command."""
    parser = subparsers.add_parser(
        "demo",
        help="the seeds' colocate experiment: two profiles, one picture",
        description=_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--out",
        default="devplace-demo",
        metavar="DIR",
        help="folder for true.json, false.json and colocate.png (created; default: %(default)s)",
    )
    parser.add_argument(
        "--repeat",
        type=_positive,
        default=5,
        metavar="N",
        help="traced runs per setting after a warm-up; per-op times are medians "
        "(default: %(default)s)",
    )
    parser.set_defaults(func=run)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}")
    return value


def run(args: argparse.Namespace) -> int:
    """Run the demo; 1 with a one-line message when the output folder cannot be used."""
    from devplace.demo import run_demo

    try:
        run_demo(args.out, repeat=args.repeat)
    except (Error, OSError) as err:
        print(f"devplace demo: error: {err}", file=sys.stderr)
        return 1
    return 0
