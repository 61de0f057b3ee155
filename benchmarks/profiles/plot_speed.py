"""How long `plot_profile` and `compare_profiles` take for traces of growing size.

Builds synthetic TensorFlow-shaped traces (3 devices, 2 threads each, one cross-device flow
per 5 ops) with `--ops` ops, draws each `--rounds` times to PNG, and prints median seconds.

    .venv/bin/python benchmarks/profiles/plot_speed.py [--ops 100 1000 6000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from typing import Any

from devplace.plot import compare_profiles, plot_profile

TYPES = ["MatMul", "Add", "Relu", "Conv2D", "Mul", "Sum", "Tanh", "Sin", "Cos", "Exp", "Log"]


def synthetic_trace(n_ops: int, seed: int = 1) -> dict[str, Any]:
    """A trace with `n_ops` ops spread over 3 devices, and cross-device flow events."""
    rng = random.Random(seed)
    devices = {1: "/device:CPU:0", 2: "/device:CPU:1", 3: "/device:GPU:0"}
    events: list[dict[str, Any]] = [
        {"ph": "M", "name": "process_name", "pid": pid, "args": {"name": f"{name} Compute"}}
        for pid, name in devices.items()
    ]
    t = 0
    for i in range(n_ops):
        pid, dur = rng.choice(list(devices)), rng.randint(1, 50)
        name, kind = f"layer{i // 100}/op{i}", rng.choice(TYPES)
        events.append(
            {
                "ph": "X",
                "name": kind,
                "pid": pid,
                "tid": rng.randint(0, 1),
                "ts": t,
                "dur": dur,
                "args": {"name": name, "op": kind},
            }
        )
        if i % 5 == 0:
            to = rng.choice([p for p in devices if p != pid])
            events.append(
                {"ph": "s", "cat": "DataFlow", "name": name, "pid": pid, "ts": t + dur, "id": i}
            )
            events.append(
                {"ph": "t", "cat": "DataFlow", "name": name, "pid": to, "ts": t + dur + 3, "id": i}
            )
        t += rng.randint(0, 20)
    return {"traceEvents": events}


def seconds(fn: Any, rounds: int) -> float:
    """Median wall time of `fn()` over `rounds` calls."""
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    """Print one line per trace size: ops, show seconds, compare seconds."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, nargs="+", default=[100, 1000, 6000])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "x.png")
        print(f"{'ops':>6}  {'show (s)':>9}  {'compare (s)':>11}")
        for n in args.ops:
            trace = synthetic_trace(n)
            show = seconds(lambda t=trace: plot_profile(t, out), args.rounds)
            both = seconds(lambda t=trace: compare_profiles(t, t, out), args.rounds)
            print(f"{n:>6}  {show:>9.2f}  {both:>11.2f}")


if __name__ == "__main__":
    main()
