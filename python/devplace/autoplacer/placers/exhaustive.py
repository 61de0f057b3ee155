"""Exact optimum by exhaustive search (branch and bound) for small graphs, within a deadline.

Colocation groups are assigned one at a time in topological order; devices that are
interchangeable are tried only up to the first unused one of their class; a branch is cut when
a lower bound reaches the best simulated makespan so far. The bound (`_Bound`) takes assigned
ops at their device's time and the others at their fastest, transfers only between two
assigned ops, and is the largest of: the longest path; per device, the earliest start of its
ops plus their work plus the shortest remaining path after one of them; and all work over all
slots. Every complete assignment is scored by the simulator, so a search that finishes returns
the simulator's optimum over all assignments; one stopped by its deadline returns the best
found so far, never worse than the incumbent it started from, marked not proven optimal.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from devplace.autoplacer.graph import AutoPlacementError, InfeasibleError, Problem
from devplace.autoplacer.placers._common import Assigner, device_classes
from devplace.autoplacer.simulator import simulate

__all__ = ["MAX_EXHAUSTIVE_OPS", "Exhaustive", "exhaustive"]

MAX_EXHAUSTIVE_OPS = 14


@dataclass
class Exhaustive:
    """The best assignment found and whether the search finished (so it is the optimum)."""

    assignment: np.ndarray
    optimal: bool


class _Bound:
    """A lower bound on the makespan of every completion of a partial assignment.

    Called with the assignment (device per op, -1: open) and `start`, a topological position
    such that every op before it is assigned and unchanged since the last call with a start at
    or below it: heads (earliest starts) before `start` are then reused, not recomputed.
    """

    def __init__(self, problem: Problem):
        self.n, self.d = problem.n, problem.d
        self.topo = [int(v) for v in problem.topo]
        self.preds = [list(problem.preds[v]) for v in range(self.n)]
        self.succs = [list(problem.succs[v]) for v in range(self.n)]
        self.compute = problem.compute.tolist()
        self.fastest = problem.min_compute().tolist()
        self.alpha, self.beta = problem.link_alpha.tolist(), problem.link_beta.tolist()
        self.xfer = problem.xfer.tolist()
        self.slots = [dev.slots for dev in problem.devices]
        self.all_slots = float(sum(self.slots))
        self.head = [0.0] * self.n

    def __call__(self, a: list[int], start: int) -> float:
        """max(longest path, per-device head + work + tail, all work / all slots)."""
        compute, fastest = self.compute, self.fastest
        alpha, beta, xfer = self.alpha, self.beta, self.xfer
        w = [compute[i][x] if x >= 0 else fastest[i] for i, x in enumerate(a)]
        head, preds, succs = self.head, self.preds, self.succs
        for v in self.topo[start:]:
            av, h = a[v], 0.0
            for u in preds[v]:
                t = head[u] + w[u]
                au = a[u]
                if au >= 0 and av >= 0 and au != av:
                    t += alpha[au][av] + beta[au][av] * xfer[u]
                if t > h:
                    h = t
            head[v] = h
        tail = [0.0] * self.n
        bound = sum(w) / self.all_slots
        for u in reversed(self.topo):
            au, t_u = a[u], 0.0
            for v in succs[u]:
                t = w[v] + tail[v]
                av = a[v]
                if au >= 0 and av >= 0 and au != av:
                    t += alpha[au][av] + beta[au][av] * xfer[u]
                if t > t_u:
                    t_u = t
            tail[u] = t_u
            if head[u] + w[u] + t_u > bound:
                bound = head[u] + w[u] + t_u
        first = [np.inf] * self.d
        work = [0.0] * self.d
        last = [np.inf] * self.d
        for i, x in enumerate(a):
            if x >= 0:
                if head[i] < first[x]:
                    first[x] = head[i]
                work[x] += w[i]
                if tail[i] < last[x]:
                    last[x] = tail[i]
        for x in range(self.d):
            if work[x] > 0:
                bound = max(bound, first[x] + work[x] / self.slots[x] + last[x])
        return bound


def exhaustive(
    problem: Problem, incumbent: np.ndarray | None = None, time_limit: float = 600.0
) -> Exhaustive:
    """The assignment with the least simulated makespan among all feasible ones.

    `incumbent`: a known assignment to beat (its devices are tried first). Stopped by
    `time_limit` seconds, the best assignment found so far comes back with `optimal=False`;
    an AutoPlacementError says so when none was found by then.
    """
    deadline = time.perf_counter() + time_limit
    state = Assigner(problem)
    groups = sorted(state.members, key=lambda m: int(problem.topo_index[m].min()))
    if problem.n > MAX_EXHAUSTIVE_OPS and len(groups) > MAX_EXHAUSTIVE_OPS:
        raise AutoPlacementError(
            f"exhaustive search is for at most {MAX_EXHAUSTIVE_OPS} ops (or colocation groups); "
            f"problem {problem.name!r} has {len(groups)}; hint: use strategy 'milp' or 'search'"
        )
    starts = [int(problem.topo_index[m].min()) for m in groups]
    members = [m.tolist() for m in groups]
    mems = [float(problem.memory[m].sum()) for m in groups]
    allowed = [np.flatnonzero(state.ok[m[0]]).tolist() for m in groups]
    classes = device_classes(problem)
    bound = _Bound(problem)
    caps = (problem.caps * (1 + 1e-9)).tolist()
    best_a, best_t = None, np.inf
    if incumbent is not None:
        s = simulate(problem, incumbent)
        if s.feasible:
            best_a, best_t = np.asarray(incumbent, dtype=np.int64).copy(), s.makespan
            # the incumbent's device first: good completions are found, and cut with, early
            allowed = [
                sorted(devs, key=lambda dv, g=g: dv != best_a[g[0]])
                for devs, g in zip(allowed, members, strict=True)
            ]
    a = [-1] * problem.n
    used = [0.0] * problem.d
    count = [0] * problem.d  # groups on each device

    def visit(k: int) -> None:
        """Try every device for group k, recursing while the bound beats the best."""
        nonlocal best_a, best_t
        if time.perf_counter() > deadline:
            raise TimeoutError
        if k == len(groups):
            s = simulate(problem, np.array(a, dtype=np.int64))
            if s.feasible and s.makespan < best_t:
                best_a, best_t = np.array(a, dtype=np.int64), s.makespan
            return
        ops, mem = members[k], mems[k]
        opened: set[int] = set()
        for dv in allowed[k]:
            if not count[dv]:  # unused: try one device of its class only
                if classes[dv] in opened:
                    continue
                opened.add(classes[dv])
            if used[dv] + mem > caps[dv]:
                continue
            for i in ops:
                a[i] = dv
            used[dv] += mem
            count[dv] += 1
            if bound(a, starts[k]) < best_t * (1 - 1e-12):
                visit(k + 1)
            for i in ops:
                a[i] = -1
            used[dv] -= mem
            count[dv] -= 1

    try:
        visit(0)
        optimal = True
    except TimeoutError:
        optimal = False
    if best_a is None:
        if optimal:
            raise InfeasibleError(
                f"no assignment of problem {problem.name!r} fits the memory caps; "
                "hint: add devices or memory"
            )
        raise AutoPlacementError(
            f"exhaustive search found no complete assignment of problem {problem.name!r} "
            f"within its {time_limit:g} s budget; hint: raise the budget, or use strategy "
            "'search'"
        )
    return Exhaustive(best_a, optimal)
