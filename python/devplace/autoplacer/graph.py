"""The placement problem: ops, edges, devices, costs, memory and constraints.

A `Problem` is plain arrays indexed by op (0..n-1) and device (0..d-1), so placers and the
simulator never touch TensorFlow. Times are in one unit per problem (µs for TF graphs, the
workload files' own unit for those); memory in bytes.

Transfer time of op u's output from device a to device b (a != b) is
``link_time(link_alpha[a, b], link_beta[a, b], xfer[u])``; zero on the same device. `xfer` and
`out_bytes` are two fields because they are two quantities: what a transfer costs in link units
(bytes for TF graphs, where both come from one array; the workload files' own transfer costs)
and the memory an output buffer holds (bytes, for the caps).
"""

from __future__ import annotations

import graphlib
import heapq
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from devplace.core.errors import Error

__all__ = [
    "PATH_BLOCK",
    "PATH_ROUNDS",
    "ProblemDevice",
    "InfeasibleError",
    "AutoPlacementError",
    "Problem",
    "link_time",
]

#: `Problem.longest_paths`: the fewest ops in a block, and the rounds a block may take to
#: reach its fixed point (about the longest chain inside it) before the call gives up.
PATH_BLOCK = 64
PATH_ROUNDS = 64


def link_time(alpha: Any, beta: Any, units: Any) -> Any:
    """A transfer's time over a link: `alpha + beta * units` (latency, then cost per unit of
    `xfer`). The one link formula of the cost model, the placers and the simulator; numbers or
    NumPy arrays (broadcast)."""
    return alpha + beta * units


class AutoPlacementError(Error, ValueError):
    """A placement problem or assignment that cannot be used; the message names the input."""


class InfeasibleError(AutoPlacementError):
    """No assignment satisfies the constraints (memory caps, kernels, pins, colocation)."""


@dataclass(frozen=True)
class ProblemDevice:
    """A device of a placement problem.

    `kind` is "cpu" or "acc" (any accelerator); `memory` the cap in bytes (inf: none);
    `slots` how many ops it may run at once; `pool` names a shared thread pool (see
    `Problem.pool_capacity`), None for a private one; `channel` names the transfer channel its
    outgoing tensors queue on when `Problem.serial_links` (devices naming one channel share
    it), None for a channel of its own. `dma`: its transfers hold that channel only for the
    link's alpha (the host's per-transfer work); their bytes then move while the channel serves
    the next transfer. `host`: the server task it belongs to (None: the local process); see
    `Problem.host_step_cost`.
    """

    name: str
    kind: str = "acc"
    memory: float = float("inf")
    slots: int = 1
    pool: str | None = None
    channel: str | None = None
    dma: bool = False
    host: str | None = None


