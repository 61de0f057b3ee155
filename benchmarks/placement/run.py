"""Run every placer on every workload; write results.json and results.md beside this file.

    .venv/bin/python benchmarks/placement/run.py [--budget 0.8] [--exact-limit 120] [--skip-tf]

Workloads: the synthetic small graphs (8-14 ops), the shared JSON workloads, and three TF
graphs profiled here on one CPU and placed on a CPU plus two hypothetical accelerators (10x
this CPU, PCIe-like links). Per workload and placer: simulated makespan, ratio to the lower
bound max(critical path, work / devices), ratio to the optimum where known (exhaustive search
on <= 14 ops when it finishes within --exact-limit; the MILP when it proves optimality and a
placement reaches its value), wall time, peak memory of the fullest device, feasibility, and
whether an exact placer (or auto's exhaustive step) proved its result optimal. Then the time
to place 1,000 ops, and a check of the issue's targets against these numbers.
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

from devplace.autoplacer import Problem, simulate
from devplace.autoplacer.placers import BASELINES, DEFAULT_BUDGET_S, PLACERS, Solution
from devplace.autoplacer.placers.exhaustive import MAX_EXHAUSTIVE_GROUPS
from devplace.autoplacer.placers.milp import milp_placement
from devplace.autoplacer.strategies import choose, place
from devplace.autoplacer.workloads import random_layered, shared_workloads, small_graphs

HERE = Path(__file__).resolve().parent


def tf_problems() -> list[Problem]:
    """The TF benchmark graphs, profiled on this machine's CPU (median of 5 runs)."""
    import devplace as dp
    from devplace.autoplacer import CostModel
    from devplace.autoplacer.tf_graph import problem_from_graph

    sys.path.insert(0, str(HERE))
    from models import MODELS

    out = []
    for name, build in MODELS.items():
        graph, fetch, feed, init = build()
        with dp.Session(cpus=1, optimize=False, graph=graph) as sess:
            sess.run(init)
            prof = dp.run_profile(sess, fetch, feed=feed, repeat=5, progress=False)
        problem, _ = problem_from_graph(
            fetch,
            ["/device:CPU:0", "/device:GPU:0", "/device:GPU:1"],
            cost=CostModel.pcie(speeds={"acc": 10.0}),
            profile=prof,
            graph=graph,
        )
        problem.name = name
        out.append(problem)
    return out


def timed(fn: Any) -> tuple[Any, float]:
    """fn() and its wall time in seconds."""
    t0 = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - t0


def bench_problem(problem: Problem, budget: float, exact_limit: float) -> dict[str, Any]:
    """Every placer on one problem, with its lower bound and optimum where known."""
    rows = []
    milp_result = None

    def run_milp(p: Problem) -> Solution:
        """Solve the MILP, keeping its result for the bound."""
        nonlocal milp_result
        milp_result = milp_placement(p, time_limit=exact_limit)
        return Solution(milp_result.assignment, milp_result.optimal)

    placers: dict[str, Any] = {}
    for name, pl in PLACERS.items():
        if not pl.fits(problem):
            continue
        if name == "milp":
            placers[name] = run_milp
        else:
            limit = exact_limit if pl.scaling == "exponential" else budget
            placers[name] = lambda p, pl=pl, limit=limit: pl.solve(p, limit)
    placers["auto"] = lambda p: choose(p, "auto", budget)
    for name, placer in placers.items():
        found, seconds = timed(lambda placer=placer: placer(problem))
        s = simulate(problem, found.assignment)
        caps = problem.caps
        fullest = int(np.argmax(np.where(np.isfinite(caps), s.peak_memory / caps, 0)))
        rows.append(
            {
                "placer": name,
                "makespan": s.makespan,
                "seconds": seconds,
                "feasible": s.feasible,
                "optimal": found.optimal,
                "peak_memory": s.peak_memory.tolist(),
                "fullest_device": problem.devices[fullest].name,
                "fullest_fraction": float(s.peak_memory[fullest] / caps[fullest])
                if np.isfinite(caps[fullest])
                else None,
            }
        )
    by = {r["placer"]: r for r in rows}
    optimum, how = None, None
    if "exhaustive" in by and by["exhaustive"]["optimal"]:
        optimum, how = by["exhaustive"]["makespan"], "exhaustive"
    elif milp_result is not None and milp_result.optimal:
        reached = min(r["makespan"] for r in rows if r["feasible"])
        if reached <= milp_result.bound * (1 + 1e-4):  # HiGHS's default relative MIP gap
            optimum, how = reached, "milp (0.01% gap)"
    lb = problem.lower_bound()
    for r in rows:
        r["ratio_lb"] = r["makespan"] / lb if lb > 0 else None
        r["ratio_opt"] = r["makespan"] / optimum if optimum else None
    return {
        "workload": problem.name,
        "ops": problem.n,
        "devices": problem.d,
        "lower_bound": lb,
        "optimum": optimum,
        "optimum_by": how,
        "milp_bound": milp_result.bound if milp_result is not None else None,
        "rows": rows,
    }


