"""Simulator fidelity: simulated vs measured step time on this machine's logical CPU devices.

    .venv/bin/python benchmarks/placement/fidelity.py [--runs 15]

1. Measures what the simulator needs and nothing it is judged on: the per-step overhead of
   `Session.run` (a trivial fetch), the executor's per-op overhead (a chain of tiny ops, its
   untraced step time minus the traced op durations), and the cost of a tensor crossing
   between two logical CPU devices at several sizes (a chain alternating devices vs the same
   chain on one device), to which alpha + beta * bytes is fitted (the "measured fit" link).
2. Profiles each benchmark graph on one device (median of 5 traced runs).
3. For 2 and 4 logical CPUs and several placements (all on CPU:0, round robin, m-ETF, auto),
   builds the graph afresh, applies the placement, and measures the median wall step time
   (right after a fresh one-device profile that the prediction uses); all of it `--rounds`
   times, since the machine's background load varies.
   The simulator predicts it from the profile, the fitted link and the shared thread pool
   (all logical CPUs share `cores` inter-op threads; each may run that many ops at once);
   "calibrated" also sets the CPU speed factor so that the simulated one-device step matches
   the profile's own traced step time (nothing from the measurement under test is used);
   "one-at-a-time" is the alternative model of one op at a time over all logical CPUs.
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


def op_overhead(runs: int, ops: int = 300) -> float:
    """Executor cost per op beyond its traced duration: a chain of tiny adds, untraced."""
    graph = tf.Graph()
    with graph.as_default():
        h = tf.placeholder(tf.float32, [])
        x = h
        for _ in range(ops):
            h = h + 1.0
    feed = {x: 0.0}
    with dp.Session(cpus=1, optimize=False, graph=graph) as sess:
        step = step_time_us(sess, h, feed, runs)
        prof = dp.run_profile(sess, h, feed=feed, repeat=5, progress=False)
    traced = sum(s.duration_us for s in prof.op_stats.values())
    return max(0.0, (step - traced) / ops)


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


def profile_single(build: Any) -> tuple[Any, Any, Any]:
    """Graph, fetch and a fresh profile (median of 5 traced runs) on one device."""
    graph, fetch, feed, init = build()
    with dp.Session(cpus=1, optimize=False, graph=graph) as sess:
        sess.run(init)
        prof = dp.run_profile(sess, fetch, feed=feed, repeat=5, progress=False)
    return graph, fetch, prof


def measure_model(
    name: str, build: Any, link: Any, base: float, per_op: float, runs: int, round_: int
) -> list[dict[str, Any]]:
    """Every placer's placement of one model on 2 and 4 logical CPUs: predicted vs measured.

    The profile the prediction uses is taken right before each measurement, so both see the
    same background load on this shared machine.
    """
    rows = []
    graph, fetch, prof = profile_single(build)
    for cpus in (2, 4):
        devices = [f"/device:CPU:{i}" for i in range(cpus)]
        pooled = CostModel.measured(link, cpu_threads=CORES, cpu_slots=CORES, op_overhead_us=per_op)
        one_at_a_time = CostModel.measured(link, cpu_threads=1, op_overhead_us=per_op)
        problem, ops = problem_from_graph(fetch, devices, cost=pooled, profile=prof, graph=graph)
        for strategy in PLACERS:
            assignment = place(problem, strategy, 1.0)
            _, _, now = profile_single(build)
            fresh, _ = problem_from_graph(fetch, devices, cost=pooled, profile=now, graph=graph)
            serial, _ = problem_from_graph(
                fetch, devices, cost=one_at_a_time, profile=now, graph=graph
            )
            predicted = simulate(fresh, assignment).makespan + base
            # Calibration from the same profile only: its own traced step time against the
            # simulated one-device step gives the CPU's effective speed under the executor.
            alone, _ = problem_from_graph(fetch, devices[:1], cost=pooled, profile=now, graph=graph)
            kappa = (now.step_time_us - base) / simulate(alone, np.zeros(alone.n, int)).makespan
            calibrated = CostModel.measured(
                link,
                cpu_threads=CORES,
                cpu_slots=CORES,
                op_overhead_us=per_op,
                speeds={"cpu": 1.0 / kappa},
            )
            cal, _ = problem_from_graph(fetch, devices, cost=calibrated, profile=now, graph=graph)
            predicted_cal = simulate(cal, assignment).makespan + base
            predicted_serial = simulate(serial, assignment).makespan + base
            g2, f2, feed2, init2 = build()
            for op, a in zip(ops, assignment, strict=True):
                g2.get_operation_by_name(op.name)._set_device(problem.devices[a].name)
            with dp.Session(cpus=cpus, optimize=False, graph=g2) as sess:
                sess.run(init2)
                measured = step_time_us(sess, f2, feed2, runs)
                again = step_time_us(sess, f2, feed2, runs)
            rows.append(
                {
                    "round": round_,
                    "model": name,
                    "cpus": cpus,
                    "placer": strategy,
                    "devices_used": len(set(assignment.tolist())),
                    "profile_step_us": now.step_time_us,
                    "measured_us": measured,
                    "measured_again_us": again,
                    "simulated_us": predicted,
                    "error": (predicted - measured) / measured,
                    "cpu_speed": 1.0 / kappa,
                    "simulated_calibrated_us": predicted_cal,
                    "error_calibrated": (predicted_cal - measured) / measured,
                    "simulated_serial_us": predicted_serial,
                    "error_serial": (predicted_serial - measured) / measured,
                }
            )
            print(rows[-1], flush=True)
    return rows


PLACERS = ("single", "round_robin", "m_etf", "auto")


def main() -> None:
    """Measure, simulate, and write the comparison."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=15, help="timed steps per measurement")
    parser.add_argument("--rounds", type=int, default=3, help="repeat every measurement")
    args = parser.parse_args()
    load_before = [round(x, 2) for x in os.getloadavg()]
    base = overhead_us(args.runs)
    sizes, costs = transfer_samples(args.runs)
    link = fit_link(sizes, costs)
    per_op = op_overhead(args.runs)
    print(
        f"overhead {base:.0f} us/step, {per_op:.1f} us/op; "
        f"link alpha {link.alpha:.1f} us, beta {link.beta:.3g} us/B"
    )
    rows = []
    for round_ in range(args.rounds):
        for name, build in MODELS.items():
            rows += measure_model(name, build, link, base, per_op, args.runs, round_)
    errors = np.array([abs(r["error"]) for r in rows])
    errors_serial = np.array([abs(r["error_serial"]) for r in rows])
    errors_cal = np.array([abs(r["error_calibrated"]) for r in rows])
    noise = np.array([abs(r["measured_again_us"] / r["measured_us"] - 1) for r in rows])
    result = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "command": "python benchmarks/placement/fidelity.py " + " ".join(sys.argv[1:]),
        "cores": CORES,
        "load_before": load_before,
        "load_after": [round(x, 2) for x in os.getloadavg()],
        "overhead_us": base,
        "op_overhead_us": per_op,
        "link": {"alpha_us": link.alpha, "beta_us_per_byte": link.beta},
        "transfer_samples": {"bytes": sizes, "us": costs},
        "rows": rows,
        "mean_abs_error": float(errors.mean()),
        "max_abs_error": float(errors.max()),
        "mean_abs_error_calibrated": float(errors_cal.mean()),
        "max_abs_error_calibrated": float(errors_cal.max()),
        "mean_abs_error_serial": float(errors_serial.mean()),
        "max_abs_error_serial": float(errors_serial.max()),
        "mean_remeasure_difference": float(noise.mean()),
        "max_remeasure_difference": float(noise.max()),
    }
    (HERE / "fidelity.json").write_text(json.dumps(result, indent=1))
    lines = [
        f"Date {result['date']}; `{result['command']}`; {CORES} cores; load average "
        f"{result['load_before']} before, {result['load_after']} after.",
        f"Per-step overhead {base:.0f} µs, per-op overhead {per_op:.1f} µs; "
        f"fitted link alpha {link.alpha:.1f} µs, "
        f"beta {link.beta * 1e6:.3f} µs/MB.",
        "",
        "Medians over rounds; the error range is the smallest and largest error of the rounds.",
        "",
        "| model | CPUs | placer | devices used | measured µs | simulated µs | error | range "
        "| calibrated µs | error | one-at-a-time µs | error |",
        "|---|---:|---|---:|---:|---:|---:|---|---:|---:|---:|---:|",
    ]
    keys = sorted({(r["model"], r["cpus"], r["placer"]) for r in rows}, key=str)
    for key in keys:
        same = [r for r in rows if (r["model"], r["cpus"], r["placer"]) == key]

        def med(field: str, same: list[dict[str, Any]] = same) -> float:
            """Median of a field over the rounds."""
            return float(np.median([r[field] for r in same]))

        errs = [r["error"] for r in same]
        lines.append(
            f"| {key[0]} | {key[1]} | {key[2]} | {same[0]['devices_used']} | "
            f"{med('measured_us'):.0f} | {med('simulated_us'):.0f} | "
            f"{100 * med('error'):+.1f}% | {100 * min(errs):+.0f}..{100 * max(errs):+.0f}% | "
            f"{med('simulated_calibrated_us'):.0f} | {100 * med('error_calibrated'):+.1f}% | "
            f"{med('simulated_serial_us'):.0f} | {100 * med('error_serial'):+.1f}% |"
        )
    lines += [
        "",
        f"Shared pool of {CORES} threads: mean |error| {100 * result['mean_abs_error']:.1f}%, "
        f"max {100 * result['max_abs_error']:.1f}%. Calibrated CPU speed: mean |error| "
        f"{100 * result['mean_abs_error_calibrated']:.1f}%, "
        f"max {100 * result['max_abs_error_calibrated']:.1f}%. "
        "One op at a time over all logical CPUs: "
        f"mean |error| {100 * result['mean_abs_error_serial']:.1f}%, "
        f"max {100 * result['max_abs_error_serial']:.1f}%. The same session measured twice "
        f"differs by {100 * result['mean_remeasure_difference']:.1f}% on average "
        f"(max {100 * result['max_remeasure_difference']:.1f}%).",
    ]
    (HERE / "fidelity.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
