"""The placer registry: every strategy once, behind one signature, with the facts `auto` needs.

A placer maps a `Problem` and a time budget in seconds to an assignment (device index per op);
placers never score themselves (`devplace.autoplacer.simulator.simulate` scores them all).
Adding a placer is one module here and one line in `_REGISTERED`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from devplace.autoplacer.graph import Problem
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

__all__ = ["BASELINES", "DEFAULT_BUDGET_S", "PLACERS", "SCALING", "Placer"]

#: How a placer's work grows with the problem: "greedy" (about linear in ops x devices),
#: "lp" (a linear programme), "budget" (stops at its time budget), "exponential" (exact).
SCALING = ("greedy", "lp", "budget", "exponential")


@dataclass(frozen=True)
class Placer:
    """A registered placement strategy.

    `run(problem, budget_s)` returns the assignment. `portfolio`: `search` starts from its
    result (the baselines). `max_groups` / `max_ops`: the largest number of colocation groups /
    ops it is meant for (None: any); `auto` and the benchmarks skip it above that. `scaling`:
    one of `SCALING`. `min_budget_s`: calls get at least this budget (the exact placers' time
    limit; `run` itself takes the budget as given).
    """

    name: str
    run: Callable[[Problem, float], np.ndarray]
    scaling: str
    portfolio: bool = False
    max_groups: int | None = None
    max_ops: int | None = None
    min_budget_s: float = 0.0

    def __call__(self, problem: Problem, budget_s: float = DEFAULT_BUDGET_S) -> np.ndarray:
        """The assignment this placer gives `problem` within `budget_s` seconds."""
        return self.run(problem, max(budget_s, self.min_budget_s))

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


def _exhaustive(problem: Problem, budget_s: float) -> np.ndarray:
    return exhaustive(problem, time_limit=budget_s)


def _milp(problem: Problem, budget_s: float) -> np.ndarray:
    return milp_placement(problem, time_limit=budget_s).assignment


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
    Placer(
        "exhaustive", _exhaustive, "exponential", max_groups=MAX_EXHAUSTIVE_OPS, min_budget_s=600
    ),
    Placer("milp", _milp, "exponential", max_ops=MAX_MILP_OPS, min_budget_s=60),
)

#: Every registered placer by name, in registration order.
PLACERS: dict[str, Placer] = {p.name: p for p in _REGISTERED}

#: The portfolio `search` starts from (each callable as `placer(problem)`).
BASELINES: dict[str, Placer] = {p.name: p for p in _REGISTERED if p.portfolio}
