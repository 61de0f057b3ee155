"""The human heuristic: variables on the CPU, everything else on the accelerator.

When the model does not fit one accelerator, the rest fills accelerators in topological order,
the next one taking over when the current one is full, as one would split a model by hand.
"""

from __future__ import annotations

import numpy as np

from devplace.autoplacer.graph import Problem
from devplace.autoplacer.placers._common import Assigner, Placer, Solution

__all__ = ["PLACER", "human"]


def human(problem: Problem) -> np.ndarray:
    """Parameters (`Problem.is_param`) on CPU 0, the rest on accelerators filled in order."""
    state = Assigner(problem)
    accs = [i for i, dev in enumerate(problem.devices) if dev.kind != "cpu"]
    cpus = [i for i, dev in enumerate(problem.devices) if dev.kind == "cpu"]
    current = 0
    for op in problem.topo:
        if state.assignment[op] >= 0:
            continue
        mask = state.feasible_mask(op)
        prefs = cpus[:1] + accs if problem.is_param[op] else accs[current:] + cpus[:1]
        dv = next((x for x in prefs if mask[x]), int(np.argmax(mask)))
        if dv in accs and not problem.is_param[op]:
            current = accs.index(dv)
        state.put(op, dv)
    return state.result()


PLACER = Placer(
    "human", lambda problem, _budget: Solution(human(problem)), "greedy", portfolio=True
)
