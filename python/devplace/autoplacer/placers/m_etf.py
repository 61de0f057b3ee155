"""m-ETF (Baechi's memory-aware Earliest Task First), for heterogeneous devices.

List scheduling: repeatedly take, among the ops whose inputs are all scheduled, the one that
can start earliest on its best device (the device giving it the earliest finish among those
that can still hold its colocation group); ties go to the higher upward rank. `prefer` lets
m-SCT pin an op to the device of a chosen parent when that device can take it.
"""

from __future__ import annotations

import numpy as np

from devplace.autoplacer.graph import InfeasibleError, Problem
from devplace.autoplacer.placers._common import (
    Assigner,
    Placer,
    Solution,
    Timelines,
    data_ready,
    upward_rank,
)

__all__ = ["MAX_ETF_OPS", "PLACER", "etf_schedule", "m_etf"]

#: m-ETF's size limit: it compares every ready op on every device at each step (quadratic in
#: ops on wide graphs: 1.5 s at 5,000 ops).
MAX_ETF_OPS = 3_000


def etf_schedule(problem: Problem, prefer: np.ndarray | None = None) -> np.ndarray:
    """ETF list scheduling; `prefer[v]` (or -1) names a parent whose device v should share."""
    state = Assigner(problem)
    rank = upward_rank(problem)
    timelines = Timelines(problem)
    finish = np.zeros(problem.n)
    indeg = np.array([len(p) for p in problem.preds])
    ready: list[int] = [v for v in range(problem.n) if indeg[v] == 0]
    data_ready_at = {v: np.zeros(problem.d) for v in ready}
    caps = state.caps * (1 + 1e-9)
    while ready:
        rows = np.array(ready)
        placed = state.assignment[rows]
        mask = state.ok[rows] & (
            state.used[None, :] + state.group_mem[state.label[rows]][:, None] <= caps[None, :]
        )
        mask[placed >= 0] = False
        mask[np.flatnonzero(placed >= 0), placed[placed >= 0]] = True
        if prefer is not None:
            par = prefer[rows]
            for r in np.flatnonzero(par >= 0):
                dv = state.assignment[par[r]]
                if mask[r, dv]:
                    mask[r] = False
                    mask[r, dv] = True
        empty = np.flatnonzero(~mask.any(axis=1))
        if empty.size:
            state.feasible_mask(int(rows[empty[0]]))  # raises with a clear message
            raise InfeasibleError("no device can hold the ready ops")  # pragma: no cover
        start = np.maximum(
            np.stack([data_ready_at[v] for v in ready]), timelines.free_at()[None, :]
        )
        end = np.where(mask, start + problem.compute[rows], np.inf)
        best_dev = np.argmin(end, axis=1)
        best_start = start[np.arange(len(rows)), best_dev]
        key = np.lexsort((problem.topo_index[rows], -rank[rows], best_start))
        r = int(key[0])
        op, dv = int(rows[r]), int(best_dev[r])
        state.put(op, dv)
        finish[op] = end[r, dv]
        begin, lane = timelines.earliest(dv, 0.0, 0.0, insert=False)
        timelines.book(dv, lane, begin, finish[op])
        ready.pop(r)
        del data_ready_at[op]
        for v in problem.succs[op]:
            indeg[v] -= 1
            if indeg[v] == 0:
                ready.append(v)
                data_ready_at[v] = data_ready(problem, v, state.assignment, finish)
    return state.result()


def m_etf(problem: Problem) -> np.ndarray:
    """Memory-aware ETF placement."""
    return etf_schedule(problem)


PLACER = Placer(
    "m_etf",
    lambda problem, _budget: Solution(m_etf(problem)),
    "greedy",
    portfolio=True,
    max_ops=MAX_ETF_OPS,
)
