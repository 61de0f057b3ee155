"""Strategy names (the placer registry plus "auto") and how "auto" chooses among the placers."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from devplace.autoplacer.coarsen import can_merge, coarsen, units
from devplace.autoplacer.graph import AutoPlacementError, Problem
from devplace.autoplacer.placers import DEFAULT_BUDGET_S, PLACERS
from devplace.autoplacer.placers.exhaustive import exhaustive
from devplace.autoplacer.placers.search import MAX_BUDGET_S, check_budget, run_search
from devplace.autoplacer.simulator import Schedule, simulate

__all__ = [
    "MAX_BUDGET_S",
    "MAX_NEAR_UNITS",
    "MAX_NEAR_WORK",
    "NEAR",
    "STRATEGIES",
    "UNIT_MARGIN",
    "Choice",
    "choose",
    "near_groupings",
    "place",
]

STRATEGIES = (*PLACERS, "auto")

#: How much faster (predicted) a placement of the ops must be than the best placement of the
#: units for `auto` to prefer it, on servers (devices with a `host`): splitting units adds
#: crossings between tasks, whose measured cost is the least certain part of a prediction.
#: On a loaded 2-core machine a 7-crossing split of four_branches' units was predicted 13%
#: faster than its branches split whole (by hand) and measured 7% slower.
UNIT_MARGIN = 0.05

#: How many groupings of the units next to auto's verify measures too: where two groupings
#: are predicted within the model's error of each other, profile noise can decide which is
#: the optimum; measured side by side, the faster one wins.
NEAR = 2
#: Units above which `near_groupings` tries nothing (its trials grow with the square).
MAX_NEAR_UNITS = 40
#: Simulated ops `near_groupings` spends at most (trials x ops; 1-2 s here): a large graph
#: gets its one-unit moves and the first swaps only.
MAX_NEAR_WORK = 200_000


@dataclass
class Choice:
    """An assignment and how it was made: the placer that made it, by name why other placers
    were not used, and whether an exact placer proved it optimal (False: one ran out of
    budget; None: no exact placer ran). `runner_up`: (label, assignment) of the other of
    `auto`'s two results, on the units and on the ops, when they differ (verify measures
    both). `schedule`: the assignment's simulated schedule when the search kept it (None:
    simulate it)."""

    assignment: np.ndarray
    placer: str
    skipped: dict[str, str] = field(default_factory=dict)
    optimal: bool | None = None
    runner_up: tuple[str, np.ndarray] | None = None
    schedule: Schedule | None = None


def choose(problem: Problem, strategy: str = "auto", budget_s: float = DEFAULT_BUDGET_S) -> Choice:
    """An assignment (device index per op) of `problem` by the named strategy, and its maker.

    `budget_s`: seconds in (0, `MAX_BUDGET_S`] for the whole call. "auto": when coarsening
    (`autoplacer.coarsen`) leaves fewer groups, first the units get half the budget, then the
    ops the rest, starting from the units' result; the better is kept ("... on units" names
    the first; on servers the ops' only when predicted `UNIT_MARGIN` faster). On each:
    `search` within its budget; when the problem fits the exhaustive placer's size limit,
    search gets an eighth of it (it converges fast on so few groups; its result seeds the
    exhaustive search, which gets the rest and keeps the best found if time runs out: at
    0.8 s this proves the optimum of every benchmark graph, see
    benchmarks/placement/results.md). Every other name is a
    registered placer (`devplace.autoplacer.placers.PLACERS`), refused above its size limit;
    the exact ones ("exhaustive", "milp") keep to the budget too, returning the best found so
    far (`Choice.optimal` False) when it runs out.
    """
    budget_s = check_budget(budget_s)
    if strategy in PLACERS:
        found = PLACERS[strategy].solve(problem, budget_s)
        return Choice(found.assignment, strategy, optimal=found.optimal)
    if strategy != "auto":
        raise AutoPlacementError(
            f"unknown placement strategy {strategy!r}; hint: one of {', '.join(STRATEGIES)}"
        )
    deadline = time.perf_counter() + budget_s
    if not can_merge(problem):  # e.g. a random DAG: skip the linear but costly coarsening
        return _auto(problem, budget_s)
    coarse = coarsen(problem)
    if coarse.group_count() == problem.group_count():
        return _auto(problem, budget_s)
    # Units first (half the budget): the exact placers fit far more graphs there; then the
    # ops themselves from the units' best, which may split a unit when that pays.
    on_units = _auto(coarse, budget_s / 2)
    on_units.placer += " on units"
    left = max(deadline - time.perf_counter(), 1e-3)
    on_ops = _auto(problem, left, start=on_units.assignment)
    if simulate(problem, on_ops.assignment).makespan < simulate(
        problem, on_units.assignment
    ).makespan * (1 - (UNIT_MARGIN if any(dev.host for dev in problem.devices) else 1e-9)):
        on_ops.skipped.update(on_units.skipped)
        won, lost = on_ops, on_units
    else:
        won, lost = on_units, on_ops
    if not np.array_equal(won.assignment, lost.assignment):
        won.runner_up = (lost.placer, lost.assignment)
    return won


def _auto(problem: Problem, budget_s: float, start: np.ndarray | None = None) -> Choice:
    """`search` within `budget_s` (from `start` too, when given), then, when the problem fits
    the exhaustive placer's size limit, exhaustive search from its result with the rest of
    the budget (search gets an eighth then)."""
    deadline = time.perf_counter() + budget_s
    refusal = PLACERS["exhaustive"].refusal(problem)
    found = run_search(problem, budget_s if refusal else budget_s / 8, start=start)
    searched = Choice(
        found.assignment, f"search (from {found.start})", found.skipped, schedule=found.schedule
    )
    if refusal is not None:
        searched.skipped["exhaustive"] = refusal
        return searched
    best = exhaustive(
        problem, incumbent=found.assignment, time_limit=max(deadline - time.perf_counter(), 0.0)
    )
    searched.optimal = best.optimal
    if np.array_equal(best.assignment, found.assignment):
        return searched
    return Choice(best.assignment, "exhaustive", found.skipped, best.optimal)


def place(
    problem: Problem, strategy: str = "auto", budget_s: float = DEFAULT_BUDGET_S
) -> np.ndarray:
    """The assignment `choose` gives (device index per op)."""
    return choose(problem, strategy, budget_s).assignment


def near_groupings(problem: Problem, assignment: np.ndarray, count: int = NEAR) -> list[np.ndarray]:
    """The `count` placements predicted fastest among those one step from `assignment` on
    the problem's units (`coarsen.units`): one unit moved to another device its ops may all
    use, or two units on different devices swapped; distinct, within the memory caps, fastest
    first. Empty when `assignment` splits a unit or there are over `MAX_NEAR_UNITS` units."""
    labels = units(problem)
    k = int(labels.max()) + 1
    dev = np.zeros(k, dtype=np.int64)
    dev[labels] = assignment
    if k > MAX_NEAR_UNITS or not np.array_equal(dev[labels], assignment):
        return []
    ok = np.ones((k, problem.d), dtype=bool)
    np.logical_and.at(ok, labels, problem.allowed)
    steps = [{u: x} for u in range(k) for x in range(problem.d) if x != dev[u] and ok[u, x]]
    steps += [
        {u: dev[v], v: dev[u]}
        for u in range(k)
        for v in range(u + 1, k)
        if dev[u] != dev[v] and ok[u, dev[v]] and ok[v, dev[u]]
    ]
    found: dict[bytes, tuple[float, np.ndarray]] = {}
    for step in steps[: max(MAX_NEAR_WORK // problem.n, 1)]:
        trial = dev.copy()
        trial[list(step)] = list(step.values())
        a = trial[labels]
        if a.tobytes() not in found and (s := simulate(problem, a)).feasible:
            found[a.tobytes()] = (s.makespan, a)
    return [a for _, a in sorted(found.values(), key=lambda t: t[0])[:count]]
