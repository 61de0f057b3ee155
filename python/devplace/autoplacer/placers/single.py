"""Single device: every op on the fastest device (ops without a kernel there fall back)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from devplace.autoplacer.graph import Problem
from devplace.autoplacer.placers._common import Assigner, Placer, Solution

__all__ = ["PLACER", "all_on", "single_device"]


def all_on(problem: Problem, preference: Sequence[int]) -> np.ndarray:
    """Each colocation group on the first device of `preference` all its members can use.

    Memory caps are ignored, as TensorFlow's placer ignores them; the simulator reports them.
    """
    state = Assigner(problem, check_memory=False)
    order = list(preference) + [i for i in range(problem.d) if i not in preference]
    for op in problem.topo:
        mask = state.feasible_mask(op)
        state.put(op, next(dv for dv in order if mask[dv]))
    return state.result()


def single_device(problem: Problem) -> np.ndarray:
    """All ops on the device with the least total compute time (CPUs as fallback)."""
    fallback = problem.min_compute()[:, None]
    total = np.where(problem.allowed, problem.compute, fallback * 1e3).sum(axis=0)
    best = int(np.argmin(total))
    cpus = [i for i, dev in enumerate(problem.devices) if dev.kind == "cpu"]
    return all_on(problem, [best, *cpus])


PLACER = Placer(
    "single", lambda problem, _budget: Solution(single_device(problem)), "greedy", portfolio=True
)
