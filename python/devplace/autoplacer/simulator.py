"""The one event-driven simulator that scores every placement.

Rules (the same for every placer, and those of devplace/workloads/README.md):
- a device runs at most `slots` ops at once (1 by default), non-preemptively; devices that
  share a `pool` also share its capacity (TF's logical CPU devices share one thread pool);
- when a device is free it starts, among its ops whose inputs have all arrived, the one that
  became ready first (ties: smaller topological index);
- an op that takes no time completes at the instant it starts, before any op that takes time
  starts at that instant, so what it makes ready then competes on equal terms (the README's
  "inputs have all arrived" read literally);
- op u's output is sent once per destination device, when u finishes; with
  `Problem.serial_links` each device has one outgoing channel (or shares the one its
  `ProblemDevice.channel` names) that sends one tensor at a time, in request order (a device
  with `ProblemDevice.dma` holds it for the link's alpha only, its bytes then arriving after
  the rest of the transfer time); otherwise transfers do not contend;
- a transfer between two hosts (server tasks) waits for no channel (gRPC requests overlap):
  its time (the link's) is work of the two tasks' cores, as measured (the gRPC handlers encode,
  copy and decode on them): `Problem.host_send_share` of it holds a slot of the sending device,
  then the rest a slot of the receiving one, each queued with that device's ops, before the
  consumers there become ready;
- a fed tensor (`Problem.fed`) on a host's device whose consumers there start more chains
  than the device runs ops at once (a one-core task's pool has a thread more: two chains
  take both) starts the longest of those chains at once, and reaches its other consumers
  there and other hosts only after the chains' mean time: TF's executor hands all the feed's
  consumers and its sends to the task's thread pool together, and a thread that takes a
  consumer runs its chain inline (each successor that its finish alone makes ready) before it
  takes anything else; which chains go first is chance (as traced on one-core tasks:
  docs/autoplace.md, "A fed tensor leaves its task late"). A chain: from
  a consumer, the successor (least topological index) on the same device that needs nothing
  else made since the feed, while there is one;
- the devices of a host other than the master's start no op before
  `Problem.host_start_delay` (their partition starts after the master's own);
- a step costs `Problem.step_cost` plus `Problem.host_step_cost` once per host (server task)
  other than the master's whose devices run an op, added to the makespan;
- memory per device: the resident bytes of its ops (`Problem.memory`, held all step) plus, at the
  worst moment, the live output buffers (`Problem.out_bytes`) made there or received there.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from devplace.autoplacer.graph import Problem, link_time

__all__ = ["Schedule", "simulate"]

_TOL = 1e-9

# An event's kind (its last field) is the device a tensor arrives on (0 or more), else one of:
#: an op, a transfer job or a partition start completes;
_COMPLETE = -1
#: a fed tensor held back by `_Run.hold_feed` is released.
_RELEASE_FEED = -2
#: `_Machine.pool` of a device in no pool; `_Run.next_device` when none can start an op.
_NO_POOL = _NO_DEVICE = -1


def _partition_start(dv: int) -> int:
    """The op of the event that starts device dv's partition: below every op and job (0 and
    more). Its own inverse: of such an op, the device."""
    return -1 - dv


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


class _Machine:
    """Device slots, pool capacity and per-device ready queues."""

    def __init__(self, problem: Problem):
        devs = problem.devices
        self.free = [dev.slots for dev in devs]
        pools = sorted({dev.pool for dev in devs if dev.pool is not None})
        pool_ix = {p: i for i, p in enumerate(pools)}
        self.pool = [pool_ix[dev.pool] if dev.pool is not None else _NO_POOL for dev in devs]
        self.pool_free = [problem.pool_capacity[p] for p in pools]
        self.queues: list[list[tuple[float, int, int]]] = [[] for _ in devs]
        names = [dev.channel if dev.channel is not None else i for i, dev in enumerate(devs)]
        self.channel_of = [names.index(x) for x in names]
        self.channel_free = [0.0] * len(devs)
        self.serial = problem.serial_links
        self.dma = [dev.dma for dev in devs]
        self.host = [dev.host for dev in devs]
        self.alpha = problem.link_alpha

    def take(self, dv: int) -> int:
        """Occupy a slot of dv and return its earliest-ready op."""
        self.free[dv] -= 1
        if self.pool[dv] != _NO_POOL:
            self.pool_free[self.pool[dv]] -= 1
        return heapq.heappop(self.queues[dv])[2]

    def release(self, dv: int) -> None:
        """Free a slot of dv (and of its pool)."""
        self.free[dv] += 1
        if self.pool[dv] != _NO_POOL:
            self.pool_free[self.pool[dv]] += 1

    def send(self, src: int, dest: int, t: float, cost: float) -> float:
        """When a transfer of `cost` from src to dest, requested at t, arrives (queued if serial).

        A `dma` sender holds the channel for the link's alpha only; the rest of `cost` follows.
        """
        if not (self.serial and cost > 0):
            return t + cost  # free copies never wait
        ch = self.channel_of[src]
        hold = min(cost, self.alpha[src, dest]) if self.dma[src] else cost
        self.channel_free[ch] = max(t, self.channel_free[ch]) + hold
        return self.channel_free[ch] + cost - hold


class _Run:
    """One simulation's state: the event queue, op start and finish times, transfers sent."""

    def __init__(self, problem: Problem, a: np.ndarray):
        self.problem, self.a, self.n = problem, a.tolist(), problem.n
        self.comp = problem.compute[np.arange(problem.n), a]
        self.succs = problem.succs
        self.remaining = [len(p) for p in problem.preds]
        self.topo_index = problem.topo_index.tolist()
        self.start = [0.0] * problem.n
        self.finish = [0.0] * problem.n
        self.machine = _Machine(problem)
        self.alpha, self.beta = problem.link_alpha.tolist(), problem.link_beta.tolist()
        self.xfer = problem.xfer.tolist()
        self.events: list[tuple[float, int, int, int]] = []  # (time, seq, op, kind)
        self.seq = 0
        self.sends: list[tuple[int, int, float]] = []  # (op, dest, arrival)
        self.transfer_time = 0.0  # of the sends, summed in their order
        # The two halves of transfers between hosts, as jobs n, n+1, ...: (op, dest, device
        # the job runs on); `work[v]` is how long op or job v holds its device's slot.
        self.jobs: list[tuple[int, int, int]] = []
        self.work: list[float] = self.comp.tolist()
        self.fed = problem.fed.tolist() if problem.fed.any() else None
        self.held: dict[int, int] = {}  # fed op -> the consumer whose chain it let start

    def comm(self, u: int, a: int, b: int) -> float:
        """`Problem.comm` from lists (it is asked once per transfer)."""
        return 0.0 if a == b else link_time(self.alpha[a][b], self.beta[a][b], self.xfer[u])

    def push(self, t: float, u: int, kind: int) -> None:
        """Schedule an event at t: u's output reaching device `kind`, or (`_COMPLETE`) u
        finishing, or (`_RELEASE_FEED`) fed u's tensor released (`release_feed`)."""
        heapq.heappush(self.events, (t, self.seq, u, kind))
        self.seq += 1

    def arrive(self, t: float, u: int, b: int) -> None:
        """u's output reached device b at t: its consumers there may become ready."""
        self.ready_on(t, [v for v in self.succs[u] if self.a[v] == b], b)

    def ready_on(self, t: float, consumers: list[int], b: int) -> None:
        """An input of each of `consumers` (on device b) arrived at t: those with all their
        inputs now become ready."""
        remaining = self.remaining
        for v in consumers:
            remaining[v] -= 1
            if remaining[v] == 0:
                heapq.heappush(self.machine.queues[b], (t, self.topo_index[v], v))

    def queue_job(self, t: float, op: int, dest: int, on: int, work: float) -> None:
        """Queue at t on device `on` a half of op's transfer to dest taking `work`."""
        self.jobs.append((op, dest, on))
        self.work.append(work)
        job = self.n + len(self.jobs) - 1
        heapq.heappush(self.machine.queues[on], (t, self.topo_index[op], job))

    def complete(self, t: float, u: int) -> None:
        """u finished at t: free its slot and send its output to every consuming device (u
        below 0: a `_partition_start`, that device's slots free)."""
        n = self.n
        if u < 0:
            dv = _partition_start(u)
            self.machine.free[dv] += self.problem.devices[dv].slots
            return
        if u >= n:  # a half of a transfer between hosts
            op, dest, on = self.jobs[u - n]
            self.machine.release(on)
            if on != dest:  # the sender's half: the receiver's follows
                total = self.comm(op, self.a[op], dest)
                self.queue_job(t, op, dest, dest, total - self.work[u])
            else:  # the receiver's half: the tensor is now on its device
                self.sends.append((op, dest, t))
                self.transfer_time += self.comm(op, self.a[op], dest)
                self.arrive(t, op, dest)
            return
        a, m = self.a, self.machine
        src = a[u]
        m.release(src)
        fed = self.fed is not None and self.fed[u] and m.host[src] is not None
        held = self.hold_feed(t, u) if fed else None
        # Each consuming device once, in the order of its first consumer.
        for dest in dict.fromkeys([a[v] for v in self.succs[u]]):
            if dest == src:
                if held is None:
                    self.arrive(t, u, dest)
                else:
                    self.ready_on(t, held, src)
                continue
            cost = link_time(self.alpha[src][dest], self.beta[src][dest], self.xfer[u])
            if m.host[src] != m.host[dest]:
                if held is None:
                    self.send_to_host(t, u, dest)
                continue
            end = m.send(src, dest, t, cost)
            self.sends.append((u, dest, end))
            self.transfer_time += cost
            if end <= t:
                self.arrive(t, u, dest)
            else:
                self.push(end, u, dest)

    def send_to_host(self, t: float, u: int, dest: int) -> None:
        """Queue at t the sender's half of u's transfer to `dest`, a device of another host."""
        cost = self.comm(u, self.a[u], dest)
        self.queue_job(t, u, dest, self.a[u], self.problem.host_send_share * cost)

    def hold_feed(self, t: float, u: int) -> list[int] | None:
        """Fed u finished at t on a host's device: where its consumers there start more chains
        than the device runs ops at once, the one that starts the longest (a list of it), and
        at t plus the chains' mean time an event that releases the rest (`release_feed`), as
        the module's rules say; else None (nothing held)."""
        a, src, succs, preds = self.a, self.a[u], self.succs, self.problem.preds
        since_u, stack = {u}, [u]
        while stack:
            for v in succs[stack.pop()]:
                if v not in since_u:
                    since_u.add(v)
                    stack.append(v)
        chains = {}
        for head in (v for v in succs[u] if a[v] == src):
            cur, length = head, self.comp[head]
            while inline := [
                v
                for v in succs[cur]
                if a[v] == src and all(w == cur or w not in since_u for w in preds[v])
            ]:
                cur = min(inline, key=self.topo_index.__getitem__)
                length += self.comp[cur]
            chains[head] = length
        if len(chains) <= self.problem.devices[src].slots:
            return None  # a thread of the pool is left for the rest
        first = max(chains, key=lambda v: (chains[v], -self.topo_index[v]))
        self.held[u] = first
        self.push(t + float(np.mean(list(chains.values()))), u, _RELEASE_FEED)
        return [first]

    def release_feed(self, t: float, u: int) -> None:
        """Fed u's tensor at t reaches the consumers on its device that `hold_feed` held and
        leaves for the devices of other hosts."""
        a, src, m, first = self.a, self.a[u], self.machine, self.held.pop(u)
        self.ready_on(t, [v for v in self.succs[u] if a[v] == src and v != first], src)
        for dest in dict.fromkeys([a[v] for v in self.succs[u]]):
            if m.host[dest] != m.host[src]:
                self.send_to_host(t, u, dest)

    def next_device(self) -> int:
        """The device to start an op on now: instant ops first, then the earliest ready."""
        m, work = self.machine, self.work
        free, pool, pool_free = m.free, m.pool, m.pool_free
        best, best_key = _NO_DEVICE, None
        for dv, queue in enumerate(m.queues):  # a free slot, pool capacity and a ready op
            if queue and free[dv] > 0 and (pool[dv] == _NO_POOL or pool_free[pool[dv]] > 0):
                key = (work[queue[0][2]] > 0, queue[0])
                if best_key is None or key < best_key:
                    best, best_key = dv, key
        return best

    def start_ready(self, t: float) -> None:
        """Start every op that can start at t (instant ops complete at once)."""
        take, work, n = self.machine.take, self.work, self.n
        while (dv := self.next_device()) != _NO_DEVICE:
            v = take(dv)
            end = t + work[v]
            if v < n:
                self.start[v], self.finish[v] = t, end
            if end > t:
                self.push(end, v, _COMPLETE)
            else:
                self.complete(t, v)

    def run(self) -> None:
        """Process events in time order until every op has finished."""
        for v in range(self.problem.n):
            if self.remaining[v] == 0:
                heapq.heappush(self.machine.queues[self.a[v]], (0.0, self.topo_index[v], v))
        t = 0.0
        if (delay := self.problem.host_start_delay) > 0:
            for dv in self.problem.remote_devices():  # slots held until their partition starts
                self.machine.free[dv] -= self.problem.devices[dv].slots
                self.push(delay, _partition_start(dv), _COMPLETE)
        events, pop, arrive, complete = self.events, heapq.heappop, self.arrive, self.complete
        self.start_ready(t)
        while events:
            t = events[0][0]
            while events and events[0][0] <= t:
                _, _, u, kind = pop(events)
                if kind >= 0:
                    arrive(t, u, kind)
                elif kind == _COMPLETE:
                    complete(t, u)
                else:
                    self.release_feed(t, u)
            self.start_ready(t)
        if any(self.remaining):
            raise AssertionError("simulator left ops unscheduled")  # unreachable for a DAG


def simulate(problem: Problem, assignment: Sequence[int] | np.ndarray) -> Schedule:
    """Simulate `assignment` (device index per op) on `problem`; see the module rules."""
    a = problem.check(assignment)
    run = _Run(problem, a)
    run.run()
    start, finish = np.array(run.start), np.array(run.finish)
    end = float(finish.max(initial=0.0))
    peak = _peak_memory(problem, a, start, finish, run.sends, end)
    caps = problem.caps
    violations = [
        f"{problem.devices[i].name}: {peak[i]:.4g} bytes > cap {caps[i]:.4g}"
        for i in range(problem.d)
        if peak[i] > caps[i] * (1 + _TOL)
    ]
    return Schedule(
        assignment=a,
        makespan=end + problem.fixed_cost(a),
        start=start,
        finish=finish,
        peak_memory=peak,
        transfers=len(run.sends),
        transfer_time=run.transfer_time,
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
