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

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp
from scipy.sparse import lil_matrix

from devplace.autoplacer.graph import AutoPlacementError, InfeasibleError, Problem, link_time
from devplace.autoplacer.placers._common import Assigner, Placer, Solution
from devplace.autoplacer.placers.heft import heft, heft_start
from devplace.autoplacer.simulator import simulate

__all__ = ["MAX_MILP_OPS", "PLACER", "MilpResult", "milp_placement"]

#: The most ops the MILP is for (its order bits grow with the square of the ops).
MAX_MILP_OPS = 40


@dataclass
class MilpResult:
    """An assignment, the model's best makespan (inf: the solver found none in time), its
    lower bound, and whether the solver proved its optimum."""

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


class _Model:
    """The MILP's variables and rows: x[g, d] (group g on device d), start s[i], makespan W,
    one order bit y per unordered pair; rows `lo <= coef . z <= hi` with sparse coefs."""

    def __init__(self, problem: Problem, state: Assigner, pairs: list[tuple[int, int]]):
        self.problem = problem
        self.label = state.label
        self.n_groups = len(state.members)
        self.n_x = self.n_groups * problem.d
        self.start = self.n_x  # s[i] is column start + i
        self.makespan = self.n_x + problem.n
        self.order = self.makespan + 1  # y[k] is column order + k
        self.n_vars = self.order + len(pairs)
        self.rows: list[tuple[dict[int, float], float, float]] = []

    def x(self, group: int, device: int) -> int:
        """Column of x[group, device]."""
        return group * self.problem.d + device

    def add(self, coef: dict[int, float], lo: float, hi: float) -> None:
        """Append a row lo <= coef . z <= hi."""
        self.rows.append((coef, lo, hi))

    def finish(self, i: int, sign: float) -> dict[int, float]:
        """sign * f_i as coefficients: s_i + sum_d p[i, d] x[g(i), d]."""
        p = self.problem
        coef = {self.start + i: sign}
        for dv in range(p.d):
            if p.allowed[i, dv]:
                col = self.x(self.label[i], dv)
                coef[col] = coef.get(col, 0.0) + sign * p.compute[i, dv]
        return coef

    def matrix(self) -> LinearConstraint:
        """All rows as one sparse constraint."""
        mat = lil_matrix((len(self.rows), self.n_vars))
        lower, upper = np.empty(len(self.rows)), np.empty(len(self.rows))
        for r, (coef, lo, hi) in enumerate(self.rows):
            for col, val in coef.items():
                mat[r, col] = val
            lower[r], upper[r] = lo, hi
        return LinearConstraint(mat.tocsr(), lower, upper)


def _plus(x: dict[int, float], y: dict[int, float]) -> dict[int, float]:
    """Sum of two sparse coefficient maps."""
    out = dict(x)
    for k, v in y.items():
        out[k] = out.get(k, 0.0) + v
    return out


def _unordered_pairs(problem: Problem, label: np.ndarray) -> list[tuple[int, int]]:
    """Op pairs the graph does not order, then pairs in one group (same device, no overlap)."""
    n = problem.n
    anc = _ancestors(problem)
    pairs = [
        (i, j)
        for i in range(n)
        for j in range(i + 1, n)
        if i not in anc[j] and j not in anc[i] and label[i] != label[j]
    ]
    return pairs + [(i, j) for i in range(n) for j in range(i + 1, n) if label[i] == label[j]]


def _placement_rows(model: _Model, state: Assigner) -> None:
    """Each group on exactly one device; memory caps."""
    p = model.problem
    for g in range(model.n_groups):
        model.add({model.x(g, dv): 1.0 for dv in range(p.d)}, 1.0, 1.0)
    for dv in range(p.d):
        cap = p.devices[dv].memory
        if np.isfinite(cap):
            sizes = [float(p.memory[members].sum()) for members in state.members]
            model.add({model.x(g, dv): size for g, size in enumerate(sizes)}, -np.inf, cap)


def _precedence_rows(model: _Model) -> None:
    """W >= f_i; s_v >= f_u on each edge, plus the transfer time when u and v are apart."""
    p, label = model.problem, model.label
    for i in range(p.n):
        model.add(_plus({model.makespan: 1.0}, model.finish(i, -1.0)), 0.0, np.inf)
    for u, v in p.edges:
        base = _plus({model.start + v: 1.0}, model.finish(u, -1.0))
        model.add(base, 0.0, np.inf)
        if label[u] == label[v]:
            continue
        for src in range(p.d):
            for dst in range(p.d):
                c = p.comm(u, src, dst)
                if src == dst or c <= 0 or not (p.allowed[u, src] and p.allowed[v, dst]):
                    continue
                # s_v - f_u - c x_u,src - c x_v,dst >= -c
                coef = _plus(base, {model.x(label[u], src): -c})
                model.add(_plus(coef, {model.x(label[v], dst): -c}), -c, np.inf)


