"""Exact optimum by exhaustive search (branch and bound) for small graphs.

Colocation groups are assigned one at a time in topological order; devices that are
interchangeable are tried only up to the first unused one of their class; a branch is cut when
a lower bound reaches the best simulated makespan so far. The bound (`_Bound`) takes assigned
ops at their device's time and the others at their fastest, transfers only between two
assigned ops, and is the largest of: the longest path; per device, the earliest start of its
ops plus their work plus the shortest remaining path after one of them; and all work over all
slots. Every complete assignment is scored by the simulator, so the result is the simulator's
optimum over all assignments.
"""

from __future__ import annotations

import time

import numpy as np

from devplace.autoplacer.graph import AutoPlacementError, InfeasibleError, Problem
from devplace.autoplacer.placers._common import Assigner, device_classes
from devplace.autoplacer.simulator import simulate

__all__ = ["MAX_EXHAUSTIVE_OPS", "exhaustive"]

MAX_EXHAUSTIVE_OPS = 14


class _Bound:
    """A lower bound on the makespan of every completion of a partial assignment (-1: open)."""

    def __init__(self, problem: Problem):
        self.n, self.d = problem.n, problem.d
        self.topo = list(problem.topo)
        self.preds, self.succs = problem.preds, problem.succs
        self.compute = problem.compute.tolist()
        self.fastest = problem.min_compute().tolist()
        self.alpha, self.beta = problem.link_alpha.tolist(), problem.link_beta.tolist()
        self.xfer = problem.xfer.tolist()
        self.slots = [dev.slots for dev in problem.devices]
        self.all_slots = float(sum(self.slots))

    def __call__(self, assignment: np.ndarray) -> float:
        """max(longest path, per-device head + work + tail, all work / all slots)."""
        a = assignment.tolist()
        w = [self.compute[i][x] if x >= 0 else self.fastest[i] for i, x in enumerate(a)]
        alpha, beta, xfer = self.alpha, self.beta, self.xfer

        def delay(u: int, v: int) -> float:
            au, av = a[u], a[v]
            if au < 0 or av < 0 or au == av:
                return 0.0
            return alpha[au][av] + beta[au][av] * xfer[u]

        head = [0.0] * self.n
        for v in self.topo:
            head[v] = max((head[u] + w[u] + delay(u, v) for u in self.preds[v]), default=0.0)
        tail = [0.0] * self.n
        for u in reversed(self.topo):
            tail[u] = max((delay(u, v) + w[v] + tail[v] for v in self.succs[u]), default=0.0)
        bound = max(max(h + x for h, x in zip(head, w, strict=True)), sum(w) / self.all_slots)
        first = [np.inf] * self.d
        work = [0.0] * self.d
        last = [np.inf] * self.d
        for i, x in enumerate(a):
            if x >= 0:
                first[x] = min(first[x], head[i])
                work[x] += w[i]
                last[x] = min(last[x], tail[i])
        for x in range(self.d):
            if work[x] > 0:
                bound = max(bound, first[x] + work[x] / self.slots[x] + last[x])
        return bound


def exhaustive(
    problem: Problem, incumbent: np.ndarray | None = None, time_limit: float = 600.0
) -> np.ndarray:
    """The assignment with the least simulated makespan among all feasible ones."""
    state = Assigner(problem)
    groups = sorted(state.members, key=lambda m: int(problem.topo_index[m].min()))
    if problem.n > MAX_EXHAUSTIVE_OPS and len(groups) > MAX_EXHAUSTIVE_OPS:
        raise AutoPlacementError(
            f"exhaustive search is for at most {MAX_EXHAUSTIVE_OPS} ops (or colocation groups); "
            f"problem {problem.name!r} has {len(groups)}; hint: use strategy 'milp' or 'search'"
        )
    classes = device_classes(problem)
    bound = _Bound(problem)
    caps = problem.caps * (1 + 1e-9)
    best_a, best_t = None, np.inf
    if incumbent is not None:
        s = simulate(problem, incumbent)
        if s.feasible:
            best_a, best_t = np.asarray(incumbent).copy(), s.makespan
    a = np.full(problem.n, -1, dtype=np.int64)
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
            if not np.any(a == dv):  # unused: try one device of its class only
                if classes[dv] in opened:
                    continue
                opened.add(classes[dv])
            mem = float(problem.memory[ops].sum())
            if used[dv] + mem > caps[dv]:
                continue
            a[ops] = dv
            used[dv] += mem
            if bound(a) < best_t * (1 - 1e-12):
                visit(k + 1)
            a[ops] = -1
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
