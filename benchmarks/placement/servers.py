"""Placement across servers, measured: single tasks, splits by hand, round robin, HEFT and
autoplace with its default settings, in several runs in a row.

    .venv/bin/python benchmarks/placement/servers.py --tasks 2 --cores-per-task 1 [--repeat 3]
        [--json]

The record of servers.md is that command (three runs in a row, about 3 minutes a run on a
quiet 2-core machine). Each run starts a `LocalCluster` of `--tasks` worker tasks (each
pinned to its own `--cores-per-task` cores when given; the client, this process, and the
cluster's forwarder then run on task 0's cores), the client talking to task 0. For each
graph: `autoplace(fetch, tasks' CPUs, session=sess, feed=feed)` as a user calls it (it
profiles the graph on each task, measures the link between the tasks and the servers'
constants, places, and verifies a split against every single task: `autoplacer.verify`);
its model (`AutoPlacement.problem`) then predicts every other placement: each single task,
the split by hand (`BY_HAND`), round robin and HEFT. All are measured (median over
`--rounds` interleaved rounds of `step_time_us` of `--runs` steps in a fresh session: their
mean without the fastest and slowest tenth). Graphs:
`WIDE_MODELS` of models.py (a one-task step of 20 ms or more, where a split pays: four
branches, two towers, branches of unequal depth, a wide layer before a narrow chain, two
diamonds), the three models of `MODELS` and the seeds' colocate graph (small: a split does
not pay, and autoplace must not lose there). Prints and writes servers.json and servers.md
beside this file: the runs side by side (per graph autoplace's pick, its speed-up over the
best single task, the hand split's, and its prediction's error, with each run's load
average), then per run every placement's row, the Spearman rank correlation of predicted
against measured step times over the distinct placements measured, and the targets of
issues 30 and 39.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scipy.stats import spearmanr

import devplace as dp
from devplace.autoplacer import autoplace, place, simulate
from devplace.autoplacer.tf_graph import fetch_closure
from devplace.autoplacer.timing import measure_in_rounds, measure_placement
from devplace.demo import SEED_CPU, SEED_GPU
from devplace.demo import _build as build_seed

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from models import MODELS, WIDE_MODELS  # noqa: E402

tf = dp.tf


def colocate_seed() -> tuple[Any, Any, dict[Any, Any], Any]:
    """The seeds' colocate graph (gradients colocated), its pins left for the placers."""
    graph, fetch = build_seed(True, {SEED_GPU: SEED_GPU, SEED_CPU: SEED_CPU})
    with graph.as_default():
        init = tf.global_variables_initializer()
    return graph, fetch, {}, init


GRAPHS = {**WIDE_MODELS, **MODELS, "colocate_seed": colocate_seed}


def towers_apart(ops: list[Any]) -> list[int]:
    """two_tower_mlp split by hand: the ops that depend on tower 1's variables alone on task
    1, the rest (tower 0, the head, the fed input) on task 0 (ops in topological order)."""
    seen: dict[str, set[str]] = {}
    for op in ops:
        tower = re.search(r"tower\d", op.name) if op.type == "VariableV2" else None
        own = {tower.group()} if tower else set()
        seen[op.name] = own.union(*(seen[t.op.name] for t in op.inputs))
    return [int(seen[op.name] == {"tower1"}) for op in ops]


def scopes_apart(*scopes: str) -> Callable[[list[Any]], list[int]]:
    """A split by hand: the ops under the top name scopes `scopes` on task 1, the rest (the
    fed input, the joins and what follows them) on task 0, whose core the client shares."""

    def split(ops: list[Any]) -> list[int]:
        return [int(op.name.split("/")[0] in scopes) for op in ops]

    return split


#: four_branches split by hand: branches 0 and 3 (9 + 5 layers) on task 1, 1 and 2 (7 + 6)
#: with the fed input and the join on task 0.
branches_paired = scopes_apart("b0", "b3")

#: Placements made by hand for a graph, as (label, ops -> device index per op).
BY_HAND = {
    "four_branches": ("branches 0+3 | 1+2 (by hand)", branches_paired),
    "wide_two_tower": ("towers on two tasks (by hand)", towers_apart),
    "two_tower_mlp": ("towers on two tasks (by hand)", towers_apart),
    "uneven_branches": ("branch 0 | 1+2 (by hand)", scopes_apart("u0")),
    "wide_then_narrow": ("branches 0+1 | 2+3 and the chain (by hand)", scopes_apart("w0", "w1")),
    "diamond": ("paths a | paths b and the joins (by hand)", scopes_apart("d0a", "d1a")),
}


