"""`devplace profile show|compare`: draw Chrome traces written by `save_profile`."""

from __future__ import annotations

import argparse
import json
import sys

from devplace.core.errors import Error

__all__ = ["register"]

_SHOW = """\
Draw a trace as a per-device Gantt chart: one row per device (its threads are sub-rows; a GPU
also shows its kernels and memory copies beneath its ops, labelled), one bar per op coloured by
op type (the same colour in every picture), gradient ops hatched, and an arrow for every tensor
sent between devices. Prints the ops, busy time, kernels and copies per device, the makespan,
the transfers, and the tensors fetched to the client (no transfers).
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
    _picture_arguments(show)
    show.add_argument("--title", help="picture title (default: the trace's file name)")
    show.set_defaults(func=_show)

    compare = commands.add_parser(
        "compare", help="two traces side by side, with a table", description=_COMPARE
    )
    compare.add_argument("a", metavar="A.json", help="the first trace (drawn on top)")
    compare.add_argument("b", metavar="B.json", help="the second trace")
    _picture_arguments(compare)
    compare.add_argument(
        "--labels", nargs=2, metavar=("LABEL_A", "LABEL_B"), help="names for the two traces"
    )
    compare.add_argument(
        "--json", action="store_true", help="print the numbers as JSON instead of a table"
    )
    compare.set_defaults(func=_compare)


def _picture_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-o",
        "--out",
        required=True,
        metavar="OUT.png",
        help="picture to write: .png, or vector .svg / .pdf",
    )
    parser.add_argument(
        "--size",
        choices=("screen", "page", "column"),
        default="screen",
        help="figure width: screen (13 in), page (7 in) or column (3.5 in, one column of a "
        "paper; labels 7 pt) (default: %(default)s)",
    )


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2


def _error(command: str, err: Exception) -> int:
    print(f"devplace profile {command}: error: {err}", file=sys.stderr)
    return 1


def _show(args: argparse.Namespace) -> int:
    from devplace.adapter.devices import caveat_lines
    from devplace.core.formatting import fetched_line, format_bytes, format_time, plural
    from devplace.views.plot import plot_profile

    try:
        trace = plot_profile(args.trace, args.out, title=args.title, size=args.size)
    except (Error, OSError) as err:
        return _error("show", err)
    busy, kernels, copies = trace.busy_us(), trace.busy_us("kernel"), trace.busy_us("copy")
    print(
        f"{args.trace}: {plural(len(trace.graph_ops), 'op')} "
        f"on {plural(len(trace.devices), 'device')}, "
        f"makespan {format_time(trace.makespan_us)}"
    )
    for device, count in trace.op_counts().items():
        line = f"  {device}: {plural(count, 'op')}, busy {format_time(busy[device])}"
        if device in kernels:
            n = sum(k.device == device for k in trace.kernels)
            line += f"; {plural(n, 'kernel')}, busy {format_time(kernels[device])}"
        if device in copies:
            n = sum(c.device == device for c in trace.copies)
            line += f"; {plural(n, 'memory copy', 'memory copies')}, busy "
            line += format_time(copies[device])
        print(line)
    print(f"cross-device transfers: {trace.transfer_count} ({format_bytes(trace.transfer_bytes)})")
    if trace.fetched:
        print(fetched_line(trace.fetched))
    for line in caveat_lines(trace.devices):
        print(line)
    print(f"picture: {args.out}")
    return 0


def _compare(args: argparse.Namespace) -> int:
    from devplace.views.plot import compare_profiles

    labels = tuple(args.labels) if args.labels else None
    try:
        comparison = compare_profiles(args.a, args.b, args.out, labels=labels, size=args.size)
    except (Error, OSError) as err:
        return _error("compare", err)
    if args.json:
        print(json.dumps(comparison.to_dict(), indent=2))
    else:
        print(comparison.table())
        print(f"picture: {args.out}")
    return 0
