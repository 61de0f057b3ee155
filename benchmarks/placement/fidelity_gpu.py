"""Cost-model fidelity on real CPU + GPU measurements: predicted vs measured step times.

    .venv/bin/python benchmarks/placement/fidelity_gpu.py [MEASUREMENTS.json] [--json]

MEASUREMENTS.json (default: data/gpu_measurements.json, a copy of the shared H100 file) has per
benchmark model (models.py) the per-op profiles on `/device:CPU:0` and `/device:GPU:0`, placements
(op name -> device) with their measured step times, and `link_cpu_gpu` crossing measurements.
The model's inputs are the profiles and the crossings only (`DeviceProfiles`, `fit_crossings`,
`CostModel.from_profiles`); each placement is mapped to what TF runs (`effective_assignment`:
soft placement, colocation) and simulated. Measured step times are only what it is scored on.

Prints per placement predicted vs measured, then per model the Spearman rank correlation and
`autoplace`'s predicted time over the best predicted single-device time. With `--json`: one
object {"median_abs_error", "max_abs_error", "spearman": {model: rho},
"autoplace_vs_best_single": {model: ratio}}.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

from scipy.stats import spearmanr

from devplace.autoplacer import CostModel, DeviceProfiles, autoplace, fit_crossings, simulate
from devplace.autoplacer.tf_graph import effective_assignment, problem_from_graph

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from models import MODELS  # noqa: E402

DEFAULT = HERE / "data" / "gpu_measurements.json"


def evaluate(data: dict[str, Any]) -> dict[str, Any]:
    """Predictions for every placement of every model in `data`, and the summary numbers."""
    link = fit_crossings(data["link_cpu_gpu"])
    rows, spearman, vs_single = [], {}, {}
    for name, model in data["models"].items():
        graph, fetch, _, _ = MODELS[name]()
        profiles = DeviceProfiles(model["profiles"])
        cost = CostModel.from_profiles(profiles, link)
        devices = sorted(model["profiles"])
        problem, ops = problem_from_graph(fetch, devices, cost=cost, graph=graph)
        predicted, measured = [], []
        for placement in model["placements"]:
            requested = [placement["devices"].get(op.name, "") for op in ops]
            t = simulate(problem, effective_assignment(problem, requested)).makespan
            predicted.append(t)
            measured.append(placement["measured_us"])
            rows.append(
                {
                    "model": name,
                    "placement": placement["name"],
                    "predicted_us": t,
                    "measured_us": placement["measured_us"],
                    "error": t / placement["measured_us"] - 1,
                }
            )
        spearman[name] = float(spearmanr(predicted, measured).statistic)
        placed = autoplace(fetch, devices, cost=cost, graph=graph)
        vs_single[name] = placed.predicted_step_time / min(placed.single_device.values())
    errors = [abs(r["error"]) for r in rows]
    return {
        "link": {"alpha_us": link.alpha, "points": link.points},
        "rows": rows,
        "median_abs_error": statistics.median(errors),
        "max_abs_error": max(errors),
        "spearman": spearman,
        "autoplace_vs_best_single": vs_single,
    }


def main() -> None:
    """Parse arguments, evaluate, print a table or one JSON object."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("measurements", nargs="?", default=str(DEFAULT))
    parser.add_argument("--json", action="store_true", help="print one JSON summary object")
    args = parser.parse_args()
    with open(args.measurements) as f:
        result = evaluate(json.load(f))
    if args.json:
        keys = ("median_abs_error", "max_abs_error", "spearman", "autoplace_vs_best_single")
        print(json.dumps({k: result[k] for k in keys}))
        return
    link = result["link"]
    crossings = ", ".join(f"{b:.0f} B {us:.1f}" for b, us in link["points"])
    print(f"link CPU<->GPU: alpha {link['alpha_us']:.1f} us; crossings (us): {crossings}")
    print(f"{'model':16s} {'placement':18s} {'predicted':>10s} {'measured':>10s} {'error':>7s}")
    for r in result["rows"]:
        print(
            f"{r['model']:16s} {r['placement']:18s} {r['predicted_us']:10.0f} "
            f"{r['measured_us']:10.0f} {100 * r['error']:+6.1f}%"
        )
    print(
        f"median |error| {100 * result['median_abs_error']:.1f}%, "
        f"max {100 * result['max_abs_error']:.1f}%"
    )
    for name, rho in result["spearman"].items():
        ratio = result["autoplace_vs_best_single"][name]
        print(f"{name}: Spearman {rho:.3f}; autoplace / best single device {ratio:.3f}")


if __name__ == "__main__":
    main()