@dataclass
class Problem:
    """Ops, edges, devices and costs of one placement problem (validated on creation).

    `step_cost`: what a step costs beyond its ops (the master alone); `host_step_cost` what it
    costs once per other host (`ProblemDevice.host`) whose devices run an op (the master's
    work per remote task it involves); `master_host` the master's host. Both are added to the
    simulated step time, less `master_host_cost` (the master's own task's share of
    `step_cost`) when no op runs on the master's host. `op_offsets`: per device name, the
    per-op cost (µs) calibration added to its profiled times (`autoplacer.calibration`), and
    `op_scales` the factor it scaled them by first (1 unless the profile was slow).
    `host_send_share`: the part of a transfer between hosts that is work of the sending
    device (the rest is the receiving device's; see `autoplacer.simulator`).
    `host_start_delay`: how late in a step the devices of a host other than the master's can
    start their first op (the master starts their partitions after its own). `fed`: per op,
    whether the client feeds it (a placeholder): its tensor enters its task with the step, and
    leaves for another task late (see `autoplacer.simulator`).
    """

    names: list[str]
    devices: list[ProblemDevice]
    compute: np.ndarray
    edges: list[tuple[int, int]] | np.ndarray  # a list after checking
    xfer: np.ndarray
    link_alpha: np.ndarray
    link_beta: np.ndarray
    memory: np.ndarray
    out_bytes: np.ndarray | None = None
    groups: np.ndarray | None = None
    is_param: np.ndarray | None = None
    fed: np.ndarray | None = None
    serial_links: bool = True
    pool_capacity: dict[str, int] = field(default_factory=dict)
    name: str = "problem"
    host_step_cost: float = 0.0
    step_cost: float = 0.0
    master_host: str | None = None
    master_host_cost: float = 0.0
    op_offsets: dict[str, float] = field(default_factory=dict)
    op_scales: dict[str, float] = field(default_factory=dict)
    host_send_share: float = 0.5
    host_start_delay: float = 0.0

    def __post_init__(self) -> None:
        n, d = len(self.names), len(self.devices)
        if n == 0:
            raise AutoPlacementError(
                f"problem {self.name!r} has no ops; hint: pass a non-empty graph"
            )
        if d == 0:
            raise AutoPlacementError(
                f"problem {self.name!r} has no devices; hint: pass devices=['/device:CPU:0', ...]"
            )
        self.compute = np.asarray(self.compute, dtype=float)
        self.xfer = np.asarray(self.xfer, dtype=float)
        self.link_alpha = np.asarray(self.link_alpha, dtype=float)
        self.link_beta = np.asarray(self.link_beta, dtype=float)
        self.memory = np.asarray(self.memory, dtype=float)
        self.out_bytes = (
            np.zeros(n) if self.out_bytes is None else np.asarray(self.out_bytes, dtype=float)
        )
        self.groups = (
            np.arange(n) if self.groups is None else np.asarray(self.groups, dtype=np.int64)
        )
        self.is_param = (
            np.zeros(n, dtype=bool) if self.is_param is None else np.asarray(self.is_param, bool)
        )
        self.fed = np.zeros(n, dtype=bool) if self.fed is None else np.asarray(self.fed, bool)
        self._check_shapes(n, d)
        if not 0.0 <= self.host_start_delay < np.inf:
            raise AutoPlacementError(
                f"host_start_delay of problem {self.name!r} must be a finite time >= 0, got "
                f"{self.host_start_delay!r}"
            )
        if not 0.0 <= self.host_send_share <= 1.0:
            raise AutoPlacementError(
                f"host_send_share of problem {self.name!r} must be in [0, 1], got "
                f"{self.host_send_share!r}"
            )
        self._link(n)
        self.topo_index = np.empty(n, dtype=np.int64)
        self.topo_index[self.topo] = np.arange(n)
        self.allowed = np.isfinite(self.compute)
        nowhere = np.flatnonzero(~self.allowed.any(axis=1))
        if nowhere.size:
            raise InfeasibleError(
                f"op {self.names[nowhere[0]]!r} of problem {self.name!r} can run on none of the "
                f"devices {[dev.name for dev in self.devices]} (no kernel there, or pinned "
                "elsewhere); hint: add a device it has a kernel for, or drop its pin"
            )
        for pool in {dev.pool for dev in self.devices if dev.pool is not None}:
            self.pool_capacity.setdefault(pool, 1)

    def _check_shapes(self, n: int, d: int) -> None:
        expect = {
            "compute": (self.compute, (n, d)),
            "xfer": (self.xfer, (n,)),
            "link_alpha": (self.link_alpha, (d, d)),
            "link_beta": (self.link_beta, (d, d)),
            "memory": (self.memory, (n,)),
            "out_bytes": (self.out_bytes, (n,)),
            "groups": (self.groups, (n,)),
            "is_param": (self.is_param, (n,)),
            "fed": (self.fed, (n,)),
        }
        for key, (arr, shape) in expect.items():
            if arr.shape != shape:
                raise AutoPlacementError(
                    f"{key} of problem {self.name!r} has shape {arr.shape}, expected {shape} "
                    f"({n} ops, {d} devices)"
                )
        if np.any(np.isnan(self.compute)) or np.any(self.compute < 0):
            raise AutoPlacementError(
                f"compute of problem {self.name!r} has negative or NaN times; "
                "hint: use inf for 'no kernel on this device'"
            )
        for key in ("xfer", "link_alpha", "link_beta", "memory", "out_bytes"):
            arr = getattr(self, key)
            if not np.all(np.isfinite(arr)) or np.any(arr < 0):
                raise AutoPlacementError(f"{key} of problem {self.name!r} must be finite and >= 0")

    def _link(self, n: int) -> None:
        """`edges` checked, sorted without repeats (also as `edge_array`), each op's
        predecessors and successors (in index order) and `topo` (vectorised: a million ops
        take seconds, not minutes)."""
        e = np.asarray(self.edges, dtype=np.int64).reshape(-1, 2)
        bad = np.flatnonzero(((e < 0) | (e >= n)).any(axis=1) | (e[:, 0] == e[:, 1]))
        if bad.size:
            u, v = e[bad[0]].tolist()
            raise AutoPlacementError(
                f"edge ({u}, {v}) of problem {self.name!r} is not between two distinct ops "
                f"0..{n - 1}"
            )
        keys = np.sort(e[:, 0] * n + e[:, 1])
        keys = keys[np.r_[True, keys[1:] != keys[:-1]]] if keys.size else keys
        src, dst = keys // n, keys % n
        self.edges = list(zip(src.tolist(), dst.tolist(), strict=True))
        self.edge_array = np.stack([src, dst], axis=1)  # `edges` as an (m, 2) array
        self.succs = _slices(dst.tolist(), np.searchsorted(src, np.arange(n + 1)))
        by_dst = np.argsort(dst, kind="stable")  # keeps each op's predecessors in index order
        self.preds = _slices(src[by_dst].tolist(), np.searchsorted(dst[by_dst], np.arange(n + 1)))
        # Every edge forward: index order is the smallest-index-first topological order.
        self.topo = list(range(n)) if bool((src < dst).all()) else self._topological_order()

    def _topological_order(self) -> list[int]:
        """Topological order taking the smallest ready op index first; raises on a cycle."""
        waiting = [len(p) for p in self.preds]
        heap = [v for v, k in enumerate(waiting) if k == 0]
        order: list[int] = []
        while heap:
            u = heapq.heappop(heap)
            order.append(u)
            for v in self.succs[u]:
                waiting[v] -= 1
                if waiting[v] == 0:
                    heapq.heappush(heap, v)
        if len(order) < len(self.names):
            sorter = graphlib.TopologicalSorter({v: self.preds[v] for v in range(len(waiting))})
            try:
                sorter.prepare()
            except graphlib.CycleError as err:
                cycle = [self.names[i] for i in err.args[1]][:6]
                raise AutoPlacementError(
                    f"problem {self.name!r} has a cycle through ops {cycle}; "
                    "hint: placement needs a DAG (drop back edges of loops)"
                ) from None
        return order

    @property
    def n(self) -> int:
        """Number of ops."""
        return len(self.names)

    @property
    def d(self) -> int:
        """Number of devices."""
        return len(self.devices)

    @property
    def caps(self) -> np.ndarray:
        """Memory cap per device (inf: none)."""
        return np.array([dev.memory for dev in self.devices], dtype=float)

    def comm(self, u: int, a: int, b: int) -> float:
        """Time to move op u's output from device a to device b."""
        if a == b:
            return 0.0
        return float(link_time(self.link_alpha[a, b], self.link_beta[a, b], self.xfer[u]))

    def group_count(self) -> int:
        """Number of colocation groups."""
        # np.unique's inverse takes the sorting path: its plain form hashes, 50x slower on a
        # million distinct ints (NumPy 2.4).
        return int(np.unique(self.groups, return_inverse=True)[1].max()) + 1

    def group_members(self) -> list[np.ndarray]:
        """Ops of each colocation group, indexed by group label (relabelled 0..g-1)."""
        _, labels = np.unique(self.groups, return_inverse=True)
        order = np.argsort(labels, kind="stable")
        bounds = [0, *(np.flatnonzero(np.diff(labels[order])) + 1).tolist(), len(order)]
        # slices: np.split is 20x slower on many small groups
        return [order[b0:b1] for b0, b1 in itertools.pairwise(bounds)]

    def group_allowed(self) -> np.ndarray:
        """allowed[i, d] reduced over i's colocation group: every member can run on d."""
        _, labels = np.unique(self.groups, return_inverse=True)
        ok = np.ones((labels.max() + 1, self.d), dtype=bool)
        np.logical_and.at(ok, labels, self.allowed)
        return ok[labels]

    def check(self, assignment: Sequence[int] | np.ndarray) -> np.ndarray:
        """Validate an assignment (device index per op): kernels and colocation; returns it."""
        a = np.asarray(assignment, dtype=np.int64)
        if a.shape != (self.n,) or a.min() < 0 or a.max() >= self.d:
            raise AutoPlacementError(
                f"assignment for problem {self.name!r} must give a device 0..{self.d - 1} "
                f"for each of its {self.n} ops"
            )
        bad = np.flatnonzero(~self.allowed[np.arange(self.n), a])
        if bad.size:
            i = int(bad[0])
            raise AutoPlacementError(
                f"op {self.names[i]!r} cannot run on {self.devices[a[i]].name} "
                "(no kernel or pinned elsewhere)"
            )
        _, labels = np.unique(self.groups, return_inverse=True)
        lowest = np.full(labels.max() + 1, self.d)
        np.minimum.at(lowest, labels, a)
        split = np.flatnonzero(lowest[labels] != a)
        if split.size:
            members = np.flatnonzero(labels == labels[split[0]])
            raise AutoPlacementError(
                f"colocated ops {[self.names[i] for i in members[:4]]} are split across "
                "devices; hint: give every member of a colocation group the same device"
            )
        return a

    def fixed_cost(self, assignment: np.ndarray) -> float:
        """`step_cost` plus `host_step_cost` per host other than the master's whose devices
        `assignment` uses, less `master_host_cost` when it uses none of the master's."""
        return sum(self.fixed_costs(assignment).values())

    def fixed_costs(self, assignment: np.ndarray) -> dict[str, float]:
        """`fixed_cost`'s parts by name: "step" (`step_cost`), "further hosts"
        (`host_step_cost` times their number) and "idle master" (minus `master_host_cost`);
        the last two only where they are not 0."""
        parts = {"step": self.step_cost}
        if not self.host_step_cost:
            return parts
        hosts = {self.devices[j].host for j in np.unique(assignment)}
        if further := len(hosts - {None, self.master_host}):
            parts["further hosts"] = self.host_step_cost * further
        if self.master_host is not None and self.master_host not in hosts:
            parts["idle master"] = -self.master_host_cost
        return parts

    def remote_devices(self) -> list[int]:
        """Devices of hosts other than the master's (those `host_start_delay` holds back)."""
        if self.master_host is None:
            return []
        return [
            j
            for j, dev in enumerate(self.devices)
            if dev.host is not None and dev.host != self.master_host
        ]

    def min_compute(self) -> np.ndarray:
        """Fastest time of each op over the devices it may use."""
        return np.where(self.allowed, self.compute, np.inf).min(axis=1)

    def longest_paths(
        self,
        finish: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray],
        backward: bool = False,
    ) -> np.ndarray | None:
        """Per op, `finish(ops, m, has)` of the recurrence value[v] = finish(v, maximum value
        of v's predecessors (`backward`: successors), whether it has any), for the ops `ops`
        at once (`m` is -inf where `has` is False); None where the graph's chains are too long.

        Vectorised by blocks of consecutive ops in topological order: a block's values are
        iterated to their fixed point (the recurrence's unique solution, so exactly what op by
        op gives) within `PATH_ROUNDS` rounds, or the call gives up (None): the caller then
        goes op by op. Blocks grow with their position, so a random DAG's, whose inputs are
        spread over all earlier ops, stay shallow: a million ops take a fraction of a second.
        """
        n = self.n
        pos, src, dst = self.topo_index, self.edge_array[:, 0], self.edge_array[:, 1]
        if backward:  # reversed too: the edges (sorted by source) stay sorted by position
            pos, src, dst = n - 1 - pos, dst[::-1], src[::-1]
        first, last = pos[src], pos[dst]  # every edge goes to a later position
        if not (last[1:] >= last[:-1]).all():
            by_last = np.argsort(last)
            first, last = first[by_last], last[by_last]
        op_at = np.empty(n, dtype=np.int64)
        op_at[pos] = np.arange(n)
        has = np.bincount(last, minlength=n) > 0
        value = np.empty(n)  # by position
        lo = 0
        while lo < n:
            hi = min(n, lo + max(PATH_BLOCK, lo // 4))
            e0, e1 = np.searchsorted(last, [lo, hi])
            s, t = first[e0:e1], last[e0:e1] - lo
            inner = s >= lo
            m = np.full(hi - lo, -np.inf)
            np.maximum.at(m, t[~inner], value[s[~inner]])
            ops, h = op_at[lo:hi], has[lo:hi]
            cur = finish(ops, m, h)
            if inner.any():
                s_in, t_in = s[inner] - lo, t[inner]
                for _ in range(PATH_ROUNDS):
                    m_in = m.copy()
                    np.maximum.at(m_in, t_in, cur[s_in])
                    new = finish(ops, m_in, h)
                    if np.array_equal(new, cur):
                        break
                    cur = new
                else:
                    return None
            value[lo:hi] = cur
            lo = hi
        out = np.empty(n)
        out[op_at] = value
        return out

    def lower_bound(self) -> float:
        """max(critical path at fastest speeds without transfers, total work / devices)."""
        fastest = self.min_compute()
        finish = self.longest_paths(lambda ops, m, has: np.where(has, m, 0.0) + fastest[ops])
        if finish is None:  # long chains: op by op, on lists
            speed, finish, preds = fastest.tolist(), [0.0] * self.n, self.preds
            for v in self.topo:
                finish[v] = max([finish[u] for u in preds[v]], default=0.0) + speed[v]
        slots = sum(dev.slots for dev in self.devices)
        for pool, cap in self.pool_capacity.items():
            in_pool = sum(dev.slots for dev in self.devices if dev.pool == pool)
            slots -= max(0, in_pool - cap)
        return float(max(np.max(finish), fastest.sum() / max(slots, 1)))


def _slices(flat: list[int], bounds: np.ndarray) -> list[list[int]]:
    """`flat` cut at `bounds` (n + 1 offsets) into n lists."""
    b = bounds.tolist()
    return [flat[b0:b1] for b0, b1 in itertools.pairwise(b)]
