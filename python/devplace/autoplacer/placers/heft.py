"""HEFT (Topcuoglu et al. 2002), memory- and colocation-aware.

Ops in decreasing upward rank; each goes to the device giving the earliest finish time, using
the earliest idle gap on one of that device's slots long enough for it (insertion policy).
Devices that cannot hold the op's colocation group are skipped; a placed group pins its other
members.
"""

from __future__ import annotations

import numpy as np

from devplace.autoplacer.graph import InfeasibleError, Problem
from devplace.autoplacer.placers._common import (
    Assigner,
    Placer,
    ReadyTimes,
    Solution,
    Timelines,
    upward_rank,
)

__all__ = ["PLACER", "heft", "heft_start"]


def heft(problem: Problem) -> np.ndarray:
    """Earliest-finish-time assignment in upward-rank order."""
    state = Assigner(problem)
    rank = upward_rank(problem)
    # rank[u] >= rank[v] on every edge u -> v, so ties broken by topological index keep
    # the order topological.
    order = np.lexsort((problem.topo_index, -rank)).tolist()
    ready_at = ReadyTimes(problem)
    compute = problem.compute.tolist()
    timelines = Timelines(problem)
    for op in order:
        ready = ready_at(op)
        best, best_t, best_s, best_lane = -1, np.inf, 0.0, 0
        for dv in state.options(op):
            w = compute[op][dv]
            s, lane = timelines.earliest(dv, ready[dv], w, insert=True)
            if s + w < best_t:
                best, best_t, best_s, best_lane = dv, s + w, s, lane
        state.put(op, best)
        ready_at.place(op, best, best_t)
        if best_t > best_s:
            timelines.book(best, best_lane, best_s, best_t)
    return state.result()


def heft_start(problem: Problem) -> np.ndarray | None:
    """HEFT's assignment, where the exact placers start (None when it breaks a memory cap)."""
    try:
        return heft(problem)
    except InfeasibleError:
        return None


PLACER = Placer("heft", lambda problem, _budget: Solution(heft(problem)), "greedy", portfolio=True)