def bench_scale(budget: float) -> list[dict[str, Any]]:
    """Wall time of `auto` (= search) on random layered DAGs of 1,000 ops.

    With 2, 4 and 12 accelerators (plus a CPU): 13 devices is the size of the shared workloads.
    """
    out = []
    for n_acc in (2, 4, 12):
        problem = random_layered(1000, seed=1, n_acc=n_acc)
        assignment, seconds = timed(lambda problem=problem: place(problem, "auto", budget))
        heft_a, heft_s = timed(lambda problem=problem: BASELINES["heft"](problem))
        out.append(
            {
                "ops": problem.n,
                "devices": problem.d,
                "budget": budget,
                "auto_seconds": seconds,
                "auto_makespan": simulate(problem, assignment).makespan,
                "heft_seconds": heft_s,
                "heft_makespan": simulate(problem, heft_a).makespan,
                "lower_bound": problem.lower_bound(),
            }
        )
    return out


EXACT = ("exhaustive", "milp")


def targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    """The issue's benchmark targets, each with the numbers that decide it."""
    out = []
    small = [w for w in results["workloads"] if w["ops"] <= MAX_EXHAUSTIVE_GROUPS and w["optimum"]]
    worst = max(small, key=lambda w: best_placer(w)[1] / w["optimum"])
    name, value = best_placer(worst)

    def search_ratio(w: dict[str, Any]) -> float:
        """`search` alone (no exact step) against the optimum."""
        return next(r["makespan"] for r in w["rows"] if r["placer"] == "search") / w["optimum"]

    out.append(
        {
            "target": "best placer within 2% of the optimum on every small graph",
            "met": all(best_placer(w)[1] <= w["optimum"] * 1.02 for w in small),
            "evidence": f"worst of {len(small)} graphs: {worst['workload']}, {name} at "
            f"{value / worst['optimum']:.4f} x optimum (`search` alone: worst "
            f"{max(search_ratio(w) for w in small):.4f})",
        }
    )
    for w in results["workloads"]:
        if w["ops"] <= MAX_EXHAUSTIVE_GROUPS:
            continue
        by = {r["placer"]: r for r in w["rows"]}
        auto = by["auto"]
        base = [r for r in w["rows"] if r["placer"] in BASELINES and r["feasible"]]
        best = min(base, key=lambda r: r["makespan"])
        one = by["single"]
        vs_one = (
            f"one accelerator (single) {one['makespan']:.1f}"
            if one["feasible"]
            else f"one accelerator (single) {one['makespan']:.1f} but over its memory cap "
            f"({100 * one['fullest_fraction']:.0f}%)"
        )
        out.append(
            {
                "target": f"{w['workload']}: at least as good as the best baseline and "
                "never worse than one accelerator",
                "met": auto["feasible"]
                and auto["makespan"] <= best["makespan"] * (1 + 1e-9)
                and (not one["feasible"] or auto["makespan"] <= one["makespan"] * (1 + 1e-9)),
                "evidence": f"auto {auto['makespan']:.1f}; best baseline {best['placer']} "
                f"{best['makespan']:.1f}; {vs_one}",
            }
        )
    slowest = max(results["scale"], key=lambda s: s["auto_seconds"])
    out.append(
        {
            "target": "under 1 s to place 1,000 ops",
            "met": slowest["auto_seconds"] < 1.0,
            "evidence": f"slowest: {slowest['auto_seconds']:.3f} s ({slowest['devices']} devices)",
        }
    )
    return out