def pin_client(cluster: Any) -> None:
    """Run this process (the client) and the cluster's forwarder on the master task's cores:
    left free, the scheduler moves them between cores, and a step's time then depends on
    which task's core they took it from."""
    cores = set(cluster.cores["worker/0"])
    os.sched_setaffinity(0, cores)
    if "forwarder" in cluster.pids:
        os.sched_setaffinity(cluster.pids["forwarder"], cores)


def model_facts(problem: Any) -> dict[str, Any]:
    """The measured constants autoplace's model of one graph holds (µs)."""
    return {
        "step_us": problem.step_cost,
        "per_further_task_us": problem.host_step_cost,
        "idle_master_saves_us": problem.master_host_cost,
        "remote_start_us": problem.host_start_delay,
        "link_alpha_us": float(problem.link_alpha[0, 1]) if problem.d > 1 else 0.0,
        "link_beta_us_per_byte": float(problem.link_beta[0, 1]) if problem.d > 1 else 0.0,
        "op_offsets_us": problem.op_offsets,
        "op_scales": problem.op_scales,
    }


def one_graph(
    cluster: Any, name: str, tasks: list[str], runs: int, budget: float, rounds: int
) -> dict[str, Any]:
    """Every placement of one graph: predicted (autoplace's model) and measured step times
    (the median of `rounds` interleaved rounds of `runs` steps each)."""
    graph, fetch, feed, _ = GRAPHS[name]()
    devices = [f"{t}/device:CPU:0" for t in tasks]
    sess = cluster.session(graph=graph, soft=True, optimize=False)
    try:
        t0 = time.perf_counter()
        auto = autoplace(
            fetch, devices, session=sess, feed=feed, runs=runs, budget=budget, respect_pins=False
        )
        autoplace_s = time.perf_counter() - t0
        problem = auto.problem
        ops = fetch_closure(fetch, graph)
        names = [op.name for op in ops]
        assert names == problem.names
        chosen: dict[str, list[int]] = {f"single {t}": [k] * problem.n for k, t in enumerate(tasks)}
        if name in BY_HAND and len(tasks) > 1:
            label, split = BY_HAND[name]
            chosen[label] = split(ops)
        for strategy in ("round_robin", "heft"):
            chosen[strategy] = place(problem, strategy, budget).tolist()
        chosen[f"autoplace ({auto.strategy})"] = [devices.index(auto.devices[n]) for n in names]

        def measure(a: list[int]) -> float:
            placed = {n: problem.devices[d].name for n, d in zip(names, a, strict=True)}
            return measure_placement(sess, fetch, placed, feed, runs)

        # Labels with one assignment (autoplace choosing a single task) share its times.
        times = measure_in_rounds(chosen, measure, rounds)
        rows = [
            {
                "placement": label,
                "predicted_us": simulate(problem, a).makespan,
                "measured_us": statistics.median(times[label]),
                "measured_rounds_us": times[label],
                "tasks_used": len({problem.devices[d].host for d in a}),
                "assignment": a,
            }
            for label, a in chosen.items()
        ]
        return {
            "graph": name,
            "wide": name in WIDE_MODELS,
            "ops": problem.n,
            "autoplace_s": autoplace_s,
            "model": model_facts(problem),
            "notes": auto.notes,
            "explain": auto.explain(),
            "rows": rows,
        }
    finally:
        sess.close()


