"""m-SCT (Baechi): Small Communication Time scheduling with an LP-chosen favourite child.

The LP relaxation of Hanen and Munier: x[u, v] in [0, 1] for each edge says how much v is
*not* run right after u on u's device; start[v] >= start[u] + p[u] + c[u] * x[u, v]; each op
has at most one child with x = 0 and at most one parent with x = 0; minimise the makespan.
Edges with x < 1/2 name favourite children, which then share their parent's device when it can
hold them; the rest is ETF (see m_etf). The LP is solved with scipy's HiGHS.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linprog
from scipy.sparse import coo_matrix

from devplace.autoplacer.graph import Problem
from devplace.autoplacer.placers._common import Placer, Solution, mean_comm
from devplace.autoplacer.placers.m_etf import etf_schedule

__all__ = ["PLACER", "MAX_SCT_OPS", "favourite_parents", "m_sct"]

#: m-SCT's size limit: ETF plus an LP over all edges (5.4 s at 5,000 ops, 3 inputs per op).
MAX_SCT_OPS = 2_000


def favourite_parents(problem: Problem) -> np.ndarray:
    """Per op, the parent whose favourite child it is in the SCT LP (or -1)."""
    n, edges = problem.n, problem.edges
    m = len(edges)
    if m == 0:
        return np.full(n, -1)
    p = problem.min_compute()
    c = mean_comm(problem)
    # Variables: start[0..n), x[0..m), makespan w.  All constraints as A_ub @ z <= b_ub.
    nv = n + m + 1
    rows, cols, vals, rhs = [], [], [], []
    r = 0
    for e, (u, v) in enumerate(edges):  # s_u - s_v + c_u x_e <= -p_u
        rows += [r, r, r]
        cols += [u, v, n + e]
        vals += [1.0, -1.0, c[u]]
        rhs.append(-p[u])
        r += 1
    for side in (0, 1):  # sum over out (in) edges of -x <= 1 - degree
        buckets: dict[int, list[int]] = {}
        for e, edge in enumerate(edges):
            buckets.setdefault(edge[side], []).append(e)
        for es in buckets.values():
            rows += [r] * len(es)
            cols += [n + e for e in es]
            vals += [-1.0] * len(es)
            rhs.append(1.0 - len(es))
            r += 1
    for u in range(n):  # s_u - w <= -p_u
        rows += [r, r]
        cols += [u, nv - 1]
        vals += [1.0, -1.0]
        rhs.append(-p[u])
        r += 1
    a_ub = coo_matrix((vals, (rows, cols)), shape=(r, nv)).tocsr()
    cost = np.zeros(nv)
    cost[-1] = 1.0
    bounds = [(0, None)] * n + [(0, 1)] * m + [(0, None)]
    res = linprog(cost, A_ub=a_ub, b_ub=rhs, bounds=bounds, method="highs")
    if res.status != 0:
        raise RuntimeError(f"m-SCT LP failed: {res.message}")  # pragma: no cover
    parent = np.full(n, -1)
    taken = np.zeros(n, dtype=bool)
    for e in np.argsort(res.x[n : n + m], kind="stable"):
        u, v = edges[e]
        if res.x[n + e] < 0.5 and parent[v] < 0 and not taken[u]:
            parent[v], taken[u] = u, True
    return parent


def m_sct(problem: Problem) -> np.ndarray:
    """ETF where favourite children follow their parent's device."""
    return etf_schedule(problem, prefer=favourite_parents(problem))


PLACER = Placer(
    "m_sct",
    lambda problem, _budget: Solution(m_sct(problem)),
    "lp",
    portfolio=True,
    max_ops=MAX_SCT_OPS,
)