def best_placer(w: dict[str, Any]) -> tuple[str, float]:
    """The best feasible non-exact placer of a workload and its makespan (`auto` on ties)."""
    rows = [r for r in w["rows"] if r["placer"] not in EXACT and r["feasible"]]
    best = min(rows, key=lambda r: (r["makespan"], r["placer"] != "auto"))
    return best["placer"], best["makespan"]


def _proof(optimal: bool | None) -> str:
    """An exact placer's proof as a table cell: yes, no (its budget ran out) or a dash."""
    return "—" if optimal is None else "yes" if optimal else "no (budget)"


def _fmt(x: float | None, digits: int = 3) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def markdown(results: dict[str, Any]) -> str:
    """The results as markdown tables."""
    lines = [
        f"Machine: {results['machine']}; date: {results['date']}; command: `{results['command']}`; "
        f"load average {results['load_before']} before, {results['load_after']} after (the "
        "machine is shared with other work; wall times vary with it)",
        "",
        "### Targets",
        "",
        "| target | met | evidence |",
        "|---|---|---|",
    ]
    for t in results["targets"]:
        lines.append(f"| {t['target']} | {'yes' if t['met'] else '**no**'} | {t['evidence']} |")
    lines.append("")
    for w in results["workloads"]:
        opt = _fmt(w["optimum"]) + (f" ({w['optimum_by']})" if w["optimum_by"] else "")
        lines += [
            f"### {w['workload']} ({w['ops']} ops, {w['devices']} devices)",
            "",
            f"Lower bound {w['lower_bound']:.3f}; optimum {opt}; "
            f"MILP bound {_fmt(w['milp_bound'])}",
            "",
            "| placer | makespan | / lower bound | / optimum | seconds | fullest device "
            "| feasible | proven optimal |",
            "|---|---:|---:|---:|---:|---|---|---|",
        ]
        for r in w["rows"]:
            full = r["fullest_device"]
            if r["fullest_fraction"] is not None:
                full += f" {100 * r['fullest_fraction']:.0f}%"
            else:
                full = "no caps"
            lines.append(
                f"| {r['placer']} | {r['makespan']:.3f} | {_fmt(r['ratio_lb'])} | "
                f"{_fmt(r['ratio_opt'], 4)} | {r['seconds']:.3f} | {full} | "
                f"{'yes' if r['feasible'] else '**no**'} | {_proof(r['optimal'])} |"
            )
        lines.append("")
    lines += [
        "### Placing 1,000 ops",
        "",
        "| ops | devices | budget s | auto s | auto makespan | HEFT s | HEFT makespan "
        "| lower bound |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for s in results["scale"]:
        lines.append(
            f"| {s['ops']} | {s['devices']} | {s['budget']} | {s['auto_seconds']:.3f} | "
            f"{s['auto_makespan']:.1f} | {s['heft_seconds']:.3f} | {s['heft_makespan']:.1f} | "
            f"{s['lower_bound']:.1f} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    """Parse arguments, run, write results.json and results.md."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--budget",
        type=float,
        default=DEFAULT_BUDGET_S,
        help=f"seconds per placement for the budgeted placers (default {DEFAULT_BUDGET_S})",
    )
    parser.add_argument("--exact-limit", type=float, default=120.0, help="exact placers' limit")
    parser.add_argument("--skip-tf", action="store_true", help="leave out the TF graphs")
    args = parser.parse_args()
    load_before = [round(x, 2) for x in os.getloadavg()]
    problems = small_graphs() + shared_workloads()
    if not args.skip_tf:
        problems += tf_problems()
    workloads = []
    for p in problems:
        print(f"{p.name}: {p.n} ops, {p.d} devices", flush=True)
        workloads.append(bench_problem(p, args.budget, args.exact_limit))
    results = {
        "machine": f"{platform.processor() or platform.machine()}, {platform.system()}, "
        f"Python {platform.python_version()}, {len(os.sched_getaffinity(0))} cores",
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "command": "python benchmarks/placement/run.py " + " ".join(sys.argv[1:]),
        "workloads": workloads,
        "scale": bench_scale(args.budget),
        "load_before": load_before,
        "load_after": [round(x, 2) for x in os.getloadavg()],
    }
    results["targets"] = targets(results)
    (HERE / "results.json").write_text(json.dumps(results, indent=1))
    (HERE / "results.md").write_text(markdown(results))
    print(markdown(results))


if __name__ == "__main__":
    main()
