"""`devplace profile show|compare`: draw Chrome traces written by `save_profile`."""

from __future__ import annotations

import argparse
import json
import sys

__all__ = ["register"]

_SHOW = """\
Draw a trace as a per-device Gantt chart: one lane per device (a device's threads are rows in
its lane), one bar per op coloured by op type, gradient ops hatched, and an arrow for every
tensor sent between devices. Prints the devices, makespan and transfers.
"""

_COMPARE = """\
Draw two traces one above the other on the same lanes and time scale, with per-device busy
time and a summary beside them, and print the numbers as a table: makespan, cross-device
transfers (count and bytes), ops, and busy time per device.
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `profile` command with its `show` and `compare` subcommands."""
    parser = subparsers.add_parser(
        "profile",
        help="draw profiles (Chrome traces from save_profile) and compare them",
        description="Pictures and numbers from Chrome traces written by dp.save_profile.",
    )
    commands = parser.add_subparsers(dest="profile_command", metavar="SUBCOMMAND")
    parser.set_defaults(func=lambda _args: _usage(parser))

    show = commands.add_parser(
        "show", help="a per-device Gantt chart of one trace", description=_SHOW
    )
    show.add_argument("trace", metavar="TRACE.json", help="a trace written by save_profile")
    show.add_argument("-o", "--out", required=True, metavar="OUT.png", help="picture to write")
    show.add_argument("--title", help="picture title (default: the trace's file name)")
    show.set_defaults(func=_show)

    compare = commands.add_parser(
        "compare", help="two traces side by side, with a table", description=_COMPARE
    )
    compare.add_argument("a", metavar="A.json", help="the first trace (drawn on top)")
    compare.add_argument("b", metavar="B.json", help="the second trace")
    compare.add_argument("-o", "--out", required=True, metavar="OUT.png", help="picture to write")
    compare.add_argument(
        "--labels", nargs=2, metavar=("LABEL_A", "LABEL_B"), help="names for the two traces"
    )
    compare.add_argument(
        "--json", action="store_true", help="print the numbers as JSON instead of a table"
    )
    compare.set_defaults(func=_compare)


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2


def _error(command: str, err: Exception) -> int:
    print(f"devplace profile {command}: error: {err}", file=sys.stderr)
    return 1


def _show(args: argparse.Namespace) -> int:
    from devplace.comparison import format_bytes, format_time
    from devplace.plot import plot_profile
    from devplace.trace import TraceError

    try:
        trace = plot_profile(args.trace, args.out, title=args.title)
    except (TraceError, OSError) as err:
        return _error("show", err)
    busy = trace.busy_us()
    print(f"{args.trace}: {len(trace.ops)} ops, makespan {format_time(trace.makespan_us)}")
    for device in trace.devices:
        count = sum(1 for op in trace.ops if op.device == device)
        print(f"  {device}: {count} ops, busy {format_time(busy[device])}")
    print(f"cross-device transfers: {trace.transfer_count} ({format_bytes(trace.transfer_bytes)})")
    print(f"picture: {args.out}")
    return 0


def _compare(args: argparse.Namespace) -> int:
    from devplace.plot import compare_profiles
    from devplace.trace import TraceError

    labels = tuple(args.labels) if args.labels else None
    try:
        comparison = compare_profiles(args.a, args.b, args.out, labels=labels)
    except (TraceError, OSError) as err:
        return _error("compare", err)
    if args.json:
        print(json.dumps(comparison.to_dict(), indent=2))
    else:
        print(comparison.table())
        print(f"picture: {args.out}")
    return 0
