"""m-TOPO (Baechi): contiguous topological chunks, one device after another.

Ops are taken in topological order; a device takes ops until it holds its even share of the
total work or of the memory (or is full), then the next device takes over. Only the fastest
device kind is used, as Baechi uses only the GPUs; ops that cannot run there fall back.
"""

from __future__ import annotations

import numpy as np

from devplace.autoplacer.graph import Problem
from devplace.autoplacer.placers._common import Assigner, Placer, Solution

__all__ = ["PLACER", "m_topo"]


def m_topo(problem: Problem) -> np.ndarray:
    """Even topological chunks of work and memory over the accelerators (or all devices)."""
    state = Assigner(problem)
    accs = [i for i, dev in enumerate(problem.devices) if dev.kind != "cpu"]
    devs = accs or list(range(problem.d))
    work = problem.min_compute()
    work_share = work.sum() / len(devs)
    mem_share = problem.memory.sum() / len(devs)
    k, load, mem = 0, 0.0, 0.0
    for op in problem.topo:
        if state.assignment[op] >= 0:
            continue
        mask = state.feasible_mask(op)
        group = state.members[state.label[op]]
        if k < len(devs) - 1 and (load >= work_share or 0 < mem_share <= mem or not mask[devs[k]]):
            k += 1
            load, mem = 0.0, 0.0
        dv = (
            devs[k]
            if mask[devs[k]]
            else next((x for x in devs[k:] if mask[x]), int(np.argmax(mask)))
        )
        if dv in devs and devs.index(dv) > k:
            k, load, mem = devs.index(dv), 0.0, 0.0
        state.put(op, dv)
        load += float(work[group].sum())
        mem += float(problem.memory[group].sum())
    return state.result()


PLACER = Placer(
    "m_topo", lambda problem, _budget: Solution(m_topo(problem)), "greedy", portfolio=True
)
