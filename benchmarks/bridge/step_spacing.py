"""What a little work between two session runs costs a training step, in Python alone.

    .venv/bin/python benchmarks/bridge/step_spacing.py [loops]

The training step and the scalar fetch of bench.jl (a 10-element variable, `sum(w ** 2)`,
gradient descent), each run `dp.run` 200 times in a loop with a busy wait of 0, 3, 6 or 12 µs
after each run (the wait subtracted from the figure); prints the median µs per run of `loops`
(default 15) loops per wait. TensorFlow's threads spin for a while waiting for the next step,
then sleep: a loop that starts the next step inside that while pays less than one that does
anything between steps (Julia's side of a call, or a Python program's own work).
"""

from __future__ import annotations

import statistics
import sys
import time
from typing import Any

import devplace as dp

WAITS_US = (0, 3, 6, 12)


def busy_wait(us: int) -> None:
    """Keep this thread busy for `us` microseconds."""
    end = time.perf_counter_ns() + us * 1000
    while time.perf_counter_ns() < end:
        pass


def per_run_us(sess: Any, fetch: Any, n: int, wait_us: int) -> float:
    """Microseconds per `dp.run(sess, fetch)` over `n` runs, each followed by `wait_us` of
    busy waiting, that wait left out."""
    t = time.perf_counter_ns()
    for _ in range(n):
        dp.run(sess, fetch)
        if wait_us:
            busy_wait(wait_us)
    return (time.perf_counter_ns() - t) / n / 1e3 - wait_us


def main(loops: int) -> None:
    """Print, for the training step and the scalar fetch, the median µs per run by wait."""
    tf = dp.tf
    w = tf.Variable(tf.ones([10], dtype=tf.float64))
    loss = tf.reduce_sum(w**2)
    step = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
    sess = dp.Session()
    dp.init(sess)
    for name, fetch in (("training step", step), ("scalar fetch", loss)):
        per_wait: dict[int, list[float]] = {us: [] for us in WAITS_US}
        for _ in range(loops):
            for us in WAITS_US:  # by turns: every wait sees the same seconds
                per_wait[us].append(per_run_us(sess, fetch, 200, us))
        cells = ", ".join(f"{us} µs: {statistics.median(v):.1f}" for us, v in per_wait.items())
        print(f"{name}, µs per run by the wait after each: {cells}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 15)
