"""Exact optimum of the scheduling model by mixed-integer programming (scipy's HiGHS).

Variables: x[g, d] (group g on device d), start s[i], makespan W, and for each pair of ops not
ordered by the graph an order bit y. Constraints: each group on one device it may use; memory
caps; W >= s[i] + p[i]; for each edge (u, v) and devices a != b, s[v] >= f[u] + c(u, a, b) when
u is on a and v on b; two ops on one single-slot device do not overlap (big-M on y).

The model lets the schedule choose the order on each device and ignores link contention and
shared thread pools, so its optimum is a lower bound on the simulator's best makespan (equal
when the simulator's ready-order rule is not the bottleneck). `milp_placement` returns both the
assignment and that bound. Sized for up to ~30 ops.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp
from scipy.sparse import lil_matrix

from devplace.autoplacer.graph import InfeasibleError, AutoPlacementError, Problem
from devplace.autoplacer.placers._common import Assigner

__all__ = ["MAX_MILP_OPS", "MilpResult", "milp_placement"]

MAX_MILP_OPS = 40


@dataclass
class MilpResult:
    """An assignment, the model's best makespan, its lower bound and whether it is proven."""

    assignment: np.ndarray
    value: float
    bound: float
    optimal: bool


def _ancestors(problem: Problem) -> list[set[int]]:
    anc: list[set[int]] = [set() for _ in range(problem.n)]
    for v in problem.topo:
        for u in problem.preds[v]:
            anc[v] |= anc[u] | {u}
    return anc


def milp_placement(
    problem: Problem, upper: float | None = None, time_limit: float = 60.0
) -> MilpResult:
    """Solve the placement-and-scheduling MILP; `upper` (a known makespan) tightens big-M."""
    if problem.n > MAX_MILP_OPS:
        raise AutoPlacementError(
            f"the MILP is for at most {MAX_MILP_OPS} ops; problem {problem.name!r} has "
            f"{problem.n}; hint: use strategy 'search'"
        )
    state = Assigner(problem)
    n, d = problem.n, problem.d
    groups = state.members
    ng = len(groups)
    label = state.label
    pmax = np.where(problem.allowed, problem.compute, 0).max(axis=1)
    big = (
        upper
        if upper is not None
        else float(
            pmax.sum() + (problem.link_alpha.max() + problem.link_beta.max() * problem.xfer).sum()
        )
    )
    anc = _ancestors(problem)
    single = [dv for dv in range(d) if problem.devices[dv].slots == 1]
    pairs = [
        (i, j)
        for i in range(n)
        for j in range(i + 1, n)
        if i not in anc[j] and j not in anc[i] and label[i] != label[j]
    ]
    same_group = [(i, j) for i in range(n) for j in range(i + 1, n) if label[i] == label[j]]
    pairs += same_group  # same group: same device, so they must not overlap either
    nx, ns = ng * d, n
    ix = lambda g, dv: g * d + dv  # noqa: E731
    i_s = nx
    i_w = nx + ns
    i_y = i_w + 1
    nv = i_y + len(pairs)
    rows: list[tuple[dict[int, float], float, float]] = []

    def add(coef: dict[int, float], lo: float, hi: float) -> None:
        """Append a row lo <= coef . z <= hi."""
        rows.append((coef, lo, hi))

    for g in range(ng):
        add({ix(g, dv): 1.0 for dv in range(d)}, 1.0, 1.0)
    for dv in range(d):
        cap = problem.devices[dv].memory
        if np.isfinite(cap):
            coef = {ix(g, dv): float(problem.memory[groups[g]].sum()) for g in range(ng)}
            add(coef, -np.inf, cap)

    def finish(i: int, sign: float) -> dict[int, float]:
        """sign * f_i as coefficients: s_i + sum_d p[i, d] x[g(i), d]."""
        coef = {i_s + i: sign}
        for dv in range(d):
            if problem.allowed[i, dv]:
                coef[ix(label[i], dv)] = (
                    coef.get(ix(label[i], dv), 0.0) + sign * problem.compute[i, dv]
                )
        return coef

    def plus(x: dict[int, float], y: dict[int, float]) -> dict[int, float]:
        """Sum of two sparse coefficient maps."""
        out = dict(x)
        for k, v in y.items():
            out[k] = out.get(k, 0.0) + v
        return out

    for i in range(n):
        add(plus({i_w: 1.0}, finish(i, -1.0)), 0.0, np.inf)
    for u, v in problem.edges:
        base = plus({i_s + v: 1.0}, finish(u, -1.0))
        add(base, 0.0, np.inf)
        if label[u] == label[v]:
            continue
        for a_ in range(d):
            for b in range(d):
                c = problem.comm(u, a_, b)
                if a_ == b or c <= 0 or not (problem.allowed[u, a_] and problem.allowed[v, b]):
                    continue
                # s_v - f_u - c x_ua - c x_vb >= -c
                coef = plus(base, {ix(label[u], a_): -c})
                coef = plus(coef, {ix(label[v], b): -c})
                add(coef, -c, np.inf)
    for k, (i, j) in enumerate(pairs):
        for dv in single:
            if not (problem.allowed[i, dv] and problem.allowed[j, dv]):
                continue
            xi, xj = ix(label[i], dv), ix(label[j], dv)
            # y=1: i before j: s_j - f_i >= -M (1 - y) - M (2 - x_i - x_j)
            c1 = plus({i_s + j: 1.0}, finish(i, -1.0))
            c1 = plus(c1, {i_y + k: -big, xi: -big, xj: -big})
            add(c1, -3 * big, np.inf)
            # y=0: j before i: s_i - f_j >= -M y - M (2 - x_i - x_j)
            c2 = plus({i_s + i: 1.0}, finish(j, -1.0))
            c2 = plus(c2, {i_y + k: big, xi: -big, xj: -big})
            add(c2, -2 * big, np.inf)
    a_mat = lil_matrix((len(rows), nv))
    lo, hi = np.empty(len(rows)), np.empty(len(rows))
    for r, (coef, l_, h_) in enumerate(rows):
        for col, val in coef.items():
            a_mat[r, col] = val
        lo[r], hi[r] = l_, h_
    lb, ub = np.zeros(nv), np.full(nv, np.inf)
    ub[:nx] = state.ok[[m[0] for m in groups]].reshape(-1).astype(float)
    ub[i_y:] = 1.0
    ub[i_w] = big
    lb[i_w] = problem.lower_bound()
    integrality = np.zeros(nv)
    integrality[:nx] = 1
    integrality[i_y:] = 1
    cost = np.zeros(nv)
    cost[i_w] = 1.0
    res = milp(
        cost,
        constraints=LinearConstraint(a_mat.tocsr(), lo, hi),
        integrality=integrality,
        bounds=Bounds(lb, ub),
        options={"time_limit": time_limit, "disp": False},
    )
    if res.x is None:
        raise InfeasibleError(
            f"MILP for problem {problem.name!r} found no feasible assignment ({res.message}); "
            "hint: check memory caps, or raise time_limit"
        )
    x = res.x[:nx].reshape(ng, d)
    assignment = np.empty(n, dtype=np.int64)
    for g in range(ng):
        assignment[groups[g]] = int(np.argmax(x[g]))
    bound = float(getattr(res, "mip_dual_bound", res.fun) or res.fun)
    return MilpResult(assignment, float(res.fun), bound, res.status == 0)
