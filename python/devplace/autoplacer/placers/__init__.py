"""The placer registry: every strategy once, behind one signature, with the facts `auto` needs.

A placer maps a `Problem` and a time budget in seconds to an assignment (device index per op);
placers never score themselves (`devplace.autoplacer.simulator.simulate` scores them all).
Adding a placer is one module here and one line in `_REGISTERED`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from devplace.autoplacer.graph import InfeasibleError, Problem
from devplace.autoplacer.placers.contiguous import contiguous
from devplace.autoplacer.placers.exhaustive import MAX_EXHAUSTIVE_OPS, exhaustive
from devplace.autoplacer.placers.heft import heft
from devplace.autoplacer.placers.human import human
from devplace.autoplacer.placers.m_etf import m_etf
from devplace.autoplacer.placers.m_sct import MAX_ETF_OPS, MAX_SCT_OPS, m_sct
from devplace.autoplacer.placers.m_topo import m_topo
from devplace.autoplacer.placers.milp import MAX_MILP_OPS, milp_placement
from devplace.autoplacer.placers.round_robin import round_robin_groups
from devplace.autoplacer.placers.search import DEFAULT_BUDGET_S, search
from devplace.autoplacer.placers.single import single_device
from devplace.autoplacer.placers.tf_default import tf_default

__all__ = ["BASELINES", "DEFAULT_BUDGET_S", "PLACERS", "SCALING", "Placer", "Solution"]

#: How a placer's work grows with the problem: "greedy" (about linear in ops x devices),
#: "lp" (a linear programme), "budget" (stops at its time budget), "exponential" (exact).
SCALING = ("greedy", "lp", "budget", "exponential")


@dataclass(frozen=True)
class Solution:
    """A placer's assignment and whether it is proven optimal: True or False for the exact
    placers (False: stopped by its budget, the best found so far), None for the others, which
    claim nothing."""

    assignment: np.ndarray
    optimal: bool | None = None


@dataclass(frozen=True)
class Placer:
    """A registered placement strategy.

    `run(problem, budget_s)` returns the assignment (the exact placers: a `Solution`) within
    the budget. `portfolio`: `search` starts from its result (the baselines). `max_groups` /
    `max_ops`: the largest number of colocation groups / ops it is meant for (None: any);
    `auto` and the benchmarks skip it above that. `scaling`: one of `SCALING`.
    """

    name: str
    run: Callable[[Problem, float], np.ndarray | Solution]
    scaling: str
    portfolio: bool = False
    max_groups: int | None = None
    max_ops: int | None = None

    def solve(self, problem: Problem, budget_s: float = DEFAULT_BUDGET_S) -> Solution:
        """This placer's `Solution` for `problem` within `budget_s` seconds."""
        found = self.run(problem, budget_s)
        return found if isinstance(found, Solution) else Solution(found)

    def __call__(self, problem: Problem, budget_s: float = DEFAULT_BUDGET_S) -> np.ndarray:
        """The assignment this placer gives `problem` within `budget_s` seconds."""
        return self.solve(problem, budget_s).assignment

    def fits(self, problem: Problem) -> bool:
        """True when `problem` is within this placer's size limits."""
        return self.refusal(problem) is None

    def refusal(self, problem: Problem) -> str | None:
        """Why `problem` is above this placer's size limits, or None when it fits."""
        if self.max_ops is not None and problem.n > self.max_ops:
            return (
                f"{self.name} is for at most {self.max_ops:,} ops, this problem has {problem.n:,}"
            )
        groups = len(np.unique(problem.groups))
        if self.max_groups is not None and groups > self.max_groups:
            return (
                f"{self.name} is for at most {self.max_groups:,} colocation groups, "
                f"this problem has {groups:,}"
            )
        return None


def _greedy(name: str, fn: Callable[[Problem], np.ndarray], portfolio: bool = True) -> Placer:
    """A budget-free placer."""
    return Placer(name, lambda problem, _budget: fn(problem), "greedy", portfolio)


def _incumbent(problem: Problem) -> np.ndarray | None:
    """HEFT's assignment, where the exact placers start (None when it breaks a memory cap)."""
    try:
        return heft(problem)
    except InfeasibleError:
        return None


def _exhaustive(problem: Problem, budget_s: float) -> Solution:
    deadline = time.perf_counter() + budget_s
    start = _incumbent(problem)
    found = exhaustive(problem, start, time_limit=deadline - time.perf_counter())
    return Solution(found.assignment, found.optimal)


def _milp(problem: Problem, budget_s: float) -> Solution:
    deadline = time.perf_counter() + budget_s
    start = _incumbent(problem)
    found = milp_placement(problem, time_limit=deadline - time.perf_counter(), incumbent=start)
    return Solution(found.assignment, found.optimal)


_REGISTERED = (
    _greedy("single", single_device),
    _greedy("tf_default", tf_default),
    _greedy("round_robin", round_robin_groups),
    _greedy("human", human),
    _greedy("m_topo", m_topo),
    _greedy("heft", heft),
    Placer("m_etf", lambda problem, _budget: m_etf(problem), "greedy", True, max_ops=MAX_ETF_OPS),
    Placer("m_sct", lambda problem, _budget: m_sct(problem), "lp", True, max_ops=MAX_SCT_OPS),
    _greedy("contiguous", contiguous, portfolio=False),
    Placer("search", search, "budget"),
    Placer("exhaustive", _exhaustive, "exponential", max_groups=MAX_EXHAUSTIVE_OPS),
    Placer("milp", _milp, "exponential", max_ops=MAX_MILP_OPS),
)

#: Every registered placer by name, in registration order.
PLACERS: dict[str, Placer] = {p.name: p for p in _REGISTERED}

#: The portfolio `search` starts from (each callable as `placer(problem)`).
BASELINES: dict[str, Placer] = {p.name: p for p in _REGISTERED if p.portfolio}
