"""Exact optimum by exhaustive search (branch and bound) for small graphs.

Colocation groups are assigned one at a time in topological order; devices that are
interchangeable are tried only up to the first unused one of their class; a branch is cut when
a lower bound (the busiest device's assigned work, or the longest path with assigned costs and
fastest times elsewhere) reaches the best simulated makespan so far. Every complete assignment
is scored by the simulator, so the result is the simulator's optimum over all assignments.
"""

from __future__ import annotations

import time

import numpy as np

from devplace.autoplace.graph import InfeasibleError, PlacementError, Problem
from devplace.autoplace.placers._common import Assigner, device_classes
from devplace.autoplace.simulator import simulate

__all__ = ["MAX_EXHAUSTIVE_OPS", "exhaustive"]

MAX_EXHAUSTIVE_OPS = 14


def _path_bound(problem: Problem, a: np.ndarray, fastest: np.ndarray) -> float:
    w = np.where(a >= 0, problem.compute[np.arange(problem.n), np.maximum(a, 0)], fastest)
    finish = np.zeros(problem.n)
    for v in problem.topo:
        t = 0.0
        for u in problem.preds[v]:
            delay = problem.comm(u, a[u], a[v]) if a[u] >= 0 and a[v] >= 0 else 0.0
            t = max(t, finish[u] + delay)
        finish[v] = t + w[v]
    return float(finish.max())


def exhaustive(
    problem: Problem, incumbent: np.ndarray | None = None, time_limit: float = 600.0
) -> np.ndarray:
    """The assignment with the least simulated makespan among all feasible ones."""
    state = Assigner(problem)
    groups = sorted(state.members, key=lambda m: int(problem.topo_index[m].min()))
    if problem.n > MAX_EXHAUSTIVE_OPS and len(groups) > MAX_EXHAUSTIVE_OPS:
        raise PlacementError(
            f"exhaustive search is for at most {MAX_EXHAUSTIVE_OPS} ops (or colocation groups); "
            f"problem {problem.name!r} has {len(groups)}; hint: use strategy 'milp' or 'search'"
        )
    classes = device_classes(problem)
    fastest = problem.min_compute()
    slots = np.array([dev.slots for dev in problem.devices], dtype=float)
    caps = problem.caps * (1 + 1e-9)
    best_a, best_t = None, np.inf
    if incumbent is not None:
        s = simulate(problem, incumbent)
        if s.feasible:
            best_a, best_t = np.asarray(incumbent).copy(), s.makespan
    a = np.full(problem.n, -1, dtype=np.int64)
    load = np.zeros(problem.d)
    used = np.zeros(problem.d)
    deadline = time.perf_counter() + time_limit

    def visit(k: int) -> None:
        """Try every device for group k, recursing while the bound beats the best."""
        nonlocal best_a, best_t
        if time.perf_counter() > deadline:
            raise TimeoutError
        if k == len(groups):
            s = simulate(problem, a)
            if s.feasible and s.makespan < best_t:
                best_a, best_t = a.copy(), s.makespan
            return
        ops = groups[k]
        opened: set[int] = set()
        for dv in range(problem.d):
            if not state.ok[ops[0], dv]:
                continue
            fresh = load[dv] == 0 and used[dv] == 0 and not np.any(a == dv)
            if fresh:
                if classes[dv] in opened:
                    continue
                opened.add(classes[dv])
            mem = float(problem.memory[ops].sum())
            if used[dv] + mem > caps[dv]:
                continue
            work = float(problem.compute[ops, dv].sum())
            a[ops] = dv
            load[dv] += work
            used[dv] += mem
            if load[dv] / slots[dv] < best_t and _path_bound(problem, a, fastest) < best_t * (
                1 - 1e-12
            ):
                visit(k + 1)
            a[ops] = -1
            load[dv] -= work
            used[dv] -= mem

    try:
        visit(0)
    except TimeoutError:
        pass
    if best_a is None:
        raise InfeasibleError(
            f"no assignment of problem {problem.name!r} fits the memory caps; "
            "hint: add devices or memory"
        )
    return best_a
