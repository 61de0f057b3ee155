"""Round robin: colocation groups dealt to devices in turn, in topological order."""

from __future__ import annotations

import numpy as np

from devplace.autoplacer.graph import Problem
from devplace.autoplacer.placers._common import Assigner, Placer, Solution

__all__ = ["PLACER", "round_robin_groups"]


def round_robin_groups(problem: Problem) -> np.ndarray:
    """Each new group goes to the next device (cyclically) that may hold it."""
    state = Assigner(problem)
    nxt = 0
    for op in problem.topo:
        if state.assignment[op] >= 0:
            continue
        mask = state.feasible_mask(op)
        dv = next((nxt + k) % problem.d for k in range(problem.d) if mask[(nxt + k) % problem.d])
        state.put(op, dv)
        nxt = (dv + 1) % problem.d
    return state.result()


PLACER = Placer(
    "round_robin",
    lambda problem, _budget: Solution(round_robin_groups(problem)),
    "greedy",
    portfolio=True,
)
