"""HEFT (Topcuoglu et al. 2002), memory- and colocation-aware.

Ops in decreasing upward rank; each goes to the device giving the earliest finish time, using
the earliest idle gap on that device long enough for it (insertion policy). Devices that
cannot hold the op's colocation group are skipped; a placed group pins its other members.
"""

from __future__ import annotations

import numpy as np

from devplace.autoplacer.graph import Problem
from devplace.autoplacer.placers._common import Assigner, data_ready, upward_rank

__all__ = ["heft"]


def _earliest_gap(gaps: list[tuple[float, float]], ready: float, length: float) -> float:
    """Earliest start >= ready that fits `length` into one of the gaps (last gap is open)."""
    for lo, hi in gaps:
        begin = max(lo, ready)
        if begin + length <= hi:
            return begin
    raise AssertionError("the open last gap always fits")  # pragma: no cover


def _occupy(gaps: list[tuple[float, float]], begin: float, end: float) -> None:
    for k, (lo, hi) in enumerate(gaps):
        if lo <= begin and end <= hi:
            parts = [(lo, begin)] if begin > lo else []
            parts += [(end, hi)] if hi > end or hi == np.inf else []
            gaps[k : k + 1] = parts
            return


def heft(problem: Problem) -> np.ndarray:
    """Earliest-finish-time assignment in upward-rank order."""
    state = Assigner(problem)
    rank = upward_rank(problem)
    # rank[u] >= rank[v] on every edge u -> v, so ties broken by topological index keep
    # the order topological.
    order = sorted(range(problem.n), key=lambda i: (-rank[i], problem.topo_index[i]))
    finish = np.zeros(problem.n)
    gaps: list[list[tuple[float, float]]] = [[(0.0, np.inf)] for _ in range(problem.d)]
    for op in order:
        mask = state.feasible_mask(op)
        ready = data_ready(problem, op, state.assignment, finish)
        best, best_t, best_s = -1, np.inf, 0.0
        for dv in np.flatnonzero(mask):
            w = problem.compute[op, dv]
            s = _earliest_gap(gaps[dv], ready[dv], w)
            if s + w < best_t:
                best, best_t, best_s = int(dv), s + w, s
        state.put(op, best)
        finish[op] = best_t
        if best_t > best_s:
            _occupy(gaps[best], best_s, best_t)
    return state.result()
