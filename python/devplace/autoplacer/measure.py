"""What servers cost, timed on them: the link between two tasks, and each task's constants.

Everything here is measured as the CPU <-> GPU link was (`fit_crossings`): the same graph
timed two ways, the difference divided by what differs. `measure_crossings` (the link autoplace
uses) times both tasks busy with a chain of matmuls while tensors cross both ways against the
same step with none crossing: what a transfer costs the cores of two busy tasks, where a split
pays for it. `measure_link` alternates a chain between two tasks (every hop a gRPC transfer)
against the chain on one task: a transfer's latency between idle tasks. `measure_servers`
times steps involving 1..K tasks (the master's fixed work per task) and, per task, several
independent chains at once against one (how many ops its inter-op pool runs at once).
Results feed `CostModel.from_profiles(..., task_links=..., task_threads=..., task_step_us=...)`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from devplace.adapter.devices import parse_device
from devplace.autoplacer.cost import (
    Link,
    crossing_costs,
    fit_link,
    session_target,
    task_of,
    task_pair,
)
from devplace.autoplacer.graph import AutoPlacementError
from devplace.autoplacer.timing import step_time_us

__all__ = [
    "DEFAULT_LINK_SIZES",
    "ServerConstants",
    "busy_crossing_records",
    "link_records",
    "master_task",
    "measure_crossings",
    "measure_link",
    "measure_servers",
    "same_host",
    "task_links",
]

#: Tensor sizes (bytes) `measure_link` times by default: 4 B to 1 MiB.
DEFAULT_LINK_SIZES = (4, 4096, 65536, 1 << 20)


def _target(sess: Any) -> str:
    """The session's target (`grpc://...`), checked: the tasks live behind it."""
    target = session_target(sess)
    if not target.startswith("grpc://"):
        raise AutoPlacementError(
            f"measuring servers needs a session on a cluster (grpc://), got {sess!r}; "
            "hint: dp.ClusterSession(cluster) or LocalCluster(...).session()"
        )
    return target


def _task(name: str) -> str:
    """`name`'s task (`/job:J/task:T`), or an AutoPlacementError naming it."""
    task = task_of(name)
    if task is None:
        raise AutoPlacementError(
            f"{name!r} names no task; hint: e.g. '/job:worker/task:1' or a device of it"
        )
    return task


def _fresh_step_us(target: str, graph: Any, fetch: Any, runs: int) -> float:
    """Step time (µs, `step_time_us`) of `fetch` in a fresh session (graph rewriting off)."""
    import devplace as dp

    with dp.Session(target=target, graph=graph, optimize=False) as sess:
        with graph.as_default():
            inits = [v.initializer for v in dp.tf.global_variables()]
        if inits:
            sess.run(inits)
        return step_time_us(sess, fetch, None, runs)


def _two_tasks(
    sess: Any, a: str, b: str, what: str, needs: str, given: str, ok: bool
) -> tuple[str, str, str]:
    """`sess`'s target and the tasks of `a` and `b`, or an AutoPlacementError saying that
    `what` needs two different tasks and `needs` (`ok`: the latter holds; `given` shows it)."""
    target = _target(sess)
    a, b = _task(a), _task(b)
    if a == b or not ok:
        raise AutoPlacementError(
            f"{what} needs two different tasks and {needs}, got {a!r}, {b!r}, {given}"
        )
    return target, a, b


