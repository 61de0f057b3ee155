"""The one event-driven simulator that scores every placement.

Rules (the same for every placer, and those of benchmarks/placement/workloads/README.md):
- a device runs at most `slots` ops at once (1 by default), non-preemptively; devices that
  share a `pool` also share its capacity (TF's logical CPU devices share one thread pool);
- when a device is free it starts, among its ops whose inputs have all arrived, the one that
  became ready first (ties: smaller topological index);
- an op that takes no time completes at the instant it starts, before any op that takes time
  starts at that instant, so what it makes ready then competes on equal terms (the README's
  "inputs have all arrived" read literally);
- op u's output is sent once per destination device, when u finishes; with
  `Problem.serial_links` each device has one outgoing channel (or shares the one its
  `ProblemDevice.channel` names) that sends one tensor at a time, in request order; otherwise
  transfers do not contend;
- memory per device: the resident bytes of its ops (`Problem.memory`, held all step) plus, at the
  worst moment, the live output buffers (`Problem.out_bytes`) made there or received there.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from devplace.autoplacer.graph import Problem

__all__ = ["Schedule", "simulate"]

_TOL = 1e-9


@dataclass
class Schedule:
    """The simulated result of one assignment."""

    assignment: np.ndarray
    makespan: float
    start: np.ndarray
    finish: np.ndarray
    peak_memory: np.ndarray
    transfers: int
    transfer_time: float
    violations: list[str] = field(default_factory=list)

    @property
    def feasible(self) -> bool:
        """True when no memory cap is exceeded."""
        return not self.violations


def _consumers_by_device(problem: Problem, a: np.ndarray) -> list[dict[int, list[int]]]:
    out: list[dict[int, list[int]]] = []
    for u in range(problem.n):
        by: dict[int, list[int]] = {}
        for v in problem.succs[u]:
            by.setdefault(int(a[v]), []).append(v)
        out.append(by)
    return out


class _Machine:
    """Device slots, pool capacity and per-device ready queues."""

    def __init__(self, problem: Problem):
        devs = problem.devices
        self.free = [dev.slots for dev in devs]
        pools = sorted({dev.pool for dev in devs if dev.pool is not None})
        pool_ix = {p: i for i, p in enumerate(pools)}
        self.pool = [pool_ix[dev.pool] if dev.pool is not None else -1 for dev in devs]
        self.pool_free = [problem.pool_capacity[p] for p in pools]
        self.queues: list[list[tuple[float, int, int]]] = [[] for _ in devs]

    def can_start(self, dv: int) -> bool:
        """True when device dv has a ready op, a free slot and pool capacity."""
        p = self.pool[dv]
        return bool(self.queues[dv]) and self.free[dv] > 0 and (p < 0 or self.pool_free[p] > 0)

    def take(self, dv: int) -> int:
        """Occupy a slot of dv and return its earliest-ready op."""
        self.free[dv] -= 1
        if self.pool[dv] >= 0:
            self.pool_free[self.pool[dv]] -= 1
        return heapq.heappop(self.queues[dv])[2]

    def release(self, dv: int) -> None:
        """Free a slot of dv (and of its pool)."""
        self.free[dv] += 1
        if self.pool[dv] >= 0:
            self.pool_free[self.pool[dv]] += 1


def simulate(problem: Problem, assignment: Sequence[int] | np.ndarray) -> Schedule:
    """Simulate `assignment` (device index per op) on `problem`; see the module rules."""
    a = problem.check(assignment)
    n, d = problem.n, problem.d
    comp = problem.compute[np.arange(n), a]
    by_dev = _consumers_by_device(problem, a)
    remaining = [len(p) for p in problem.preds]
    topo_index = problem.topo_index.tolist()
    start = np.zeros(n)
    finish = np.zeros(n)
    machine = _Machine(problem)
    names = [dev.channel if dev.channel is not None else i for i, dev in enumerate(problem.devices)]
    channel_of = [names.index(x) for x in names]
    chan = [0.0] * d
    events: list[tuple[float, int, int, int]] = []  # (time, seq, op, dest device or -1)
    seq = 0
    sends: list[tuple[int, int, float]] = []  # (op, dest, arrival)

    def arrive(t: float, u: int, b: int) -> None:
        """u's output reached device b at t: its consumers there may become ready."""
        for v in by_dev[u][b]:
            remaining[v] -= 1
            if remaining[v] == 0:
                heapq.heappush(machine.queues[b], (t, topo_index[v], v))

    def complete(t: float, u: int) -> None:
        """u finished at t: free its slot and send its output to every consuming device."""
        nonlocal seq
        src = int(a[u])
        machine.release(src)
        for dest in by_dev[u]:
            if dest == src:
                arrive(t, u, dest)
                continue
            ch = channel_of[src]
            cost = problem.comm(u, src, dest)
            serial = problem.serial_links and cost > 0  # free copies never wait for a channel
            begin = max(t, chan[ch]) if serial else t
            end = begin + cost
            if serial:
                chan[ch] = end
            sends.append((u, dest, end))
            if end <= t:
                arrive(t, u, dest)
            else:
                heapq.heappush(events, (end, seq, u, dest))
                seq += 1

    def next_device(t: float) -> int:
        """The device to start an op on at t: instant ops first, then the earliest ready."""
        best, best_key = -1, None
        for dv in range(d):
            if machine.can_start(dv):
                head = machine.queues[dv][0]
                key = (comp[head[2]] > 0, head)
                if best_key is None or key < best_key:
                    best, best_key = dv, key
        return best

    for v in range(n):
        if remaining[v] == 0:
            heapq.heappush(machine.queues[a[v]], (0.0, topo_index[v], v))
    t = 0.0
    while True:
        while (dv := next_device(t)) >= 0:
            v = machine.take(dv)
            start[v] = t
            finish[v] = t + comp[v]
            if comp[v] > 0:
                heapq.heappush(events, (finish[v], seq, v, -1))
                seq += 1
            else:
                complete(t, v)
        if not events:
            break
        t = events[0][0]
        while events and events[0][0] <= t:
            _, _, u, b = heapq.heappop(events)
            if b >= 0:
                arrive(t, u, b)
            else:
                complete(t, u)
    if any(remaining):
        raise AssertionError("simulator left ops unscheduled")  # unreachable for a DAG
    makespan = float(finish.max(initial=0.0))
    peak = _peak_memory(problem, a, start, finish, sends, makespan)
    caps = problem.caps
    violations = [
        f"{problem.devices[i].name}: {peak[i]:.4g} bytes > cap {caps[i]:.4g}"
        for i in range(d)
        if peak[i] > caps[i] * (1 + _TOL)
    ]
    return Schedule(
        assignment=a,
        makespan=makespan,
        start=start,
        finish=finish,
        peak_memory=peak,
        transfers=len(sends),
        transfer_time=float(sum(problem.comm(u, int(a[u]), b) for u, b, _ in sends)),
        violations=violations,
    )


