"""Coarsening: a problem's ops merged into units (chains, cheap feeders, colocation groups), so
a graph of four branches is a problem of about six units that the placers move whole.

A unit is a colocation group of the coarse problem (`Problem.groups`), so every placer, the
search and the exact placers work on units unchanged, and an assignment of the coarse problem
is one of the original (same ops, devices and costs; only fewer groups). Rules, applied to the
graph of units until none applies (each merge keeps the graph of units acyclic):

- chain: a unit whose only successor unit has it as its only predecessor unit joins it;
- feeder: a unit with no predecessor unit and one successor unit (a variable and its read,
  a constant) joins that successor when its work is at most `FEEDER_SHARE` of the graph's.

Fan-outs and fan-ins are never merged, so parallel branches stay apart.
"""

from __future__ import annotations

import copy

import numpy as np

from devplace.autoplacer.graph import Problem

__all__ = ["FEEDER_SHARE", "can_merge", "coarsen", "units"]

#: The largest share of the graph's work (ops at their fastest) a feeder unit may have and
#: still join its consumer: variables and constants, never a branch that only starts there.
FEEDER_SHARE = 0.01


class _Units:
    """Union-find over ops, with each unit's predecessor and successor units."""

    def __init__(self, problem: Problem):
        _, labels = np.unique(problem.groups, return_inverse=True)
        self.parent = labels.tolist()  # a group's first label is its root: ops point at it
        self.root = list(range(int(labels.max()) + 1))
        self.work = np.bincount(labels, weights=problem.min_compute()).tolist()
        self.preds: list[set[int]] = [set() for _ in self.root]
        self.succs: list[set[int]] = [set() for _ in self.root]
        for u, v in problem.edges:
            a, b = self.parent[u], self.parent[v]
            if a != b:
                self.succs[a].add(b)
                self.preds[b].add(a)

    def find(self, x: int) -> int:
        """The unit that absorbed unit `x`."""
        while self.root[x] != x:
            self.root[x] = self.root[self.root[x]]
            x = self.root[x]
        return x

    def merge(self, a: int, b: int) -> None:
        """Unit `a` joins unit `b` (`a` is `b`'s only predecessor, or a feeder of it)."""
        self.root[a] = b
        self.work[b] += self.work[a]
        self.succs[a].discard(b)
        self.preds[b].discard(a)
        for p in self.preds[a]:
            self.succs[p].discard(a)
            self.succs[p].add(b)
            self.preds[b].add(p)
        for s in self.succs[a]:
            self.preds[s].discard(a)
            self.preds[s].add(b)
            self.succs[b].add(s)
        self.preds[a], self.succs[a] = set(), set()

    def merge_target(self, a: int, limit: float) -> int | None:
        """The unit `a` should join under the chain or feeder rule, or None."""
        if len(self.succs[a]) != 1:
            return None
        (b,) = self.succs[a]
        if len(self.preds[b]) == 1 or (not self.preds[a] and self.work[a] <= limit):
            return b
        return None


def can_merge(problem: Problem) -> bool:
    """False when coarsening would merge nothing, from degrees alone (cheap, so `auto` skips
    coarsening a random DAG): no colocation group of several ops, no edge from an op of one
    successor to an op of one predecessor, and no source of one successor (every merge
    starts from one of those)."""
    if problem.group_count() < problem.n:
        return True
    edges = problem.edge_array
    outdeg = np.bincount(edges[:, 0], minlength=problem.n)
    indeg = np.bincount(edges[:, 1], minlength=problem.n)
    chains = (outdeg[edges[:, 0]] == 1) & (indeg[edges[:, 1]] == 1)
    return bool(chains.any() or ((indeg == 0) & (outdeg == 1)).any())


def units(problem: Problem) -> np.ndarray:
    """Unit label per op (0..k-1, in order of first op): see the module's rules."""
    state = _Units(problem)
    limit = FEEDER_SHARE * float(sum(state.work))
    stack = list(range(len(state.root)))
    while stack:
        a = stack.pop()
        if state.find(a) != a:
            continue
        b = state.merge_target(a, limit)
        if b is None:
            continue
        state.merge(a, b)
        stack.append(b)
        stack.extend(state.preds[b])
    relabel: dict[int, int] = {}
    return np.array([relabel.setdefault(state.find(g), len(relabel)) for g in state.parent])


def coarsen(problem: Problem) -> Problem:
    """`problem` with its units (`units`) as its colocation groups (a shallow copy: the
    rest is shared, and not validated again)."""
    coarse = copy.copy(problem)
    coarse.groups = units(problem)
    return coarse
