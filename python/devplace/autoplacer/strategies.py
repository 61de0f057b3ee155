"""Strategy names (the placer registry plus "auto") and how "auto" chooses among the placers."""

from __future__ import annotations

import time

import numpy as np

from devplace.autoplacer.graph import PlacementError, Problem
from devplace.autoplacer.placers import DEFAULT_BUDGET_S, PLACERS
from devplace.autoplacer.placers.exhaustive import exhaustive
from devplace.autoplacer.placers.search import search

__all__ = ["STRATEGIES", "place"]

STRATEGIES = (*PLACERS, "auto")


def place(
    problem: Problem, strategy: str = "auto", budget_s: float = DEFAULT_BUDGET_S
) -> np.ndarray:
    """An assignment (device index per op) of `problem` by the named strategy.

    "auto": `search` within `budget_s`, then, when the problem fits the exhaustive placer's
    size limit, the exhaustive optimum seeded with that result (given at least ten times the
    budget, keeping the best found if it runs out). Every other name is a registered placer
    (`devplace.autoplacer.placers.PLACERS`).
    """
    if strategy in PLACERS:
        return PLACERS[strategy](problem, budget_s)
    if strategy != "auto":
        raise PlacementError(
            f"unknown placement strategy {strategy!r}; hint: one of {', '.join(STRATEGIES)}"
        )
    t0 = time.perf_counter()
    best = search(problem, budget_s)
    if PLACERS["exhaustive"].fits(problem):
        spent = time.perf_counter() - t0
        return exhaustive(problem, incumbent=best, time_limit=max(10 * budget_s - spent, 0.1))
    return best
