"""Why a placement was picked, in numbers: compute per device against the best single device,
the crossings and what they cost, the partition overheads, the alternative of the other kind
(the best split for a single-device pick, the best single device for a split) and, where
verify ran, the measurement and its decision. Plain text, for `AutoPlacement.explain()`.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from devplace.autoplacer.graph import Problem
from devplace.autoplacer.simulator import simulate
from devplace.core.formatting import byte_count, format_time, plural

__all__ = ["Breakdown", "breakdown", "explain_text"]


@dataclass(frozen=True)
class Breakdown:
    """One placement's predicted step in parts (µs): `step`, and per device used its ops,
    their compute there and what the same ops take on the `reference` device (`on_reference`);
    the crossings (count, bytes, link time); the fixed `overheads` by name; `start_delay`
    (other hosts' partitions start late, when any runs an op)."""

    step: float
    reference: int
    ops: dict[int, int]
    compute: dict[int, float]
    on_reference: dict[int, float]
    crossings: int
    crossing_bytes: float
    crossing_us: float
    overheads: dict[str, float]
    start_delay: float


def breakdown(problem: Problem, assignment: Sequence[int], reference: int) -> Breakdown:
    """`Breakdown` of `assignment`, compute compared with device `reference`'s."""
    a = np.asarray(assignment)
    schedule = simulate(problem, a)
    used = sorted(set(a.tolist()))
    ref = problem.compute[:, reference]
    crossings = [
        (u, dest)
        for u in range(problem.n)
        for dest in sorted({int(a[v]) for v in problem.succs[u]} - {int(a[u])})
    ]
    remote = set(problem.remote_devices()) & set(used)
    return Breakdown(
        step=schedule.makespan,
        reference=reference,
        ops={j: int((a == j).sum()) for j in used},
        compute={j: float(problem.compute[a == j, j].sum()) for j in used},
        on_reference={j: float(ref[a == j].sum()) for j in used},
        crossings=len(crossings),
        crossing_bytes=float(sum(problem.out_bytes[u] for u, _ in crossings)),
        crossing_us=float(sum(problem.comm(u, int(a[u]), d) for u, d in crossings)),
        overheads=problem.fixed_costs(a),
        start_delay=problem.host_start_delay if remote else 0.0,
    )


def _describe(problem: Problem, b: Breakdown) -> list[str]:
    """The lines of one breakdown: compute per device, crossings, overheads."""
    names = [dev.name for dev in problem.devices]
    ref = names[b.reference]
    lines = [f"  compute per device (the same ops on {ref}):"]
    for j, ops in b.ops.items():
        moved = f"; {format_time(b.on_reference[j])} taken off {ref}" if j != b.reference else ""
        lines.append(
            f"    {names[j]}: {plural(ops, 'op')}, {format_time(b.compute[j])} "
            f"({format_time(b.on_reference[j])} there{moved})"
        )
    hosts = problem.host_send_share if any(dev.host for dev in problem.devices) else None
    shared = (
        f"; between tasks each end's cores do part of it ({hosts:.0%} the sender's)"
        if hosts is not None and b.crossings
        else ""
    )
    lines.append(
        f"  crossings: {plural(b.crossings, 'tensor')}, {byte_count(b.crossing_bytes)}, "
        f"{format_time(b.crossing_us)} of link time{shared}"
    )
    parts = ", ".join(f"{k} {format_time(v)}" for k, v in b.overheads.items())
    delay = format_time(b.start_delay)
    late = f"; other tasks' partitions start {delay} late" if b.start_delay else ""
    lines.append(f"  fixed costs: {format_time(sum(b.overheads.values()))} ({parts}){late}")
    return lines


def _versus(problem: Problem, pick: Breakdown, other: Breakdown, label: str) -> str:
    """Why the pick beat `other` (labelled), in one line."""
    names = [dev.name for dev in problem.devices]
    ref = names[pick.reference]
    gap = other.step - pick.step
    moved = sum(v for j, v in other.on_reference.items() if j != other.reference)
    fixed = sum(other.overheads.values()) - sum(pick.overheads.values())
    crossings = plural(other.crossings, "crossing")
    late = other.start_delay
    return (
        f"{label}: predicted {format_time(other.step)} ({gap / pick.step:+.0%} against the "
        f"pick); it takes {format_time(moved)} of compute off {ref}, with {crossings} "
        f"({format_time(other.crossing_us)} of link time), {format_time(fixed)} more fixed costs"
        + (f" and a {format_time(late)} later start elsewhere" if late else "")
    )


def explain_text(
    problem: Problem,
    assignment: Sequence[int],
    label: str,
    single: Sequence[int],
    alternative: tuple[str, Sequence[int]] | None = None,
    measured_rounds: Mapping[str, Sequence[float]] | None = None,
    decision: str = "",
) -> str:
    """The explanation of the pick `assignment` (made by `label`) against `single` (the
    best single-device placement: its device is the reference) and `alternative` (label,
    assignment), with the measured rounds and the decision where verify ran."""
    reference = int(np.bincount(np.asarray(single), minlength=problem.d).argmax())
    pick = breakdown(problem, assignment, reference)
    ref_step = simulate(problem, single).makespan
    lines = [
        f"{label}: predicted step {format_time(pick.step)}; everything on "
        f"{problem.devices[reference].name}: {format_time(ref_step)} ({ref_step / pick.step:.2f}x "
        "the pick's)",
        *_describe(problem, pick),
    ]
    if alternative is not None:
        alt_label, alt = alternative
        lines.append("  " + _versus(problem, pick, breakdown(problem, alt, reference), alt_label))
    if measured_rounds:
        med = {k: statistics.median(t) for k, t in measured_rounds.items()}
        lines.append(
            "  measured (median): " + ", ".join(f"{k} {format_time(v)}" for k, v in med.items())
        )
    if decision:
        lines.append("  " + decision)
    return "\n".join(lines)
