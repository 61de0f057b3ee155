"""Strategy names and how `strategy="auto"` chooses among the placers."""

from __future__ import annotations

import time

import numpy as np

from devplace.autoplacer.graph import PlacementError, Problem
from devplace.autoplacer.placers import BASELINES
from devplace.autoplacer.placers.contiguous import contiguous
from devplace.autoplacer.placers.exhaustive import MAX_EXHAUSTIVE_OPS, exhaustive
from devplace.autoplacer.placers.milp import milp_placement
from devplace.autoplacer.placers.search import DEFAULT_BUDGET_S, search

__all__ = ["STRATEGIES", "place"]

STRATEGIES = (*BASELINES, "contiguous", "search", "exhaustive", "milp", "auto")


def _groups(problem: Problem) -> int:
    return len(np.unique(problem.groups))


def place(
    problem: Problem, strategy: str = "auto", budget_s: float = DEFAULT_BUDGET_S
) -> np.ndarray:
    """An assignment (device index per op) of `problem` by the named strategy.

    "auto": `search` within `budget_s`, then, for at most 14 colocation groups, the exhaustive
    optimum seeded with that result (given at least ten times the budget, keeping the best
    found if it runs out). "search" is the portfolio plus local search; "exhaustive" and
    "milp" are the exact placers; the rest are the baselines of `placers.BASELINES`.
    """
    if strategy in BASELINES:
        return BASELINES[strategy](problem)
    if strategy == "contiguous":
        return contiguous(problem)
    if strategy == "search":
        return search(problem, budget_s)
    if strategy == "exhaustive":
        return exhaustive(problem)
    if strategy == "milp":
        return milp_placement(problem, time_limit=max(budget_s, 60.0)).assignment
    if strategy == "auto":
        t0 = time.perf_counter()
        best = search(problem, budget_s)
        if _groups(problem) <= MAX_EXHAUSTIVE_OPS:
            spent = time.perf_counter() - t0
            return exhaustive(problem, incumbent=best, time_limit=max(10 * budget_s - spent, 0.1))
        return best
    raise PlacementError(
        f"unknown placement strategy {strategy!r}; hint: one of {', '.join(STRATEGIES)}"
    )
