"""Simulator fidelity: simulated vs measured step time on this machine's logical CPU devices.

    .venv/bin/python benchmarks/placement/fidelity.py [--runs 15]

1. Measures what the simulator needs and nothing it is judged on: the per-step overhead of
   `Session.run` (a trivial fetch), the executor's per-op overhead (a chain of tiny ops, its
   untraced step time minus the traced op durations), and the cost of a tensor crossing
   between two logical CPU devices at several sizes (a chain alternating devices vs the same
   chain on one device), to which alpha + beta * bytes is fitted (the "measured fit" link,
   least relative error, so the small tensors most graphs send set alpha).
2. Profiles each benchmark graph on one device (median of 5 traced runs).
3. For 2 and 4 logical CPUs and several placements (all on CPU:0, round robin, m-ETF, auto),
   builds the graph afresh, applies the placement, and measures the median wall step time
   (right after a fresh one-device profile that the prediction uses); all of it `--rounds`
   times, since the machine's background load varies.
   The simulator predicts it from the profile, the fitted link and the shared thread pool
   (all logical CPUs share `cores` inter-op threads; each may run that many ops at once).
   Transfers between logical CPUs do not queue on a channel (`serial_links=False`): TF hands
   the tensor over in memory through its rendezvous, there is no copy engine to wait for;
   "calibrated" also sets the CPU speed factor so that the simulated one-device step matches
   the profile's own traced step time (nothing from the measurement under test is used);
   "one-at-a-time" is the alternative model of one op at a time over all logical CPUs.
Writes fidelity.json and fidelity.md beside this file.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

import devplace as dp
from devplace.autoplacer import CostModel, fit_link, place, simulate
from devplace.autoplacer.tf_graph import problem_from_graph
from devplace.autoplacer.timing import step_time_us

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from models import MODELS  # noqa: E402

tf = dp.tf
CORES = len(os.sched_getaffinity(0))


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


def transfer_samples(runs: int, hops: int = 32) -> tuple[list[float], list[float]]:
    """Per-transfer µs between CPU:0 and CPU:1 for tensor sizes from 256 B to 4 MB."""
    sizes, costs = [], []
    for elements in (64, 256, 1024, 4096, 16384, 65536, 262144, 1048576):
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
        shared = {"op_overhead_us": per_op, "serial_links": False}
        pooled = CostModel.measured(link, cpu_threads=CORES, cpu_slots=CORES, **shared)
        one_at_a_time = CostModel.measured(link, cpu_threads=1, **shared)
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
                link, cpu_threads=CORES, cpu_slots=CORES, speeds={"cpu": 1.0 / kappa}, **shared
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
    result = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "command": "python benchmarks/placement/fidelity.py " + " ".join(sys.argv[1:]),
        "machine": f"{platform.machine()}, {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}, TF {tf.__version__}",
        "cores": CORES,
        "load_before": load_before,
        "load_after": [round(x, 2) for x in os.getloadavg()],
        "overhead_us": base,
        "op_overhead_us": per_op,
        "link": {"alpha_us": link.alpha, "beta_us_per_byte": link.beta},
        "transfer_samples": {"bytes": sizes, "us": costs},
        "rows": rows,
        "abs_error": {
            "shared_pool": _spread([abs(r["error"]) for r in rows]),
            "calibrated": _spread([abs(r["error_calibrated"]) for r in rows]),
            "one_at_a_time": _spread([abs(r["error_serial"]) for r in rows]),
        },
        "remeasure_difference": _spread(
            [abs(r["measured_again_us"] / r["measured_us"] - 1) for r in rows]
        ),
    }
    (HERE / "fidelity.json").write_text(json.dumps(result, indent=1))
    text = markdown(result)
    (HERE / "fidelity.md").write_text(text)
    print(text)


def _spread(values: list[float]) -> dict[str, float]:
    """Mean, median and largest of some values."""
    return {
        "mean": float(np.mean(values)),
        "median": float(np.median(values)),
        "max": float(np.max(values)),
    }


def markdown(result: dict[str, Any]) -> str:
    """The comparison as markdown: a row per model, CPU count and placer, then a summary."""
    link = result["link"]
    lines = [
        f"Date {result['date']}; `{result['command']}`; machine {result['machine']}, "
        f"{result['cores']} cores (shared with other work); load average "
        f"{result['load_before']} before, {result['load_after']} after.",
        f"Per-step overhead {result['overhead_us']:.0f} µs, per-op overhead "
        f"{result['op_overhead_us']:.1f} µs; fitted link alpha {link['alpha_us']:.1f} µs, "
        f"beta {link['beta_us_per_byte'] * 1e6:.3f} µs/MB.",
        "",
        "Per row, the round with the median error (shared pool model): its measured and "
        "simulated step time; then the smallest and largest error over the rounds, and the "
        "median error over the rounds of the two other models.",
        "",
        "| model | CPUs | placer | devices used | measured µs | simulated µs | error | range "
        "| calibrated: error | one-at-a-time: error |",
        "|---|---:|---|---:|---:|---:|---:|---|---:|---:|",
    ]
    rows = result["rows"]
    keys = sorted({(r["model"], r["cpus"], r["placer"]) for r in rows}, key=str)
    for key in keys:
        same = sorted(
            (r for r in rows if (r["model"], r["cpus"], r["placer"]) == key),
            key=lambda r: r["error"],
        )
        mid = same[(len(same) - 1) // 2]
        lines.append(
            f"| {key[0]} | {key[1]} | {key[2]} | {mid['devices_used']} | "
            f"{mid['measured_us']:.0f} | {mid['simulated_us']:.0f} | {100 * mid['error']:+.1f}% | "
            f"{100 * same[0]['error']:+.0f}..{100 * same[-1]['error']:+.0f}% | "
            f"{100 * np.median([r['error_calibrated'] for r in same]):+.1f}% | "
            f"{100 * np.median([r['error_serial'] for r in same]):+.1f}% |"
        )
    names = {
        "shared_pool": f"Shared pool of {result['cores']} threads",
        "calibrated": "Calibrated CPU speed",
        "one_at_a_time": "One op at a time over all logical CPUs",
    }
    summary = [
        f"{label}: |error| mean {100 * e['mean']:.1f}%, median {100 * e['median']:.1f}%, "
        f"max {100 * e['max']:.1f}%."
        for key, label in names.items()
        for e in [result["abs_error"][key]]
    ]
    noise = result["remeasure_difference"]
    summary.append(
        "The same session measured twice (the noise floor on this shared machine) differs by "
        f"mean {100 * noise['mean']:.1f}%, median {100 * noise['median']:.1f}%, "
        f"max {100 * noise['max']:.1f}%."
    )
    return "\n".join([*lines, "", " ".join(summary)]) + "\n"


if __name__ == "__main__":
    main()
