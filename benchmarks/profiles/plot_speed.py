"""How long `plot_profile` and `compare_profiles` take for traces of growing size.

Builds synthetic TensorFlow-shaped traces (3 devices, 2 threads each, one cross-device flow
per 5 ops) with `--ops` ops, draws each `--rounds` times to PNG, and prints median seconds.

    .venv/bin/python benchmarks/profiles/plot_speed.py [--ops 100 1000 6000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from devplace.views.plot import compare_profiles, plot_profile

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))
from trace_builders import synthetic_trace  # noqa: E402


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
