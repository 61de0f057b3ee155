"""What the placers share: how a placer is declared, group-aware assignment with memory
accounting, and ranks."""

from __future__ import annotations

import bisect
import functools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from devplace.autoplacer.graph import AutoPlacementError, InfeasibleError, Problem, link_time

__all__ = [
    "DEFAULT_BUDGET_S",
    "SCALING",
    "Assigner",
    "Placer",
    "Solution",
    "Timelines",
    "data_ready",
    "device_classes",
    "gap_start",
    "mean_comm",
    "upward_rank",
]

#: Seconds a placement call may spend by default (see `search.check_budget` for the margin).
DEFAULT_BUDGET_S = 0.8

#: How a placer's work grows with the problem: "greedy" (about linear in ops x devices),
#: "lp" (a linear programme), "budget" (stops at its time budget), "exponential" (exact).
SCALING = ("greedy", "lp", "budget", "exponential")


@dataclass(frozen=True)
class Solution:
    """A placer's assignment and whether it is proven optimal: True or False for the exact
    placers (False: stopped by its budget, the best found so far), None for the others, which
    claim nothing."""

    assignment: np.ndarray
    optimal: bool | None = None


@dataclass(frozen=True)
class Placer:
    """A placement strategy, declared once as `PLACER` in its own module (see `placers`).

    `run(problem, budget_s)` returns a `Solution` within the budget. `portfolio`: `search`
    starts from this placer's result. `max_ops` / `max_groups`: the largest number of ops /
    colocation groups it is meant for (None: any); `auto`, `search` and the benchmarks skip it
    above that and naming it then is refused. `scaling`: one of `SCALING`.
    """

    name: str
    run: Callable[[Problem, float], Solution]
    scaling: str
    portfolio: bool
    max_ops: int | None = None
    max_groups: int | None = None

    def __post_init__(self) -> None:
        if self.scaling not in SCALING:
            raise AutoPlacementError(
                f"placer {self.name!r}: scaling {self.scaling!r} is not one of {SCALING}"
            )

    def solve(self, problem: Problem, budget_s: float = DEFAULT_BUDGET_S) -> Solution:
        """This placer's `Solution` for `problem` within `budget_s` seconds; an
        AutoPlacementError when `problem` is above its size limits."""
        refusal = self.refusal(problem)
        if refusal is not None:
            raise AutoPlacementError(f"{refusal}; hint: use strategy 'auto' or 'search'")
        return self.run(problem, budget_s)

    def __call__(self, problem: Problem, budget_s: float = DEFAULT_BUDGET_S) -> np.ndarray:
        """The assignment this placer gives `problem` within `budget_s` seconds."""
        return self.solve(problem, budget_s).assignment

    def fits(self, problem: Problem) -> bool:
        """True when `problem` is within this placer's size limits."""
        return self.refusal(problem) is None

    def refusal(self, problem: Problem) -> str | None:
        """Why `problem` is above this placer's size limits, or None when it fits."""
        if self.max_ops is not None and problem.n > self.max_ops:
            return (
                f"{self.name} is for at most {self.max_ops:,} ops, this problem has {problem.n:,}"
            )
        groups = problem.group_count()
        if self.max_groups is not None and groups > self.max_groups:
            return (
                f"{self.name} is for at most {self.max_groups:,} colocation groups, "
                f"this problem has {groups:,}"
            )
        return None


