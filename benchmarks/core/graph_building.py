"""Graph-building speed through devplace vs raw tf.compat.v1, on the same graph, side by side.

Builds the seeds' pattern (variables under a device function, chains of sin/cos/mul) with
`n` ops, once with devplace's scopes and device function and once with raw `tf.device` and the
seeds' hand-written function, interleaved (order rotated each round) `rounds` times, and
prints ops/s medians.
Also prints `import devplace` time measured in a fresh interpreter.

    .venv/bin/python benchmarks/core/graph_building.py [--ops 6000] [--rounds 7]
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import statistics
import subprocess
import sys
import time

import tensorflow

import devplace as dp

tf = dp.tf
PS_OPS = ["Variable", "VariableV2", "AutoReloadVariable"]


def raw_assign_to_device(device, ps_device="/device:CPU:0"):
    """The seeds' function as a user would write it, no checks."""

    def _assign(op):
        node_def = op if isinstance(op, tf.NodeDef) else op.node_def
        return ps_device if node_def.op in PS_OPS else device

    return _assign


def build(scope, variable, sin, cos, n_ops: int) -> int:
    """Build chains of ~n_ops ops under `scope`; returns the op count."""
    graph = tf.Graph()
    with graph.as_default(), scope():
        while len(graph.get_operations()) < n_ops:
            x = variable(1.0)
            for _ in range(20):
                x = cos(sin(x)) * 2.0
    return len(graph.get_operations())


def rate(fn) -> float:
    """Ops/s of one build; the previous builds' graphs are collected first, not during it."""
    gc.collect()
    start = time.perf_counter()
    ops = fn()
    return ops / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=6000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()

    variants = {
        "raw tf.compat.v1": lambda: build(
            lambda: tf.device(raw_assign_to_device("/device:GPU:0")),
            tf.Variable,
            tf.sin,
            tf.cos,
            args.ops,
        ),
        "devplace": lambda: build(
            lambda: dp.device(dp.assign_to_device("/device:GPU:0")),
            dp.Variable,
            dp.sin,
            dp.cos,
            args.ops,
        ),
        "raw, string scope": lambda: build(
            lambda: tf.device("/gpu:0"), tf.Variable, tf.sin, tf.cos, args.ops
        ),
        "devplace, dp.gpu(0)": lambda: build(
            lambda: dp.gpu(0), dp.Variable, dp.sin, dp.cos, args.ops
        ),
    }
    for fn in variants.values():
        fn()  # warm-up
    rates: dict[str, list[float]] = {name: [] for name in variants}
    names = list(variants)
    for r in range(args.rounds):
        # Rotate the order each round: a fixed order measurably favours some positions.
        for name in names[r % len(names) :] + names[: r % len(names)]:
            rates[name].append(rate(variants[name]))

    imports = []
    for _ in range(3):
        out = subprocess.run(
            [
                sys.executable,
                "-c",
                "import time; t=time.perf_counter(); import devplace; print(time.perf_counter()-t)",
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        imports.append(float(out.stdout.strip().splitlines()[-1]))

    machine = f"{platform.node()} {platform.machine()}, {os.cpu_count()} cores"
    print(f"machine: {machine}, python {platform.python_version()}, tf {tensorflow.__version__}")
    print(f"command: {' '.join(sys.argv)}   date: {time.strftime('%Y-%m-%d')}")
    print(f"import devplace: median {statistics.median(imports):.2f} s over 3 fresh interpreters")
    print(f"{'variant':<22} {'median ops/s':>12} {'min':>8} {'max':>8}")
    for name, values in rates.items():
        print(
            f"{name:<22} {statistics.median(values):>12.0f} {min(values):>8.0f} {max(values):>8.0f}"
        )
    for base, ours in (
        ("raw tf.compat.v1", "devplace"),
        ("raw, string scope", "devplace, dp.gpu(0)"),
    ):
        # Per-round ratios pair runs made moments apart, so machine drift cancels out.
        ratios = [b / o - 1 for b, o in zip(rates[base], rates[ours], strict=True)]
        q1, median, q3 = statistics.quantiles(ratios, n=4)
        print(
            f"overhead of {ours!r} vs {base!r}: median {median * 100:+.1f}% "
            f"(middle half of rounds {q1 * 100:+.1f}% .. {q3 * 100:+.1f}%)"
        )


if __name__ == "__main__":
    main()
