"""Check automatic placement on this machine's real devices: CPU:0 and GPU:0 (or CPU:1).

    .venv/bin/python benchmarks/placement/verify_gpu.py [--repeat 5] [--runs 30]

For each benchmark model (models.py): profile it whole on each device (`dp.profile_devices`),
fit the CPU <-> GPU link to crossings measured here (`fit_crossings`), run `autoplace` with
`verify=3` (it measures its best candidates and both single-device placements in fresh
sessions, keeping a candidate over the best single device only on a sign test's evidence),
and print the measured medians: all on CPU, all on the second device, the model's own pick,
and what autoplace returned. Without a GPU the second device is a second logical CPU, so the
script runs (and is tested) anywhere. About 2-4 minutes.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import devplace as dp
from devplace.autoplacer import CostModel, autoplace, fit_crossings, profile_devices
from devplace.autoplacer.timing import step_time_us

sys.path.insert(0, str(Path(__file__).resolve().parent))
from models import MODELS  # noqa: E402

tf = dp.tf


def crossings(cpu: str, other: str, runs: int) -> list[dict[str, float]]:
    """A chain of 10 elementwise ops alternating devices vs on one device, 4 B .. 16 MiB."""
    out = []
    for nbytes in (4, 65536, 1 << 20, 16 << 20):
        chain = {}
        for mode in ("same", "cross"):
            graph = tf.Graph()
            with graph.as_default():
                with tf.device(cpu):
                    h = tf.Variable(tf.zeros([max(1, nbytes // 4)]))
                for i in range(10):
                    with tf.device(other if mode == "cross" and i % 2 == 0 else cpu):
                        h = h * 1.0001
                with tf.device(cpu):
                    y = tf.reduce_sum(h)
            with dp.Session(graph=graph, cpus=2, soft=True, optimize=False) as sess:
                dp.init(sess)
                chain[mode] = step_time_us(sess, y, None, runs)
        out.append(
            {
                "bytes": nbytes,
                "same_chain_us": chain["same"],
                "cross_chain_us": chain["cross"],
                "crossings": 10,
            }
        )
    return out


def main() -> None:
    """Profile, place, measure and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="traced runs per profile")
    parser.add_argument("--runs", type=int, default=30, help="timed steps per measurement")
    args = parser.parse_args()
    gpu = bool(tf.config.list_physical_devices("GPU"))
    cpu, other = "/device:CPU:0", "/device:GPU:0" if gpu else "/device:CPU:1"
    link = fit_crossings(crossings(cpu, other, args.runs))
    print(f"devices {cpu} + {other}; link alpha {link.alpha:.1f} us, beta {link.beta:.3g} us/B")
    print(
        f"| model | all on {cpu} | all on {other} | model's pick (predicted) "
        "| autoplace(verify=3) returns |"
    )
    print("|---|---:|---:|---:|---|")
    for name, build in MODELS.items():
        graph, fetch, feed, _ = build()
        profiles = profile_devices(graph, fetch, [cpu, other], feed=feed, repeat=args.repeat)
        # Logical CPUs share one inter-op pool; a real GPU has its own stream and launches.
        pool = {} if gpu else {"cpu_threads": len(os.sched_getaffinity(0))}
        cost = CostModel.from_profiles(profiles, link, **pool)
        with dp.Session(graph=graph, cpus=2, soft=True, optimize=False) as sess:
            dp.init(sess)
            placed = autoplace(
                fetch, [cpu, other], cost=cost, session=sess, feed=feed, verify=3, runs=args.runs
            )
        m = placed.measured
        pick = next(iter(k for k in m if not k.startswith("single:")))
        print(
            f"| {name} | {m[f'single:{cpu}']:.0f} µs | {m[f'single:{other}']:.0f} µs "
            f"| {m[pick]:.0f} µs ({pick}, predicted {placed.predicted[pick]:.0f}) "
            f"| {placed.strategy}: {m[placed.strategy]:.0f} µs "
            f"(predicted {placed.predicted_step_time:.0f}) |",
            flush=True,
        )


if __name__ == "__main__":
    main()
