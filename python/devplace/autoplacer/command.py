"""`devplace place WORKLOAD.json [--strategy NAME] [--budget S] [-o OUT.json]` (also `python -m`).

Writes the result record of devplace/workloads/README.md (assignment by node id,
simulated makespan, strategy, wall time) as JSON, and a summary with units saying which placer
`auto` chose and why others were skipped. The placement modules are imported when the command
runs, so building the parser stays cheap.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from typing import Any

from devplace.core._gc import cycle_collector_paused

__all__ = ["main", "place_file", "register", "run", "summary"]

#: What the summary calls the workload files' time unit (the format leaves it open: it is
#: whatever unit `cpuLatency`, `fpgaLatency` and edge `cost` are given in).
TIME_UNIT = "workload time units"


def place_file(path: str, strategy: str = "auto", budget_s: float | None = None) -> dict[str, Any]:
    """Place a workload file; the README's result record plus how the placer was chosen.

    Keys: assignment (node id -> device), makespan (simulated, in the file's time unit),
    lower_bound, strategy (as asked), chosen (the placer that made the assignment), optimal
    (an exact placer's proof: true, false when its budget ran out first, null when none ran),
    skipped (placer -> why not used), seconds (placement), cpu_seconds (placement, this
    process's CPU time: steadier on a shared machine), total_seconds (loading, placement and
    scoring), feasible.
    """
    from devplace.autoplacer.placers.search import DEFAULT_BUDGET_S
    from devplace.autoplacer.simulator import simulate
    from devplace.autoplacer.strategies import choose
    from devplace.autoplacer.workloads import read_workload

    t_start = time.perf_counter()
    workload = read_workload(path)
    problem = workload.problem
    t0, c0 = time.perf_counter(), time.process_time()
    choice = choose(problem, strategy, DEFAULT_BUDGET_S if budget_s is None else budget_s)
    seconds, cpu_seconds = time.perf_counter() - t0, time.process_time() - c0
    schedule = choice.schedule or simulate(problem, choice.assignment)
    names = [dev.name for dev in problem.devices]
    return {
        "assignment": {
            str(i): names[a] for i, a in zip(workload.ids, choice.assignment.tolist(), strict=True)
        },
        "makespan": schedule.makespan,
        "lower_bound": problem.lower_bound(),
        "strategy": strategy,
        "chosen": choice.placer,
        "optimal": choice.optimal,
        "skipped": choice.skipped,
        "seconds": seconds,
        "cpu_seconds": cpu_seconds,
        "total_seconds": time.perf_counter() - t_start,
        "feasible": schedule.feasible,
        "ops": problem.n,
        "devices": problem.d,
    }


def summary(path: str, result: dict[str, Any]) -> str:
    """The human-readable lines `devplace place` prints about a result record."""
    asked = result["strategy"]
    how = (
        f"strategy auto chose {result['chosen']}"
        if asked == "auto"
        else f"strategy {result['chosen']}"
    )
    lines = [
        f"{path}: {result['ops']:,} ops on {result['devices']:,} devices; {how}",
        f"makespan {result['makespan']:.6g} {TIME_UNIT} (simulated; lower bound "
        f"{result['lower_bound']:.6g}){'' if result['feasible'] else ' -- exceeds a memory cap'}",
        f"placed in {result['seconds']:.2f} s ({result['total_seconds']:.2f} s with loading "
        "and scoring)",
    ]
    if result["optimal"] is not None:
        lines.append(
            (
                "proven optimal for the MILP's scheduling model (the simulator may differ)"
                if result["chosen"] == "milp"
                else "proven optimal: no assignment simulates faster"
            )
            if result["optimal"]
            else "not proven optimal: the exact search ran out of budget and returned the best "
            "assignment found so far; hint: raise --budget to let it finish"
        )
    lines += [f"skipped {name}: {why}" for name, why in result["skipped"].items()]
    return "\n".join(lines)


def _budget(text: str) -> float:
    """argparse type of --budget: the checked budget, or an error naming the range."""
    from devplace.autoplacer.graph import AutoPlacementError
    from devplace.autoplacer.placers.search import check_budget

    try:
        return check_budget(text, "--budget")
    except AutoPlacementError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "workload",
        help="a placement workload JSON file, or the name of a bundled one "
        "(bert-l3-operators, bert24-layers, resnet50-layers)",
    )
    parser.add_argument(
        "--strategy",
        default="auto",
        help="a placer's name (single, heft, search, exhaustive, ...) or auto (default)",
    )
    parser.add_argument(
        "--budget",
        type=_budget,
        default=None,
        help="seconds for the placement, in (0, 3600] (default 0.8)",
    )
    parser.add_argument(
        "-o", "--output", help="result JSON file (default: stdout, the summary on stderr)"
    )
    parser.set_defaults(func=run)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `place` command to the `devplace` command line."""
    parser = subparsers.add_parser(
        "place",
        help="place a workload JSON file's ops (automatic placement)",
        description="Place a placement-workloads JSON file and write its assignment, "
        "simulated makespan, strategy and wall time as JSON, with a summary in words.",
    )
    _add_arguments(parser)


def run(args: argparse.Namespace) -> int:
    """Run `devplace place` for parsed arguments; exit status 2 on bad input."""
    from devplace.core.atomic import write_text
    from devplace.core.errors import Error

    try:
        with cycle_collector_paused():
            result = place_file(args.workload, args.strategy, args.budget)
            text = json.dumps(result, indent=1) + "\n"
        if args.output:
            write_text(args.output, text)
    except Error as err:  # a FileWriteError is one too
        print(f"devplace place: {err}", file=sys.stderr)
        return 2
    if args.output:
        print(summary(args.workload, result))
    else:
        sys.stdout.write(text)
        print(summary(args.workload, result), file=sys.stderr)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Command line entry (`python -m devplace.autoplacer`)."""
    parser = argparse.ArgumentParser(prog="devplace place", description=__doc__)
    _add_arguments(parser)
    return run(parser.parse_args(argv))
