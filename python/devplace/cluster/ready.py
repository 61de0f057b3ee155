"""Wait until every task of a cluster can reach every other one (after a task restarts).

A restarted server listens at once, but its peers' gRPC channels to it may still be backing
off for up to a second, during which steps fail with `UnavailableError`. `wait_usable` runs
one tiny step that sends a tensor over every pair of tasks, until it succeeds or the deadline.
"""

from __future__ import annotations

import time
from typing import Any

from devplace.adapter._tf import tf
from devplace.cluster import spec as specs
from devplace.cluster.errors import PEER_FAILURES

__all__ = ["wait_usable"]

_GAP_S = 0.3  # between two attempts


def _every_pair(cluster: Any) -> Any:
    names = [(job, task) for job in sorted(cluster.jobs) for task in cluster.task_indices(job)]
    ones = []
    for job, task in names:
        with tf.device(specs.device(job, task)):
            ones.append(tf.constant(1.0))
    sums = []
    for job, task in names:
        with tf.device(specs.device(job, task)):
            sums.append(tf.add_n(ones))
    return sums


def wait_usable(
    spec: Any, timeout: float = 30.0, job: str = "worker", task: int = 0, successes: int = 3
) -> float:
    """Block until a step touching every pair of tasks succeeds; returns the seconds waited.

    The step runs unoptimised (constant folding would keep every tensor on its own task), in a
    new session each time, until it succeeds `successes` times in a row, `_GAP_S` apart: a peer's
    channel that is still settling fails a later run (once, under load, a step failed with
    "connection refused" right after two successes 0.2 s apart). Raises the last TF error
    (with the tasks named, as `ClusterSession` does) after `timeout`.
    """
    from devplace.cluster.session import ClusterSession

    cluster = specs.as_spec(spec)
    start = time.monotonic()
    graph = tf.Graph()
    with graph.as_default():
        fetches = _every_pair(cluster)
    streak = 0
    while streak < successes:
        left = timeout - (time.monotonic() - start)
        with ClusterSession(
            cluster, job, task, graph=graph, timeout=max(1.0, left), optimize=False
        ) as sess:
            try:
                sess.run(fetches)
                streak += 1
            except PEER_FAILURES:
                streak = 0
                if time.monotonic() - start + _GAP_S > timeout:
                    raise
        if streak < successes:
            time.sleep(_GAP_S)
    return time.monotonic() - start
