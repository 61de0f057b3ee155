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

import numpy as np

from devplace.autoplacer.graph import AutoPlacementError, InfeasibleError, Problem, link_time
from devplace.autoplacer.placers._common import Assigner, Placer, Solution, device_classes
from devplace.autoplacer.placers.heft import heft, heft_start
from devplace.autoplacer.simulator import simulate

__all__ = ["MAX_EXHAUSTIVE_GROUPS", "PLACER", "exhaustive"]

#: The most colocation groups the search is for (it grows as devices ** groups).
MAX_EXHAUSTIVE_GROUPS = 14


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
        # comm[u][a][b]: u's output from device a to b (the bound asks it once per edge).
        self.comm = link_time(
            problem.link_alpha[None], problem.link_beta[None], problem.xfer[:, None, None]
        ).tolist()
        self.slots = [dev.slots for dev in problem.devices]
        self.all_slots = float(sum(self.slots))
        self.head = [0.0] * self.n

    def __call__(self, a: list[int], start: int) -> float:
        """max(longest path, per-device head + work + tail, all work / all slots)."""
        compute, fastest = self.compute, self.fastest
        comm = self.comm
        w = [compute[i][x] if x >= 0 else fastest[i] for i, x in enumerate(a)]
        head, preds, succs = self.head, self.preds, self.succs
        for v in self.topo[start:]:
            av, h = a[v], 0.0
            for u in preds[v]:
                t = head[u] + w[u]
                au = a[u]
                if au >= 0 and av >= 0 and au != av:
                    t += comm[u][au][av]
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
                    t += comm[u][au][av]
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


class _Search:
    """The branch and bound's state: groups in topological order with their ops, memory and
    allowed devices (the incumbent's first), device classes, the bound and the best so far."""

    def __init__(self, problem: Problem, incumbent: np.ndarray | None, deadline: float):
        state = Assigner(problem)
        groups = sorted(state.members, key=lambda m: int(problem.topo_index[m].min()))
        self.problem, self.deadline = problem, deadline
        self.starts = [int(problem.topo_index[m].min()) for m in groups]
        self.members = [m.tolist() for m in groups]
        self.mems = [float(problem.memory[m].sum()) for m in groups]
        self.allowed = [np.flatnonzero(state.ok[m[0]]).tolist() for m in groups]
        self.classes = device_classes(problem)
        self.bound = _Bound(problem)
        self.caps = (problem.caps * (1 + 1e-9)).tolist()
        self.best_a: np.ndarray | None = None
        self.best_t = np.inf
        if incumbent is not None and (s := simulate(problem, incumbent)).feasible:
            self.best_a = np.asarray(incumbent, dtype=np.int64).copy()
            self.best_t = s.makespan
            # the incumbent's device first: good completions are found, and cut with, early
            self.allowed = [
                sorted(devs, key=lambda dv, g=g: dv != self.best_a[g[0]])
                for devs, g in zip(self.allowed, self.members, strict=True)
            ]
        self.a = [-1] * problem.n
        self.used = [0.0] * problem.d
        self.count = [0] * problem.d  # groups on each device

    def visit(self, k: int) -> None:
        """Try every device for group k, recursing while the bound beats the best."""
        if time.perf_counter() > self.deadline:
            raise TimeoutError
        a = self.a
        if k == len(self.members):
            s = simulate(self.problem, np.array(a, dtype=np.int64))
            if s.feasible and s.makespan < self.best_t:
                self.best_a, self.best_t = np.array(a, dtype=np.int64), s.makespan
            return
        ops, mem = self.members[k], self.mems[k]
        opened: set[int] = set()
        for dv in self.allowed[k]:
            if not self.count[dv]:  # unused: try one device of its class only
                if self.classes[dv] in opened:
                    continue
                opened.add(self.classes[dv])
            if self.used[dv] + mem > self.caps[dv]:
                continue
            for i in ops:
                a[i] = dv
            self.used[dv] += mem
            self.count[dv] += 1
            if self.bound(a, self.starts[k]) < self.best_t * (1 - 1e-12):
                self.visit(k + 1)
            for i in ops:
                a[i] = -1
            self.used[dv] -= mem
            self.count[dv] -= 1


def exhaustive(
    problem: Problem, incumbent: np.ndarray | None = None, time_limit: float = 600.0
) -> Solution:
    """The assignment with the least simulated makespan among all feasible ones.

    `incumbent`: a known assignment to beat (its devices are tried first). Stopped by
    `time_limit` seconds, the best assignment found so far comes back with `optimal=False`;
    an AutoPlacementError says so when none was found by then, or when `problem` has more
    than `MAX_EXHAUSTIVE_GROUPS` colocation groups.
    """
    if (refusal := PLACER.refusal(problem)) is not None:
        raise AutoPlacementError(f"{refusal}; hint: use strategy 'milp' or 'search'")
    search = _Search(problem, incumbent, time.perf_counter() + time_limit)
    try:
        search.visit(0)
        optimal = True
    except TimeoutError:
        optimal = False
    if search.best_a is None:
        if optimal:
            heft(problem)  # none fits, so HEFT cannot either: its error names the op
            raise InfeasibleError(
                f"no assignment of problem {problem.name!r} fits the memory caps; "
                "hint: add devices or memory"
            )
        raise AutoPlacementError(
            f"exhaustive search found no complete assignment of problem {problem.name!r} "
            f"within its {time_limit:g} s budget; hint: raise the budget, or use strategy "
            "'search'"
        )
    return Solution(search.best_a, optimal)


def _from_heft(problem: Problem, budget_s: float) -> Solution:
    """`exhaustive` from HEFT's assignment, within `budget_s` seconds in all."""
    deadline = time.perf_counter() + budget_s
    start = heft_start(problem)
    return exhaustive(problem, start, time_limit=deadline - time.perf_counter())


PLACER = Placer(
    "exhaustive", _from_heft, "exponential", portfolio=False, max_groups=MAX_EXHAUSTIVE_GROUPS
)