def distinct(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows of distinct assignments (the first label of each)."""
    seen: dict[tuple[int, ...], dict[str, Any]] = {}
    for r in rows:
        seen.setdefault(tuple(r["assignment"]), r)
    return list(seen.values())


def rank_correlation(rows: list[dict[str, Any]]) -> float | None:
    """Spearman's rank correlation of predicted and measured step times (None: under 3 rows)."""
    if len(rows) < 3:
        return None
    return float(spearmanr([r["predicted_us"] for r in rows], [r["measured_us"] for r in rows])[0])


def summary(graphs: list[dict[str, Any]]) -> dict[str, Any]:
    """Per graph the speed-ups over the best single task (by hand; autoplace and its ratio to
    the hand split's) and the rank correlation; over all distinct placements the rank
    correlation and the errors (all graphs, and the wide ones)."""
    out: dict[str, Any] = {"graphs": {}}
    for g in graphs:
        for r in g["rows"]:
            r["error"] = (r["predicted_us"] - r["measured_us"]) / r["measured_us"]
        single = min(
            (r for r in g["rows"] if r["placement"].startswith("single")),
            key=lambda r: r["measured_us"],
        )
        auto = next(r for r in g["rows"] if r["placement"].startswith("autoplace"))
        hand = next((r for r in g["rows"] if r["placement"].endswith("(by hand)")), None)
        best = single["measured_us"]
        entry = {
            "wide": g["wide"],
            "best_single_us": best,
            "autoplace": auto["placement"],
            "autoplace_speed_up": best / auto["measured_us"],
            "autoplace_error": auto["error"],
            "hand_speed_up": best / hand["measured_us"] if hand else None,
            "spearman": rank_correlation(distinct(g["rows"])),
        }
        if hand:
            entry["autoplace_over_hand"] = entry["autoplace_speed_up"] / entry["hand_speed_up"]
        out["graphs"][g["graph"]] = entry
    rows = [r for g in graphs for r in distinct(g["rows"])]
    wide = [r for g in graphs if g["wide"] for r in distinct(g["rows"])]
    out["spearman"] = rank_correlation(rows)
    for key, chosen in (("all", rows), ("wide", wide)):
        errors = [abs(r["error"]) for r in chosen] or [0.0]
        out[f"median_abs_error_{key}"] = statistics.median(errors)
        out[f"max_abs_error_{key}"] = max(errors)
    out["repeat_spread"] = statistics.median(
        max(r["measured_rounds_us"]) / min(r["measured_rounds_us"]) for r in rows
    )
    return out


def _met(ok: bool) -> str:
    return "met" if ok else "NOT met"


def targets(result: dict[str, Any]) -> list[str]:
    """Issues 30's and 39's targets (2 cores, 2 one-core tasks), each with met or not met."""
    s = result["summary"]
    met = _met
    lines = ["Targets (issues 30 and 39; 2 cores, 2 one-core tasks):"]
    for name, g in s["graphs"].items():
        if g["wide"]:
            ratio = g.get("autoplace_over_hand")
            error = g["autoplace_error"]
            lines.append(
                f"- {name}: autoplace at least 90% of the hand split's speed-up: "
                + (
                    f"{met(ratio >= 0.9)} ({g['autoplace_speed_up']:.2f}x against "
                    f"{g['hand_speed_up']:.2f}x by hand: {100 * ratio:.0f}%)"
                    if ratio is not None
                    else "no hand split"
                )
                + f"; its prediction within 25%: {met(abs(error) <= 0.25)} ({100 * error:+.0f}%)"
            )
        else:
            lines.append(
                f"- {name}: autoplace at least 0.95x the best single task: "
                f"{met(g['autoplace_speed_up'] >= 0.95)} ({g['autoplace_speed_up']:.2f}x)"
            )
    rho = s["spearman"]
    lines += [
        f"- Spearman rank correlation of predicted and measured, all distinct placements, "
        f">= 0.8: {met(rho is not None and rho >= 0.8)} ({rho:.2f})",
        f"- prediction error on the wide graphs, median <= 15%: "
        f"{met(s['median_abs_error_wide'] <= 0.15)} ({100 * s['median_abs_error_wide']:.1f}%); "
        f"worst <= 30%: {met(s['max_abs_error_wide'] <= 0.3)} "
        f"({100 * s['max_abs_error_wide']:.1f}%)",
        f"- noise floor: a placement's slowest round was {s['repeat_spread']:.2f}x its fastest "
        "(median over the distinct placements)",
    ]
    if float(result["load_before"].split()[0]) > 0.5:
        lines.append(
            f"- the load average before the run was {result['load_before'].split()[0]}: other "
            "work shared these cores, so these timings are not the record of a quiet machine"
        )
    return [*lines, ""]


def _escaped(label: str) -> str:
    """A label as a Markdown table cell (a split's label may hold a `|`)."""
    return label.replace("|", "\\|")


def _cell(x: float | None, fmt: str = "{:.2f}") -> str:
    return "–" if x is None else fmt.format(x)


HOW = [
    "Written by `benchmarks/placement/servers.py` (see its docstring). autoplace runs with",
    "its default settings given the session: it profiles the graph on each task (each",
    "profile calibrated against its own untraced step; a one-core task profiled one op at",
    "a time), measures the link between the",
    "tasks as crossings cost them while both compute (a transfer is work of both tasks'",
    "cores, half each), the servers' constants",
    "(the master's step, its work per further task, how late another task's partition",
    "starts) and verifies a split against every single task. Its model predicts every",
    "placement below. The client (this process) and the cluster's forwarder run on task",
    "0's core. Measured: the median over `--rounds` interleaved rounds of the mean of",
    "`--runs` steps in a fresh session without the fastest and slowest tenth",
    "(`step_time_us`). Error: (predicted - measured) / measured. Each run",
    "starts its own cluster and builds every graph afresh (nothing is cached between runs).",
]


def run_markdown(result: dict[str, Any], explain: bool) -> list[str]:
    """One run's lines: every placement's row, the per-graph summary, the targets and (with
    `explain`) what autoplace said per graph."""
    s = result["summary"]
    lines = [
        f"Started {result['date']}; load average {result['load_before']} before, "
        f"{result['load_after']} after; {result['seconds']:.0f} s.",
        "",
        "| graph | ops | placement | predicted µs | measured µs | error |",
        "|---|---:|---|---:|---:|---:|",
    ]
    for g in result["graphs"]:
        for r in g["rows"]:
            lines.append(
                f"| {g['graph']} | {g['ops']} | {_escaped(r['placement'])} | "
                f"{r['predicted_us']:.0f} | "
                f"{r['measured_us']:.0f} | {100 * r['error']:+.0f}% |"
            )
    lines += [
        "",
        "Speed-ups over the best single task (measured):",
        "",
        "| graph | kind | best single task µs | hand split | autoplace | autoplace / hand "
        "| Spearman | autoplace s |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for g in result["graphs"]:
        v = s["graphs"][g["graph"]]
        lines.append(
            f"| {g['graph']} | {'wide' if v['wide'] else 'small'} | {v['best_single_us']:.0f} | "
            f"{_cell(v['hand_speed_up'])} | {v['autoplace_speed_up']:.2f} | "
            f"{_cell(v.get('autoplace_over_hand'), '{:.0%}')} | {_cell(v['spearman'])} | "
            f"{g['autoplace_s']:.1f} |"
        )
    lines += [
        "",
        f"Over all distinct placements measured: Spearman {_cell(s['spearman'])}; error median "
        f"{100 * s['median_abs_error_all']:.1f}%, worst {100 * s['max_abs_error_all']:.1f}%; "
        f"on the wide graphs median {100 * s['median_abs_error_wide']:.1f}%, worst "
        f"{100 * s['max_abs_error_wide']:.1f}%.",
        "",
        *targets(result),
    ]
    if explain:
        lines += ["What autoplace said (`explain()`), per graph:", ""]
        for g in result["graphs"]:
            lines += [f"{g['graph']}:", "", "```text", g["explain"], "```", ""]
    return lines


def steadiness(runs: list[dict[str, Any]]) -> list[str]:
    """Per graph and run: autoplace's pick, its speed-up over the best single task, the hand
    split's, their ratio and the pick's prediction error, with each run's load average;
    then whether issue 39's targets held in every run."""
    lines = [
        "| graph | run | load before | autoplace's pick | autoplace | hand split "
        "| autoplace / hand | pick's error |",
        "|---|---:|---:|---|---:|---:|---:|---:|",
    ]
    for name in runs[0]["summary"]["graphs"]:
        for k, run in enumerate(runs, 1):
            v = run["summary"]["graphs"][name]
            pick = v["autoplace"].removeprefix("autoplace (").removesuffix(")")
            lines.append(
                f"| {name} | {k} | {run['load_before'].split()[0]} | {_escaped(pick)} | "
                f"{v['autoplace_speed_up']:.2f} | {_cell(v['hand_speed_up'])} | "
                f"{_cell(v.get('autoplace_over_hand'), '{:.0%}')} | "
                f"{100 * v['autoplace_error']:+.0f}% |"
            )
    graphs = [v for run in runs for v in run["summary"]["graphs"].values()]
    wide = [v for v in graphs if v["wide"]]
    hand = [v["autoplace_over_hand"] for v in wide if "autoplace_over_hand" in v]
    small = [v["autoplace_speed_up"] for v in graphs if not v["wide"]]
    errors = [abs(v["autoplace_error"]) for v in wide]
    return [
        *lines,
        "",
        f"Issue 39's targets over all {len(runs)} runs:",
        f"- every wide graph: autoplace at least 90% of the hand split's speed-up: "
        f"{_met(min(hand, default=1.0) >= 0.9)} (least {min(hand, default=1.0):.0%}); its "
        f"prediction within 25%: {_met(max(errors, default=0.0) <= 0.25)} (worst "
        f"{100 * max(errors, default=0.0):.0f}%)",
        f"- every small graph: at least 0.95x the best single task: "
        f"{_met(min(small, default=1.0) >= 0.95)} (least {min(small, default=1.0):.2f}x)",
        "",
    ]


def markdown(record: dict[str, Any]) -> str:
    """servers.md: how it was run, the runs side by side, then each run in full (autoplace's
    `explain()` for the last)."""
    runs = record["runs"]
    lines = [
        "# Placement across servers (measured)",
        "",
        *HOW,
        "",
        f"`{record['command']}`, {record['date']}, {record['machine']}; {len(runs)} runs in a "
        f"row, {record['seconds']:.0f} s in all. {record['tasks']} worker tasks, cores per "
        f"task: {record['cores_per_task']}; the client talks to task 0.",
        "",
        "## The runs side by side",
        "",
        *steadiness(runs),
    ]
    for k, run in enumerate(runs, 1):
        lines += ["", f"## Run {k}", "", *run_markdown(run, explain=k == len(runs))]
    return "\n".join(lines).rstrip("\n") + "\n"


def run_once(args: argparse.Namespace) -> dict[str, Any]:
    """One run of the benchmark on a cluster of its own: every graph, and the summary."""
    t0 = time.perf_counter()
    load_before = os.getloadavg()
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    cores = os.sched_getaffinity(0)  # the next run's cluster needs them all again
    with dp.LocalCluster(ps=0, workers=args.tasks, cores_per_task=args.cores_per_task) as cluster:
        tasks = [f"/job:worker/task:{i}" for i in range(args.tasks)]
        try:
            if cluster.cores:
                pin_client(cluster)
            graphs = []
            for g in args.graphs:
                graphs.append(one_graph(cluster, g, tasks, args.runs, args.budget, args.rounds))
                print(f"{g}: {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
        finally:
            os.sched_setaffinity(0, cores)
    result = {
        "date": started,
        "load_before": " ".join(f"{x:.2f}" for x in load_before),
        "load_after": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "graphs": graphs,
        "seconds": time.perf_counter() - t0,
    }
    result["summary"] = summary(graphs)
    return result


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark `--repeat` times in a row; write servers.json and servers.md."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=2)
    parser.add_argument("--cores-per-task", type=int, default=None)
    parser.add_argument("--runs", type=int, default=10, help="steps per measurement")
    parser.add_argument("--budget", type=float, default=0.8, help="seconds per placement")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved measuring rounds")
    parser.add_argument("--repeat", type=int, default=3, help="runs of the whole benchmark")
    parser.add_argument("--graphs", nargs="*", default=list(GRAPHS), choices=list(GRAPHS))
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    record: dict[str, Any] = {
        "command": "benchmarks/placement/servers.py "
        + " ".join(sys.argv[1:] if argv is None else argv),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{platform.machine()}, {platform.system()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}",
        "tasks": args.tasks,
        "cores_per_task": args.cores_per_task,
        "runs": [],
    }
    for k in range(args.repeat):
        print(f"run {k + 1} of {args.repeat}", file=sys.stderr, flush=True)
        record["runs"].append(run_once(args))
        record["seconds"] = time.perf_counter() - t0
        # written after every run: a run stopped later leaves the runs before it recorded
        (HERE / "servers.json").write_text(json.dumps(record, indent=1, default=str) + "\n")
        (HERE / "servers.md").write_text(markdown(record))
    print(json.dumps(record, indent=1, default=str) if args.json else markdown(record))
    return 0


if __name__ == "__main__":
    sys.exit(main())