def _peak_memory(
    problem: Problem,
    a: np.ndarray,
    start: np.ndarray,
    finish: np.ndarray,
    sends: list[tuple[int, int, float]],
    makespan: float,
) -> np.ndarray:
    """Resident bytes plus the worst moment of live output buffers, per device."""
    d = problem.d
    peak = np.bincount(a, weights=problem.memory, minlength=d).astype(float)
    size = problem.out_bytes
    if not np.any(size > 0):
        return peak
    free_at = finish.copy()
    for u in range(problem.n):
        local = [finish[v] for v in problem.succs[u] if a[v] == a[u]]
        free_at[u] = max([finish[u], *local]) if problem.succs[u] else makespan
    dev, t0, t1, sz = list(a), list(start), list(free_at), list(size)
    for u, b, arrival in sends:
        free_at_u = max(finish[v] for v in problem.succs[u] if a[v] == b)
        t1[u] = max(t1[u], arrival)
        dev.append(b)
        t0.append(arrival)
        t1.append(free_at_u)
        sz.append(size[u])
    dev_a, sz_a = np.array(dev), np.array(sz)
    times = np.concatenate([t0, t1])
    delta = np.concatenate([sz_a, -sz_a])
    kind = np.concatenate([np.zeros(len(t0)), np.ones(len(t1))])  # allocations first
    devs = np.concatenate([dev_a, dev_a])
    for dv in range(d):
        m = devs == dv
        if not m.any():
            continue
        order = np.lexsort((kind[m], times[m]))
        peak[dv] += max(0.0, float(np.cumsum(delta[m][order]).max()))
    return peak
