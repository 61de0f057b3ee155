"""Time and peak memory of `devplace profile show` and `profile compare` on large traces.

Writes two synthetic TensorFlow-shaped traces (`synthetic_trace` of tests/trace_builders.py:
3 devices, 2 threads each) of `--ops` op events and `--flows` cross-device flows, then runs each
command in a fresh interpreter, as a user would, and prints its wall time and peak resident
memory.

    .venv/bin/python benchmarks/profiles/large_trace.py [--ops 200000] [--flows 20000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))
from trace_builders import synthetic_trace  # noqa: E402


def measure(command: list[str]) -> tuple[float, float, float]:
    """Run `command`; its wall seconds, CPU seconds (user + system) and peak resident MiB (it
    must succeed)."""
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(command)}")
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main() -> None:
    """Print one line per command: seconds and peak MiB."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=200_000)
    parser.add_argument("--flows", type=int, default=20_000)
    args = parser.parse_args()
    every = max(1, args.ops // max(1, args.flows))
    devplace = [sys.executable, "-m", "devplace", "profile"]
    with tempfile.TemporaryDirectory() as folder:
        a, b, out = (os.path.join(folder, name) for name in ("a.json", "b.json", "x.png"))
        for seed, path in ((1, a), (2, b)):
            with open(path, "w") as f:
                json.dump(synthetic_trace(args.ops, seed, every), f)
        print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} CPUs")
        print(f"trace: {args.ops} ops, {args.ops // every} flows, {os.path.getsize(a) >> 20} MiB")
        for name, command in (
            ("profile show", [*devplace, "show", a, "-o", out]),
            ("profile compare", [*devplace, "compare", a, b, "-o", out]),
        ):
            load = os.getloadavg()[0]
            seconds, cpu, mib = measure(command)
            print(
                f"{name:<16} {seconds:5.1f} s wall  {cpu:5.1f} s CPU  {mib:5.0f} MiB peak  "
                f"(load average {load:.1f} before)"
            )


if __name__ == "__main__":
    main()