def _no_overlap_rows(model: _Model, pairs: list[tuple[int, int]], big: float) -> None:
    """Two ops on one single-slot device do not overlap (big-M on the order bit y)."""
    p, label = model.problem, model.label
    single = [dv for dv in range(p.d) if p.devices[dv].slots == 1]
    for k, (i, j) in enumerate(pairs):
        y = model.order + k
        for dv in single:
            if not (p.allowed[i, dv] and p.allowed[j, dv]):
                continue
            xi, xj = model.x(label[i], dv), model.x(label[j], dv)
            # y=1: i before j: s_j - f_i >= -M (1 - y) - M (2 - x_i - x_j)
            first = _plus({model.start + j: 1.0}, model.finish(i, -1.0))
            model.add(_plus(first, {y: -big, xi: -big, xj: -big}), -3 * big, np.inf)
            # y=0: j before i: s_i - f_j >= -M y - M (2 - x_i - x_j)
            second = _plus({model.start + i: 1.0}, model.finish(j, -1.0))
            model.add(_plus(second, {y: big, xi: -big, xj: -big}), -2 * big, np.inf)


#: `scipy.optimize.milp`'s status when HiGHS itself failed (not: infeasible, or out of time).
_SOLVE_ERROR = 4


def _big_m(problem: Problem, upper: float | None) -> float:
    """A makespan no optimum exceeds: `upper`, else all work plus every transfer."""
    if upper is not None:
        return upper
    slowest = np.where(problem.allowed, problem.compute, 0).max(axis=1)
    worst_link = link_time(problem.link_alpha.max(), problem.link_beta.max(), problem.xfer)
    return float(slowest.sum() + worst_link.sum())


def _solve(
    problem: Problem, state: Assigner, upper: float | None, seconds: float, presolve: bool = True
) -> Any:
    """HiGHS's result for the MILP of `problem` (see the module docstring), and the model."""
    pairs = _unordered_pairs(problem, state.label)
    big = _big_m(problem, upper)
    model = _Model(problem, state, pairs)
    _placement_rows(model, state)
    _precedence_rows(model)
    _no_overlap_rows(model, pairs, big)
    nv, nx = model.n_vars, model.n_x
    lb, ub = np.zeros(nv), np.full(nv, np.inf)
    ub[:nx] = state.ok[[m[0] for m in state.members]].reshape(-1).astype(float)
    ub[model.order :] = 1.0
    ub[model.makespan] = big
    lb[model.makespan] = problem.lower_bound()
    integrality = np.zeros(nv)
    integrality[:nx] = 1
    integrality[model.order :] = 1
    cost = np.zeros(nv)
    cost[model.makespan] = 1.0
    constraints = model.matrix()
    return milp(
        cost,
        constraints=constraints,
        integrality=integrality,
        bounds=Bounds(lb, ub),
        options={"time_limit": max(seconds, 0.0), "disp": False, "presolve": presolve},
    ), model


def milp_placement(
    problem: Problem,
    upper: float | None = None,
    time_limit: float = 60.0,
    incumbent: np.ndarray | None = None,
) -> MilpResult:
    """Solve the placement-and-scheduling MILP within `time_limit` seconds (model building
    included); `upper` (a known makespan) tightens big-M.

    Stopped by the limit, the solver's best assignment comes back with `optimal=False`, or
    `incumbent` where that simulates faster or the solver found none; with neither, an
    AutoPlacementError says so.
    """
    deadline = time.perf_counter() + time_limit
    if (refusal := PLACER.refusal(problem)) is not None:
        raise AutoPlacementError(f"{refusal}; hint: use strategy 'search'")
    state = Assigner(problem)
    res, model = _solve(problem, state, upper, deadline - time.perf_counter())
    if res.status == _SOLVE_ERROR:  # HiGHS's presolve fails on some small models: once without
        res, model = _solve(problem, state, upper, deadline - time.perf_counter(), presolve=False)
    bound = float(getattr(res, "mip_dual_bound", None) or res.fun or problem.lower_bound())
    fallback = None
    if incumbent is not None and simulate(problem, incumbent).feasible:
        fallback = np.asarray(incumbent, dtype=np.int64)
    if res.x is None:
        if fallback is not None and res.status == 1:  # the time limit, before any solution
            return MilpResult(fallback, np.inf, bound, False)
        if res.status == 1:
            raise AutoPlacementError(
                f"the MILP for problem {problem.name!r} found no assignment within its "
                f"{time_limit:g} s budget; hint: raise the budget, or use strategy 'search'"
            )
        heft(problem)  # none fits, so HEFT cannot either: its error names the op
        raise InfeasibleError(
            f"MILP for problem {problem.name!r} found no feasible assignment ({res.message}); "
            "hint: check memory caps"
        )
    x = res.x[: model.n_x].reshape(model.n_groups, problem.d)
    assignment = np.empty(problem.n, dtype=np.int64)
    for g, members in enumerate(state.members):
        assignment[members] = int(np.argmax(x[g]))
    optimal = res.status == 0
    if (
        not optimal
        and fallback is not None
        and simulate(problem, fallback).makespan < simulate(problem, assignment).makespan
    ):
        assignment = fallback
    return MilpResult(assignment, float(res.fun), bound, optimal)


def _from_heft(problem: Problem, budget_s: float) -> Solution:
    """`milp_placement` from HEFT's assignment, within `budget_s` seconds in all."""
    deadline = time.perf_counter() + budget_s
    start = heft_start(problem)
    found = milp_placement(problem, time_limit=deadline - time.perf_counter(), incumbent=start)
    return Solution(found.assignment, found.optimal)


PLACER = Placer("milp", _from_heft, "exponential", portfolio=False, max_ops=MAX_MILP_OPS)
