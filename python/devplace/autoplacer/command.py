"""`devplace place WORKLOAD.json [--strategy NAME] [-o OUT.json]` (also `python -m ...`)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence

from devplace.autoplacer.graph import PlacementError
from devplace.autoplacer.placers.search import DEFAULT_BUDGET_S
from devplace.autoplacer.simulator import simulate
from devplace.autoplacer.strategies import STRATEGIES, place
from devplace.autoplacer.workloads import load_workload

__all__ = ["main", "place_file", "register", "run"]


def place_file(path: str, strategy: str = "auto", budget_s: float = DEFAULT_BUDGET_S) -> dict:
    """Place a workload file; the README's result record (assignment, makespan, ...)."""
    problem = load_workload(path)
    t0 = time.perf_counter()
    assignment = place(problem, strategy, budget_s)
    seconds = time.perf_counter() - t0
    schedule = simulate(problem, assignment)
    ids = [str(n.get("id")) for n in _nodes(path)]
    return {
        "assignment": {i: problem.devices[a].name for i, a in zip(ids, assignment, strict=True)},
        "makespan": schedule.makespan,
        "strategy": strategy,
        "seconds": seconds,
        "feasible": schedule.feasible,
    }


def _nodes(path: str) -> list[dict]:
    with open(path) as f:
        return sorted(json.load(f)["nodes"], key=lambda x: x["id"])


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("workload", help="a placement workload JSON file")
    parser.add_argument("--strategy", default="auto", choices=STRATEGIES)
    parser.add_argument(
        "--budget",
        type=float,
        default=DEFAULT_BUDGET_S,
        help="search seconds (default %(default)s)",
    )
    parser.add_argument("-o", "--output", help="result JSON file (default: stdout)")
    parser.set_defaults(func=run)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `place` command to the `devplace` command line."""
    parser = subparsers.add_parser(
        "place",
        help="place a workload JSON file's ops (automatic placement)",
        description="Place a placement-workloads JSON file and write its assignment, "
        "simulated makespan, strategy and wall time as JSON.",
    )
    _add_arguments(parser)


def run(args: argparse.Namespace) -> int:
    """Run `devplace place` for parsed arguments; exit status 2 on bad input."""
    try:
        result = place_file(args.workload, args.strategy, args.budget)
    except PlacementError as err:
        print(f"devplace place: {err}", file=sys.stderr)
        return 2
    text = json.dumps(result, indent=1)
    if args.output:
        with open(args.output, "w") as f:
            f.write(text + "\n")
    else:
        print(text)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Command line entry (`python -m devplace.autoplacer`)."""
    parser = argparse.ArgumentParser(prog="devplace place", description=__doc__)
    _add_arguments(parser)
    return run(parser.parse_args(argv))
