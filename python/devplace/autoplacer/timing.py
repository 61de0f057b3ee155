"""Step times measured on real sessions: a session's step, a placement's step in a fresh
session, and several placements timed in interleaved rounds.

A session's step is the mean of its steps without the fastest and slowest tenth
(`STEP_TRIM`): what a run of many steps costs per step, never moved by a rare stall (a
100 ms one in 30 steps, seen on servers). Not the median: a split across servers has two
kinds of step, as the fed input leaves its task early or late, and the median of a few steps
jumps between them (docs/autoplace.md, "Measurements behind the timing rules").

The one module of the autoplacer that times real steps; `api`, `profiles` and `measure` use it
(it imports none of them).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from scipy.stats import trim_mean

__all__ = ["STEP_TRIM", "measure_in_rounds", "measure_placement", "step_time_us"]

#: The share of steps left out at each end of a session's step times before their mean.
STEP_TRIM = 0.1


def step_time_us(sess: Any, fetches: Any, feed: Any = None, runs: int = 20) -> float:
    """Wall time (µs) of a step of `fetches`: of `runs` steps after two warm-up steps, the
    mean without the fastest and slowest `STEP_TRIM` of them."""
    for _ in range(2):
        sess.run(fetches, feed_dict=feed)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        sess.run(fetches, feed_dict=feed)
        times.append((time.perf_counter() - t0) * 1e6)
    return float(trim_mean(times, STEP_TRIM))


def measure_placement(
    session: Any, fetches: Any, devices: Mapping[str, str], feed: Any = None, runs: int = 20
) -> float:
    """Step time (µs, `step_time_us`) of `fetches` with each op named in `devices` on its device,
    in a fresh session of `session`'s graph, target and config.

    Every global variable is initialised afresh (values do not change step times; on a
    cluster this resets the servers' copies too); the ops' devices are restored afterwards.
    """
    from devplace.adapter._tf import session_config, set_op_device, tf

    graph = session.graph
    ops = [graph.get_operation_by_name(name) for name in devices]
    before = [op.device for op in ops]
    try:
        for op in ops:
            set_op_device(op, devices[op.name])
        with graph.as_default():
            inits = [v.initializer for v in tf.global_variables()]
        config = session_config(session)
        with tf.Session(session.sess_str, graph=graph, config=config) as sess:
            if inits:
                sess.run(inits)
            return step_time_us(sess, fetches, feed, runs)
    finally:
        for op, dev in zip(ops, before, strict=True):
            set_op_device(op, dev)


def measure_in_rounds(
    placements: Mapping[str, Sequence[int]],
    measure: Callable[[Sequence[int]], float],
    rounds: int,
) -> dict[str, list[float]]:
    """Each labelled placement's `measure` over `rounds` interleaved rounds, so a burst of
    load hits them all alike; labels with one assignment are measured once per round and share
    the times (each label its own list, so a label's later rounds extend only its own)."""
    distinct = {tuple(map(int, a)): a for a in placements.values()}
    timed: dict[tuple[int, ...], list[float]] = {key: [] for key in distinct}
    for _ in range(rounds):
        for key, a in distinct.items():
            timed[key].append(measure(a))
    return {label: list(timed[tuple(map(int, a))]) for label, a in placements.items()}
