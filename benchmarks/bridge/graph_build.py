"""Graph-building rate from Python: the graph that benchmarks/bridge/bench.jl builds from Julia.

    .venv/bin/python benchmarks/bridge/graph_build.py [iterations]

Each iteration builds `x = sin(x) * 0.5 + 1.0` (Sin, Const, Mul, Const, AddV2) and, under a
device function, the same again. Prints ops/s (best of 5 runs) and µs per op added by a
Python device function.
"""

from __future__ import annotations

import sys
import time

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


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    build(50)  # warm up
    plain = min(build(n) for _ in range(5))
    with_fn = min(build_with_device_function(n) for _ in range(5))
    print(f"python graph building: {1 / plain:.0f} ops/s ({plain * 1e6:.1f} us/op)")
    print(f"python device function: {(with_fn - plain) * 1e6:.1f} us/op extra")


if __name__ == "__main__":
    main()
