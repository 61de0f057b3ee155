"""HEFT (Topcuoglu et al. 2002), memory- and colocation-aware.

Ops in decreasing upward rank; each goes to the device giving the earliest finish time, using
the earliest idle gap on one of that device's slots long enough for it (insertion policy).
Devices that cannot hold the op's colocation group are skipped; a placed group pins its other
members.
"""

from __future__ import annotations

import bisect

import numpy as np

from devplace.autoplacer.graph import InfeasibleError, Problem
from devplace.autoplacer.placers._common import (
    Assigner,
    Placer,
    Solution,
    Timelines,
    gap_start,
    upward_rank,
)

__all__ = ["PLACER", "heft", "heft_start"]


def heft(problem: Problem) -> np.ndarray:
    """Earliest-finish-time assignment in upward-rank order."""
    # On plain lists, one loop: a million ops take a few seconds where NumPy's per-call cost,
    # or a call per op and device, would take minutes.
    state = Assigner(problem)
    rank = upward_rank(problem)
    # rank[u] >= rank[v] on every edge u -> v, so ties broken by topological index keep
    # the order topological.
    order = np.lexsort((problem.topo_index, -rank)).tolist()
    compute, xfer, preds = problem.compute.tolist(), problem.xfer.tolist(), problem.preds
    # Per source device, (alpha, beta) of the link to each device.
    links = [
        list(zip(alpha, beta, strict=True))
        for alpha, beta in zip(problem.link_alpha.tolist(), problem.link_beta.tolist(), strict=True)
    ]
    # When each placed op's output can be on each device: an op's ready times are the
    # devicewise maximum of its inputs' (a few list operations per op, not one per edge and
    # device).
    no_inputs = [0.0] * problem.d
    arrival = [no_inputs] * problem.n
    timelines = Timelines(problem)
    # A device of one slot has one lane: its gaps are searched here, without a call to
    # `earliest` (a million ops make four million of them).
    one_lane = [lanes[0] if len(lanes) == 1 else None for lanes in timelines.lanes]
    options, put, book = state.options, state.put, timelines.book
    for op in order:
        inputs = preds[op]
        if len(inputs) > 1:
            ready = list(map(max, *[arrival[u] for u in inputs]))
        else:
            ready = arrival[inputs[0]] if inputs else no_inputs
        work = compute[op]
        best, best_t, best_s, best_lane = -1, np.inf, 0.0, 0
        for dv in options(op):
            w, r, lane = work[dv], ready[dv], one_lane[dv]
            if lane is None:
                s, k = timelines.earliest(dv, r, w, insert=True)
            else:  # `gap_start`, its first gap here: most ops fit the first they may use
                starts, ends = lane
                i = bisect.bisect_left(ends, r)
                s, k = starts[i] if starts[i] > r else r, 0
                if s + w > ends[i]:
                    s = gap_start(starts, ends, r, w)
            if s + w < best_t:
                best, best_t, best_s, best_lane = dv, s + w, s, k
        put(op, best)
        size = xfer[op]
        # `graph.link_time` written out: no call per op and device (see above)
        out = [best_t + alpha + beta * size for alpha, beta in links[best]]
        out[best] = best_t
        arrival[op] = out
        if best_t > best_s:
            book(best, best_lane, best_s, best_t)
    return state.result()


def heft_start(problem: Problem) -> np.ndarray | None:
    """HEFT's assignment, where the exact placers start (None when it breaks a memory cap)."""
    try:
        return heft(problem)
    except InfeasibleError:
        return None


PLACER = Placer("heft", lambda problem, _budget: Solution(heft(problem)), "greedy", portfolio=True)
