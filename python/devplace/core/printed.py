"""What devplace's result objects print: one line for `repr`, a bounded table for `str`.

Every result (placement report, profile, traced run, trace, comparison, automatic placement)
has a one-line `repr` (what a bare expression shows in the Python REPL, Julia's `show`) and a
`str` (`print`, Julia's `print` and, under the `repr` line, its REPL display): the table the
docs show, at most `MAX_ROWS` rows per table however big the graph, then how many more and
where every one is. IPython's terminal shows the table (`_repr_pretty_`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tabulate import tabulate

from devplace.core.formatting import fetched_line, format_bytes, format_time, plural

__all__ = ["MAX_NAMES", "MAX_ROWS", "Printed", "devices_line", "more", "names", "trace_table"]

#: Rows of one table `str` shows before counting the rest.
MAX_ROWS = 50
#: Names a line of names (ops optimized away, devices) lists before counting the rest.
MAX_NAMES = 20


class Printed:
    """A result whose `repr` is one line and whose `str` is its table: IPython's terminal
    display shows the table, as Julia's REPL does."""

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self) if cycle else str(self))


def more(total: int, shown: int, what: str, where: str) -> list[str]:
    """`... and N more <what> (<where> has every one)`, or nothing when all were shown."""
    if total <= shown:
        return []
    return [f"... and {plural(total - shown, 'more ' + what)} ({where} has every one)"]


def names(items: Sequence[str], limit: int = MAX_NAMES) -> str:
    """`a, b, c` with at most `limit` names, then `and N more`."""
    shown = ", ".join(items[:limit])
    return shown + (f", and {len(items) - limit} more" if len(items) > limit else "")


def devices_line(devices: Sequence[str]) -> str:
    """The devices of a one-line summary: their names, at most `MAX_NAMES`."""
    return names(sorted(set(devices))) or "no device"


def short(value: Any, limit: int = 60) -> str:
    """`repr(value)` on one line, cut to `limit` characters."""
    text = " ".join(repr(value).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def trace_line(kind: str, trace: Any, first: str = "") -> str:
    """One line of a trace's facts: `<kind>(<first>N ops on D devices, step T, X transfers)`."""
    return (
        f"{kind}({first}{plural(len(trace.graph_ops), 'op')} on "
        f"{plural(len(trace.devices), 'device')}, step {format_time(trace.makespan_us)}, "
        f"{plural(trace.transfer_count, 'cross-device transfer')})"
    )


def trace_table(trace: Any, every_op: str) -> str:
    """A trace as text: per device its ops and busy time, the transfers, the fetches, then its
    `MAX_ROWS` slowest ops (`every_op` names where all of them are)."""
    counts, busy = trace.op_counts(), trace.busy_us()
    span = trace.makespan_us
    devices = [
        (d, str(counts.get(d, 0)), format_time(busy.get(d, 0.0)) + _share(busy.get(d, 0.0), span))
        for d in trace.devices[:MAX_ROWS]
    ]
    lines = [
        f"step {format_time(span)}, {plural(len(trace.graph_ops), 'op')} on "
        f"{plural(len(trace.devices), 'device')}, "
        f"{plural(trace.transfer_count, 'cross-device transfer')}, "
        f"{format_bytes(trace.transfer_bytes)}",
        tabulate(devices, headers=("device", "ops", "busy"), disable_numparse=True),
        *more(len(trace.devices), MAX_ROWS, "device", "devices"),
    ]
    if trace.fetched:
        lines.append(fetched_line(trace.fetched))
    ops = sorted(trace.graph_ops, key=lambda op: -op.duration_us)
    rows = [
        (op.name, op.op_type, op.device, format_time(op.duration_us), format_bytes(op.output_bytes))
        for op in ops[:MAX_ROWS]
    ]
    if rows:
        lines.append(
            tabulate(
                rows,
                headers=("slowest ops", "type", "device", "time", "output"),
                disable_numparse=True,
            )
        )
        lines.extend(more(len(ops), MAX_ROWS, "op", every_op))
    return "\n".join(lines)


def _share(part: float, whole: float) -> str:
    return f" ({part / whole:.0%})" if whole else ""