class Assigner:
    """A partial assignment that places whole colocation groups and tracks memory per device.

    `assignment` (device per op, -1: not yet) and `used` (memory per device) are NumPy arrays
    until the first call of `options`; from then on the state is kept in lists (a list
    scheduler's per-op calls would otherwise pay NumPy's per-call cost), and the arrays are
    brought up to date by `mask`, `feasible_mask` and `result`.
    """

    def __init__(self, problem: Problem, check_memory: bool = True):
        self.p = problem
        self.assignment = np.full(problem.n, -1, dtype=np.int64)
        _, self.label = np.unique(problem.groups, return_inverse=True)
        self.group_mem = np.bincount(self.label, weights=problem.memory)
        self.ok = problem.group_allowed()
        self.caps = problem.caps if check_memory else np.full(problem.d, np.inf)
        self.used = np.zeros(problem.d)
        self._ok_lists: list[list[int]] | None = None
        self._need: list[float] = []
        self._room: list[float] = []
        self._used: list[float] = []
        self._where: list[int] = []  # `assignment` as a list
        self._alone = int(self.label.max()) + 1 == problem.n  # every group one op
        self._capped = bool(np.isfinite(self.caps).any())
        nowhere = np.flatnonzero(~self.ok.any(axis=1))
        if nowhere.size:
            raise InfeasibleError(
                f"op {problem.names[nowhere[0]]!r} and its colocation group have no device they "
                "can all run on; hint: check kernels, pins and colocation constraints"
            )

    @functools.cached_property
    def members(self) -> list[np.ndarray]:
        """The ops of each colocation group (by label; built when first asked)."""
        return self.p.group_members()

    def options(self, op: int) -> list[int]:
        """The devices of `feasible_mask(op)`, as a list, from lists (list schedulers ask once
        per op, and NumPy's per-call cost would dominate); raises as it does when empty."""
        if self._ok_lists is None:
            self._ok_lists = _true_columns(self.ok)
            self._need = self.group_mem[self.label].tolist()
            self._room = (self.caps * (1 + 1e-9)).tolist()
            self._used = self.used.tolist()
            self._where = self.assignment.tolist()
        placed = self._where[op]
        if placed >= 0:
            return [placed]
        allowed = self._ok_lists[op]
        if self._capped:
            used, need, room = self._used, self._need[op], self._room
            allowed = [j for j in allowed if used[j] + need <= room[j]]
        if not allowed:
            self.feasible_mask(op)  # raises, naming the op
        return allowed

    def mask(self, op: int) -> np.ndarray:
        """Devices op may go to now: its group's device if placed, else allowed ones that fit."""
        self._sync()
        placed = self.assignment[op]
        if placed >= 0:
            m = np.zeros(self.p.d, dtype=bool)
            m[placed] = True
            return m
        return self.ok[op] & (self.used + self.group_mem[self.label[op]] <= self.caps * (1 + 1e-9))

    def feasible_mask(self, op: int) -> np.ndarray:
        """`mask(op)`, raising InfeasibleError naming the op when it is empty."""
        m = self.mask(op)
        if not m.any():
            need = self.group_mem[self.label[op]]
            names = [x.name for x in self.p.devices]
            raise InfeasibleError(
                f"op {self.p.names[op]!r} (with its colocation group, {need:.4g} bytes) fits on "
                f"no device it may use; free memory: "
                f"{dict(zip(names, (self.caps - self.used).tolist(), strict=True))}"
                "; hint: add devices or memory, or relax pins"
            )
        return m

    def put(self, op: int, device: int) -> None:
        """Assign op's whole colocation group to device."""
        if self._ok_lists is None:
            if self.assignment[op] >= 0:
                return
            label = self.label[op]
            self.assignment[self.members[label]] = device
            self.used[device] += self.group_mem[label]
            return
        if self._where[op] >= 0:
            return
        if self._alone:
            self._where[op] = device
        else:
            for member in self.members[self.label[op]].tolist():
                self._where[member] = device
        self._used[device] += self._need[op]

    def _sync(self) -> None:
        """`assignment` and `used` from the lists `options` and `put` keep (if in use)."""
        if self._ok_lists is not None:
            self.assignment[:] = self._where
            self.used[:] = self._used

    def result(self) -> np.ndarray:
        """The complete assignment."""
        self._sync()
        if np.any(self.assignment < 0):
            raise AssertionError("placer left ops unassigned")
        return self.assignment.copy()


def _true_columns(mask: np.ndarray) -> list[list[int]]:
    """Per row of a boolean matrix, the columns where it is True; rows alike share one list
    (found by their bits as bytes: a million rows take 0.2 s, not 1.3 s row by row)."""
    packed = np.packbits(mask, axis=1)
    width, raw = packed.shape[1], packed.tobytes()
    keys = [raw[i : i + width] for i in range(0, len(raw), width)]
    row_of = dict(zip(keys, range(len(keys)), strict=True))  # one row of each pattern
    columns = {key: np.flatnonzero(mask[i]).tolist() for key, i in row_of.items()}
    return list(map(columns.__getitem__, keys))


def mean_comm(problem: Problem) -> np.ndarray:
    """Average transfer time of each op's output over ordered pairs of distinct devices."""
    d = problem.d
    if d < 2:
        return np.zeros(problem.n)
    off = ~np.eye(d, dtype=bool)
    return link_time(problem.link_alpha[off].mean(), problem.link_beta[off].mean(), problem.xfer)


def upward_rank(problem: Problem) -> np.ndarray:
    """HEFT's upward rank: mean compute plus the longest mean-cost path to an exit."""
    w = np.where(problem.allowed, problem.compute, np.nan)
    mean_w, c = np.nanmean(w, axis=1), mean_comm(problem)
    rank = problem.longest_paths(
        lambda ops, m, has: mean_w[ops] + np.where(has, c[ops] + m, 0.0), backward=True
    )
    if rank is not None:
        return rank
    mean_w, c, rank, succs = mean_w.tolist(), c.tolist(), [0.0] * problem.n, problem.succs
    for u in reversed(problem.topo):  # long chains: op by op, on lists
        rank[u] = mean_w[u] + (c[u] + max([rank[v] for v in succs[u]]) if succs[u] else 0.0)
    return np.array(rank)