def _chain(a: str, b: str, nbytes: int, hops: int, cross: bool) -> tuple[Any, Any]:
    """A chain of `hops` multiplies of a float32 tensor of `nbytes` on task `a`, every other
    one on task `b` when `cross` (so `hops` crossings); returns (graph, fetch)."""
    from devplace.adapter._tf import tf

    graph = tf.Graph()
    with graph.as_default():
        with tf.device(f"{a}/device:CPU:0"):
            h = tf.fill([max(1, nbytes // 4)], 1.0)  # no variable: servers keep those by name
        for i in range(hops):
            with tf.device(f"{b if cross and i % 2 == 0 else a}/device:CPU:0"):
                h = h * 1.0001
        with tf.device(f"{a}/device:CPU:0"):
            y = tf.reduce_sum(h)
    return graph, y


def link_records(
    sess: Any,
    a: str,
    b: str,
    sizes: Sequence[int] = DEFAULT_LINK_SIZES,
    hops: int = 8,
    runs: int = 15,
) -> list[dict[str, float]]:
    """Chains between tasks `a` and `b` timed with and without crossings, per size: records
    as `crossing_costs` and `fit_crossings` read them."""
    target, a, b = _two_tasks(
        sess,
        a,
        b,
        "measure_link",
        "an even hops >= 2",
        f"hops={hops!r}",
        hops >= 2 and hops % 2 == 0,
    )
    records = []
    for nbytes in sizes:
        same, cross = (
            _fresh_step_us(target, *_chain(a, b, int(nbytes), hops, c), runs) for c in (False, True)
        )
        records.append(
            {
                "bytes": float(nbytes),
                "same_chain_us": same,
                "cross_chain_us": cross,
                "crossings": float(hops),
            }
        )
    return records


def measure_link(
    sess: Any,
    a: str,
    b: str,
    sizes: Sequence[int] = DEFAULT_LINK_SIZES,
    hops: int = 8,
    runs: int = 15,
) -> Link:
    """The link between tasks `a` and `b` (task or device names) of `sess`'s cluster, timed.

    A chain of `hops` multiplies alternating between the two tasks (each hop a gRPC transfer
    of a float32 tensor of each of `sizes` bytes) against the same chain on `a`; a transfer
    costs the difference over the hops, and `fit_link` fits alpha + beta * bytes to those
    costs. Its name says the pair; `CostModel(task_links={task_pair(a, b): link})` uses it.
    """
    records = link_records(sess, a, b, sizes, hops, runs)
    return fit_link(*crossing_costs(records), name=f"{_task(a)}<->{_task(b)}")


def _busy_pair(a: str, b: str, nbytes: int, crossings: int, layers: int, n: int) -> tuple[Any, Any]:
    """Tasks `a` and `b` each busy with a chain of `layers` n x n matmuls, while `crossings`
    float32 tensors of `nbytes` each go from `a` to `b` and as many from `b` to `a`, all
    ready at the step's start; returns (graph, fetch)."""
    from devplace.adapter._tf import tf

    graph = tf.Graph()
    with graph.as_default():
        outs: dict[str, list[Any]] = {a: [], b: []}
        for task in (a, b):
            with tf.device(f"{task}/device:CPU:0"):
                h, w = tf.fill([n, n], 1e-3), tf.fill([n, n], 1e-3)
                for _ in range(layers):
                    h = tf.tanh(tf.matmul(h, w))
                outs[task].append(tf.reduce_sum(h))
        for src, dst in ((a, b), (b, a)):
            for _ in range(crossings):
                with tf.device(f"{src}/device:CPU:0"):
                    x = tf.fill([max(1, nbytes // 4)], 1.0) * 1.0001
                with tf.device(f"{dst}/device:CPU:0"):
                    outs[dst].append(x[0])  # the whole tensor crosses, one element is used
        with tf.device(f"{b}/device:CPU:0"):
            yb = tf.add_n(outs[b])
        with tf.device(f"{a}/device:CPU:0"):
            y = tf.add_n(outs[a]) + yb
    return graph, y


def busy_crossing_records(
    sess: Any,
    a: str,
    b: str,
    sizes: Sequence[int] = DEFAULT_LINK_SIZES,
    crossings: int = 4,
    runs: int = 15,
    rounds: int = 3,
    layers: int = 8,
    n: int = 256,
) -> list[dict[str, float]]:
    """Steps of two busy tasks with `crossings` tensors crossing each way per size, against
    the same step with none: records as `crossing_costs` reads them (a crossing there is one
    tensor each way: what each task pays per tensor it sends plus per tensor it receives).
    Each time is the median of `rounds` interleaved rounds after one discarded."""
    target, a, b = _two_tasks(
        sess,
        a,
        b,
        "measure_crossings",
        "crossings >= 1",
        f"crossings={crossings!r}",
        crossings >= 1,
    )
    cases = [(4, 0), *((int(size), crossings) for size in sizes)]
    graphs = [_busy_pair(a, b, size, k, layers, n) for size, k in cases]
    timed = [[_fresh_step_us(target, *g, runs) for g in graphs] for _ in range(rounds + 1)]
    medians = np.median(timed[1:], axis=0)
    return [
        {
            "bytes": float(size),
            "same_chain_us": float(medians[0]),
            "cross_chain_us": float(step),
            "crossings": float(crossings),
        }
        for (size, _), step in zip(cases[1:], medians[1:], strict=True)
    ]


def measure_crossings(
    sess: Any,
    a: str,
    b: str,
    sizes: Sequence[int] = DEFAULT_LINK_SIZES,
    crossings: int = 4,
    runs: int = 15,
    rounds: int = 3,
) -> Link:
    """The link between tasks `a` and `b` as transfers cost two busy tasks, timed in steps.

    Both tasks run a chain of matmuls while `crossings` float32 tensors of each of `sizes`
    bytes go each way (`busy_crossing_records`); a crossing costs the step's growth over the
    crossings, and `fit_link` fits alpha + beta * bytes to those costs. Each task's core
    serializes, decodes and copies every tensor it sends or receives besides its ops, so this
    is the CPU a crossing takes (sender and receiver together), which a chain of transfers
    between idle tasks (`measure_link`) does not show: there the two ends' work overlaps. The
    cost model books it on both tasks' cores (`CostModel.task_send_share`).
    """
    records = busy_crossing_records(sess, a, b, sizes, crossings, runs, rounds)
    name = f"crossings between busy {_task(a)}<->{_task(b)}"
    return fit_link(*crossing_costs(records), name=name)


def same_host(sess: Any, a: str, b: str) -> bool:
    """True when tasks `a` and `b` of `sess`'s cluster listen on one host (their spec's
    addresses name the same host); unknown (no spec on the session): True."""
    spec = getattr(sess, "cluster_spec", None)
    if spec is None:
        return True

    def host(name: str) -> str:
        dev = parse_device(_task(name))
        return str(spec.task_address(dev.job, dev.task or 0)).rsplit(":", 1)[0]

    return host(a) == host(b)


def task_links(
    sess: Any, tasks: Sequence[str], measure: Callable[[str, str], Link] | None = None
) -> dict[tuple[str, str], Link]:
    """A link per pair of `tasks` (`measure`, default `measure_crossings`): pairs on one host
    share one measurement (the same-host link), pairs on two hosts are measured per pair of
    hosts."""
    measure = measure or (lambda a, b: measure_crossings(sess, a, b))
    found: dict[tuple[str, str], Link] = {}
    by_class: dict[Any, Link] = {}
    names = sorted({_task(t) for t in tasks})
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            key = "same host" if same_host(sess, a, b) else task_pair(a, b)
            if key not in by_class:
                by_class[key] = measure(a, b)
            found[task_pair(a, b)] = by_class[key]
    return found


def master_task(sess: Any) -> str | None:
    """The task whose address `sess`'s target names (the master: fed tensors start there,
    fetched ones end there), or None when the session has no cluster spec naming it."""
    spec = getattr(sess, "cluster_spec", None)
    address = session_target(sess).removeprefix("grpc://")
    if spec is None:
        return None
    for job in spec.jobs:
        for index in spec.task_indices(job):
            if spec.task_address(job, index) == address:
                return f"/job:{job}/task:{index}"
    return None


@dataclass(frozen=True)
class ServerConstants:
    """Measured server constants: `base_us` (a step of one tiny op on the master's task),
    `task_step_us` (the master's work per further task a step involves: the slope over 1..K
    tasks), `threads` per task (how many independent ops it runs at once), and
    `master_task_us` (the master's task's share of `base_us`, saved by a step that runs
    nothing there: `base_us` + `task_step_us` less a step of one tiny op on the second task
    alone), `remote_start_us` (how late the other tasks' first ops start, from traces, while
    the master's task works)."""

    base_us: float
    task_step_us: float
    threads: Mapping[str, int]
    master_task_us: float = 0.0
    remote_start_us: float = 0.0


def _step_over_tasks(target: str, tasks: list[str], runs: int) -> float:
    """Step time of one tiny op on each of `tasks`, fetched as one group."""
    from devplace.adapter._tf import tf

    graph = tf.Graph()
    with graph.as_default():
        ops = []
        for task in tasks:
            with tf.device(f"{task}/device:CPU:0"):
                ops.append(tf.identity(tf.fill([1], 1.0)).op)
        fetch = tf.group(*ops)
    return _fresh_step_us(target, graph, fetch, runs)


def _remote_start(target: str, tasks: list[str], runs: int, n: int = 256) -> float:
    """Median over traced steps of how late the first op of `tasks[1:]` starts after the
    first op of `tasks[0]` (the master's), which runs a chain of eight n x n matmuls."""
    import devplace as dp
    from devplace.adapter._tf import tf

    graph = tf.Graph()
    with graph.as_default():
        with tf.device(f"{tasks[0]}/device:CPU:0"):
            h = tf.fill([n, n], 1e-3)
            for _ in range(8):
                h = tf.matmul(h, h)
            ops = [tf.reduce_sum(h).op]
        for task in tasks[1:]:
            with tf.device(f"{task}/device:CPU:0"):
                ops.append(tf.identity(tf.fill([1], 1.0)).op)
        fetch = tf.group(*ops)
    lates = []
    with dp.Session(target=target, graph=graph, optimize=False) as sess:
        step_time_us(sess, fetch, None, 2)
        for _ in range(runs):
            meta = tf.RunMetadata()
            options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
            sess.run(fetch, options=options, run_metadata=meta)
            first: dict[str, int] = {}
            for dev in meta.step_stats.dev_stats:
                task = task_of(dev.device)
                starts = [node.all_start_micros for node in dev.node_stats]
                if task is not None and starts:
                    first[task] = min(first.get(task, starts[0]), *starts)
            if tasks[0] in first and len(first) > 1:
                lates.append(min(first[t] for t in first if t != tasks[0]) - first[tasks[0]])
    return max(float(np.median(lates)), 0.0) if lates else 0.0


def _parallel_chains(target: str, task: str, chains: int, runs: int, n: int = 256) -> float:
    """Step time of `chains` independent chains of four n x n matmuls on `task`."""
    from devplace.adapter._tf import tf

    graph = tf.Graph()
    with graph.as_default(), tf.device(f"{task}/device:CPU:0"):
        outs = []
        for _ in range(chains):
            h = tf.fill([n, n], 1e-3)
            for _ in range(4):
                h = tf.matmul(h, h)
            outs.append(tf.reduce_sum(h))
        fetch = tf.add_n(outs)
    return _fresh_step_us(target, graph, fetch, runs)


def measure_servers(
    sess: Any, tasks: Sequence[str], runs: int = 15, chains: int = 4, rounds: int = 3
) -> ServerConstants:
    """Time `sess`'s servers: steps involving 1..K of `tasks` (the first should be the
    master's) give the base (the first alone) and the per-task step cost (the least-squares
    slope), each the median of `rounds` interleaved rounds after one round discarded (a
    fresh server's first steps are slow), and a step on the second task alone the master's
    task's own share of the base; per task, `chains` independent chains of matmuls against
    one (medians of `rounds` interleaved rounds), each less a step's fixed cost, how many ops
    it runs at once (rounded, 1..`chains`); from traced steps, how late the other tasks'
    partitions start (`ServerConstants.remote_start_us`). The executor's cost per op is not
    measured here: each profile is calibrated against its own untraced step
    (`autoplacer.calibration`)."""
    target = _target(sess)
    names = list(dict.fromkeys(_task(t) for t in tasks))
    ks = list(range(1, len(names) + 1))
    # The first 1..K tasks, then the second alone (the master's task idle), in interleaved
    # rounds, the median of each: one burst of load would otherwise make the slope, and
    # every prediction across tasks, wrong.
    probes = [names[:k] for k in ks] + [names[1:2]] * (len(names) > 1)
    timed = [[_step_over_tasks(target, p, runs) for p in probes] for _ in range(rounds + 1)]
    medians = np.median(timed[1:], axis=0)
    steps = medians[: len(ks)]
    # steps[0]: the master's task alone; each further task adds the slope.
    slope = max(float(np.polyfit(ks, steps, 1)[0]), 0.0) if len(ks) > 1 else 0.0
    own = min(max(steps[0] + slope - medians[-1], 0.0), steps[0]) if len(ks) > 1 else 0.0
    threads = {}
    for task in names:
        # one chain against `chains`, in interleaved rounds too: timed once each, a burst of
        # load can make a one-core task look like two threads. Each less the step of a tiny
        # op on that task: a task other than the master's costs a step more (`task_step_us`),
        # which left in made one chain look slow and a one-core task two threads
        # (docs/autoplace.md, "Measurements behind the timing rules").
        base = steps[0] if task == names[0] else medians[-1]
        pairs = [
            [_parallel_chains(target, task, c, runs) for c in (1, chains)] for _ in range(rounds)
        ]
        one, many = np.median(pairs, axis=0) - base
        threads[task] = int(min(chains, max(1, round(chains * one / max(many, 1e-9)))))
    return ServerConstants(
        base_us=float(steps[0]),
        task_step_us=slope,
        threads=threads,
        master_task_us=float(own),
        remote_start_us=_remote_start(target, names, runs) if len(names) > 1 else 0.0,
    )
