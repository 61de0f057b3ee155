"""Simulator fidelity: simulated vs measured step time on this machine's logical CPU devices.

    .venv/bin/python benchmarks/placement/fidelity.py [--runs 15]

1. Measures what the simulator needs and nothing it is judged on: the per-step overhead of
   `Session.run` (a trivial fetch), and the cost of a tensor crossing between two logical CPU
   devices at several sizes (a chain alternating devices vs the same chain on one device), to
   which alpha + beta * bytes is fitted (the "measured fit" link).
2. Profiles each benchmark graph once on one device (median of 5 traced runs).
3. For 2 and 4 logical CPUs and several placements (all on CPU:0, round robin, m-ETF, auto),
   builds the graph afresh, applies the placement, and measures the median wall step time.
   The simulator predicts it from the profile, the fitted link and the shared thread pool
   (all logical CPUs share `cores` inter-op threads; each may run that many ops at once).
Writes fidelity.json and fidelity.md beside this file.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

import devplace as dp
from devplace.autoplace import CostModel, fit_link, place, simulate
from devplace.autoplace.tf_graph import problem_from_graph

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from models import MODELS  # noqa: E402

tf = dp.tf
CORES = len(os.sched_getaffinity(0))


def step_time_us(sess: Any, fetch: Any, feed: Any, runs: int) -> float:
    """Median wall time of `runs` steps after two warm-ups, in µs."""
    for _ in range(2):
        sess.run(fetch, feed_dict=feed)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        sess.run(fetch, feed_dict=feed)
        times.append((time.perf_counter() - t0) * 1e6)
    return statistics.median(times)


def overhead_us(runs: int) -> float:
    """Step time of fetching one constant: what every step costs beyond its ops."""
    graph = tf.Graph()
    with graph.as_default():
        c = tf.constant(1.0)
    with dp.Session(cpus=1, optimize=False, graph=graph) as sess:
        return step_time_us(sess, c, None, runs * 4)


def transfer_samples(runs: int, hops: int = 16) -> tuple[list[float], list[float]]:
    """Per-transfer µs between CPU:0 and CPU:1 for several tensor sizes."""
    sizes, costs = [], []
    for elements in (256, 16384, 262144, 1048576):
        steps = {}
        for alternate in (False, True):
            graph = tf.Graph()
            with graph.as_default():
                x = tf.placeholder(tf.float32, [elements])
                h = x
                for k in range(hops):
                    with tf.device(f"/device:CPU:{k % 2 if alternate else 0}"):
                        h = h * 1.0001
                y = tf.reduce_sum(h)
            feed = {x: np.ones(elements, np.float32)}
            with dp.Session(cpus=2, optimize=False, graph=graph) as sess:
                steps[alternate] = step_time_us(sess, y, feed, runs)
        sizes.append(4.0 * elements)
        costs.append(max(0.0, (steps[True] - steps[False]) / (hops - 1)))
    return sizes, costs


PLACERS = ("single", "round_robin", "m_etf", "auto")


def main() -> None:
    """Measure, simulate, and write the comparison."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=15, help="timed steps per measurement")
    args = parser.parse_args()
    base = overhead_us(args.runs)
    sizes, costs = transfer_samples(args.runs)
    link = fit_link(sizes, costs)
    print(f"overhead {base:.0f} us; link alpha {link.alpha:.1f} us, beta {link.beta:.3g} us/B")
    rows = []
    for name, build in MODELS.items():
        graph, fetch, feed, init = build()
        with dp.Session(cpus=1, optimize=False, graph=graph) as sess:
            sess.run(init)
            prof = dp.run_profile(sess, fetch, feed=feed, repeat=5, progress=False)
        for cpus in (2, 4):
            devices = [f"/device:CPU:{i}" for i in range(cpus)]
            cost = CostModel.measured(link, cpu_threads=CORES, cpu_slots=CORES)
            problem, ops = problem_from_graph(fetch, devices, cost=cost, profile=prof, graph=graph)
            for strategy in PLACERS:
                assignment = place(problem, strategy, 1.0)
                predicted = simulate(problem, assignment).makespan + base
                g2, f2, feed2, init2 = build()
                with g2.as_default():
                    for op, a in zip(ops, assignment):
                        g2.get_operation_by_name(op.name)._set_device(problem.devices[a].name)
                feed2 = {g2.get_tensor_by_name(k.name): v for k, v in feed.items()}
                with dp.Session(cpus=cpus, optimize=False, graph=g2) as sess:
                    sess.run(init2)
                    measured = step_time_us(sess, f2, feed2, args.runs)
                used = len(set(assignment.tolist()))
                rows.append(
                    {
                        "model": name,
                        "cpus": cpus,
                        "placer": strategy,
                        "devices_used": used,
                        "measured_us": measured,
                        "simulated_us": predicted,
                        "error": (predicted - measured) / measured,
                    }
                )
                print(rows[-1], flush=True)
    errors = np.array([abs(r["error"]) for r in rows])
    result = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "command": "python benchmarks/placement/fidelity.py " + " ".join(sys.argv[1:]),
        "cores": CORES,
        "overhead_us": base,
        "link": {"alpha_us": link.alpha, "beta_us_per_byte": link.beta},
        "transfer_samples": {"bytes": sizes, "us": costs},
        "rows": rows,
        "mean_abs_error": float(errors.mean()),
        "max_abs_error": float(errors.max()),
    }
    (HERE / "fidelity.json").write_text(json.dumps(result, indent=1))
    lines = [
        f"Date {result['date']}; `{result['command']}`; {CORES} cores.",
        f"Per-step overhead {base:.0f} µs; fitted link alpha {link.alpha:.1f} µs, "
        f"beta {link.beta * 1e6:.3f} µs/MB.",
        "",
        "| model | CPUs | placer | devices used | measured µs | simulated µs | error |",
        "|---|---:|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['model']} | {r['cpus']} | {r['placer']} | {r['devices_used']} | "
            f"{r['measured_us']:.0f} | {r['simulated_us']:.0f} | {100 * r['error']:+.1f}% |"
        )
    lines += [
        "",
        f"Mean |error| {100 * result['mean_abs_error']:.1f}%, "
        f"max {100 * result['max_abs_error']:.1f}%.",
    ]
    (HERE / "fidelity.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