def data_ready(problem: Problem, op: int, assignment: np.ndarray, finish: np.ndarray) -> np.ndarray:
    """Earliest time op's inputs can be on each device, given its placed predecessors."""
    ready = np.zeros(problem.d)
    for u in problem.preds[op]:
        src = assignment[u]
        arrive = finish[u] + link_time(
            problem.link_alpha[src], problem.link_beta[src], problem.xfer[u]
        )
        arrive[src] = finish[u]
        np.maximum(ready, arrive, out=ready)
    return ready


def _swappable(problem: Problem, i: int, j: int) -> bool:
    """True when exchanging devices i and j leaves the problem unchanged."""
    di, dj = problem.devices[i], problem.devices[j]
    if (di.kind, di.memory, di.slots, di.pool, di.host) != (
        dj.kind,
        dj.memory,
        dj.slots,
        dj.pool,
        dj.host,
    ):
        return False
    if not np.array_equal(problem.compute[:, i], problem.compute[:, j]):
        return False
    perm = np.arange(problem.d)
    perm[[i, j]] = [j, i]
    for m in (problem.link_alpha, problem.link_beta):
        off = ~np.eye(problem.d, dtype=bool)
        if not np.array_equal(m[np.ix_(perm, perm)][off], m[off]):
            return False
    return True


def device_classes(problem: Problem) -> list[int]:
    """Class id per device; devices of one class are interchangeable in the problem."""
    reps: list[int] = []
    out = []
    for j in range(problem.d):
        for c, i in enumerate(reps):
            if _swappable(problem, i, j):
                out.append(c)
                break
        else:
            out.append(len(reps))
            reps.append(j)
    return out


class Timelines:
    """Idle gaps on each device's slots, for the list schedulers (HEFT, m-ETF).

    Each device has `slots` lanes; a lane runs one op at a time and is kept as its sorted idle
    gaps (two lists: their starts and their ends), the last one open-ended (few gaps stay
    open, so lookups stay near constant time where a list of booked ops made HEFT quadratic).
    `earliest` finds where an op of a given length can start no sooner than `ready`: in the
    earliest idle gap of any lane (`insert=True`, HEFT's insertion policy) or after the lane
    that frees first (`insert=False`, ETF). `book` records the op there.
    """

    def __init__(self, problem: Problem):
        self.lanes: list[list[tuple[list[float], list[float]]]] = [
            [([0.0], [np.inf]) for _ in range(dev.slots)] for dev in problem.devices
        ]

    def free_at(self) -> np.ndarray:
        """Per device, when its first lane becomes free for good."""
        return np.array([min(starts[-1] for starts, _ in dev) for dev in self.lanes])

    def earliest(self, dv: int, ready: float, length: float, insert: bool) -> tuple[float, int]:
        """(start, lane) of the earliest placement of an op of `length` on device dv."""
        lanes = self.lanes[dv]
        if not insert:
            ends = [starts[-1] for starts, _ in lanes]
            k = int(np.argmin(ends))
            return max(ready, ends[k]), k
        if len(lanes) == 1:
            return gap_start(*lanes[0], ready, length), 0
        return min((gap_start(*lane, ready, length), k) for k, lane in enumerate(lanes))

    def book(self, dv: int, lane: int, start: float, end: float) -> None:
        """Record an op on lane `lane` of device dv from `start` to `end` (inside one gap)."""
        starts, ends = self.lanes[dv][lane]
        k = bisect.bisect_right(starts, start) - 1
        lo, hi = starts[k], ends[k]
        keep_lo, keep_hi = start > lo, hi > end or hi == np.inf
        starts[k : k + 1] = [lo, end][not keep_lo : 1 + keep_hi]
        ends[k : k + 1] = [start, hi][not keep_lo : 1 + keep_hi]


def gap_start(starts: list[float], ends: list[float], ready: float, length: float) -> float:
    """Earliest start >= ready of an op of `length` in one of the idle gaps of a lane."""
    # Gaps are disjoint and sorted, so their ends are too: skip those ending before `ready`.
    for k in range(bisect.bisect_left(ends, ready), len(ends)):
        begin = starts[k] if starts[k] > ready else ready
        if begin + length <= ends[k]:
            return begin
    raise AssertionError("the open last gap always fits")  # pragma: no cover
