"""The Python side of benchmarks/bridge/bench.jl: the same calls made by Python where DevPlace.jl's
Python runs (in Julia's process, or in the host process).

    .venv/bin/python benchmarks/bridge/host_calls.py [iterations]

bench.jl imports this module in that Python and times each call here, interleaved with the same
call from Julia, so both numbers come from the same minutes of the same machine. On its own it
prints the graph-building rate and what a Python device function adds per op.

The graph is `x = sin(x) * 0.5 + 1.0` per iteration (Sin, Const, Mul, Const, AddV2).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import devplace as dp

tf = dp.tf


def build(n: int) -> float:
    """Seconds per op to build `n` iterations in a fresh graph."""
    tf.reset_default_graph()
    return build_in_scope(n)


def on_cpu(op: object) -> str:
    """A device function doing what the Julia one does."""
    return "/device:CPU:0"


def build_with_device_function(n: int) -> float:
    """Seconds per op to build `n` iterations in a fresh graph under a device function."""
    tf.reset_default_graph()
    with tf.device(on_cpu):
        return build_in_scope(n)


def build_in_scope(n: int) -> float:
    """Seconds per op to build `n` iterations in the current graph and scopes."""
    graph = tf.get_default_graph()
    x = dp.constant(1.0)
    before = len(graph.get_operations())
    t = time.perf_counter()
    for _ in range(n):
        x = dp.sin(x) * 0.5 + 1.0
    return (time.perf_counter() - t) / (len(graph.get_operations()) - before)


def per_call(f: Callable[[], Any], n: int) -> float:
    """Seconds per call of `f`, over `n` calls."""
    t = time.perf_counter()
    for _ in range(n):
        f()
    return (time.perf_counter() - t) / n


def aligned(values: Any) -> Any:
    """A numpy copy of `values` whose data starts on a 64-byte boundary, Python's best case for a
    feed: TensorFlow reads such an array where it is and copies any other (a large numpy
    array's data starts 16 bytes past a page, and feeding 8 MB then costs about 2.6 times as
    much here)."""
    src = np.asarray(values)
    raw = np.empty(src.nbytes + 64, np.uint8)
    start = -raw.ctypes.data % 64
    out = raw[start : start + src.nbytes].view(src.dtype).reshape(src.shape)
    out[...] = src
    return out


def time_run(sess: Any, fetches: Any, feed: Any, n: int) -> float:
    """Seconds per `dp.run(sess, fetches, feed)` from Python, over `n` calls (the call Julia's
    `run` makes in the host, without the bridge)."""
    return per_call(lambda: dp.run(sess, fetches, feed), n)


def time_new_arrays(values: Any, n: int) -> float:
    """Seconds per making a new array of `values`' size and copying `values` into it, over `n`
    (what a fetch's result costs any program: the reference for Julia's own arrays)."""
    src = np.asarray(values)

    def make() -> None:
        a = np.empty_like(src)
        a[...] = src

    return per_call(make, n)


def bfgs(sess: Any, loss: Any, iterations: int, sink: str) -> float:
    """Seconds for the minimization DevPlace.jl's `BFGS!(sess, loss, iterations)` makes, driven
    from Python: scipy's L-BFGS-B with the same options, each evaluation and step printed (to
    `sink`) by a Python callback as `BFGS!` prints them."""
    from devplace.bridge.adcme.optim import ScipyOptimizerInterface

    t = time.perf_counter()  # BFGS! makes its optimizer (the gradients' ops) each time too
    options = {"maxiter": iterations, "ftol": 1e-12, "gtol": 1e-12}
    opt = ScipyOptimizerInterface(loss, method="L-BFGS-B", options=options)
    losses: list[float] = []
    current = [0, 0.0]  # evaluations, last loss

    with open(sink, "w") as out:

        def on_loss(value: float) -> None:
            print(f"iter {current[0]}, current loss={value}", file=out)
            current[0] += 1
            current[1] = value

        def on_step(x: Any) -> None:
            print(f"================ STEP {len(losses)} ===============", file=out)
            losses.append(current[1])

        opt.minimize(sess, fetches=[loss], loss_callback=on_loss, step_callback=on_step)
        return time.perf_counter() - t


def apply_per_op(spec: Any, n: int = 5000) -> float:
    """Seconds per op that TensorFlow's application of the device scope `spec` (None: a scope
    of no device) takes, alone: `Graph._apply_device_functions` on `n` ops already built."""
    graph = tf.Graph()
    with graph.as_default():
        ops = [tf.constant(1.0).op for _ in range(n)]
        with graph.device(spec):
            t = time.perf_counter()
            for op in ops:
                graph._apply_device_functions(op)
            return (time.perf_counter() - t) / n


class Timed:
    """`fn` (a device function) timed: the seconds inside it per call, while a graph is built."""

    def __init__(self, fn: Callable[[Any], Any]) -> None:
        self.fn = fn
        self.seconds = 0.0
        self.calls = 0

    def __call__(self, op: Any) -> Any:
        t = time.perf_counter()
        try:
            return self.fn(op)
        finally:
            self.seconds += time.perf_counter() - t
            self.calls += 1

    def per_call(self) -> float:
        """Seconds per call so far."""
        return self.seconds / max(self.calls, 1)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    build(50)  # warm up
    plain = min(build(n) for _ in range(5))
    with_fn = min(build_with_device_function(n) for _ in range(5))
    print(f"python graph building: {1 / plain:.0f} ops/s ({plain * 1e6:.1f} us/op)")
    print(f"python device function: {(with_fn - plain) * 1e6:.1f} us/op extra")


if __name__ == "__main__":
    main()
