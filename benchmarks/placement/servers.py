"""Placement across servers, measured: single tasks, round robin, HEFT and autoplace.

    .venv/bin/python benchmarks/placement/servers.py [--tasks 2] [--cores-per-task 1] [--json]

Starts a `LocalCluster` of `--tasks` worker tasks (each pinned to its own `--cores-per-task`
cores when given; the client, this process, and the cluster's forwarder then run on task 0's
cores), the client talking to task 0. Measures, once: the link between the tasks
(`measure_link`: chains alternating tasks against chains on one; a transfer's time is work of
both tasks' cores, half each) and the servers' constants (`measure_servers`: the master's work
per task a step involves, and ops run at once per task). Each profile is calibrated against its
own untraced step.
Then for the three models of `models.py` and the seeds' colocate graph: profiles the graph on
each task (`profile_devices`; tasks of equal cores share one profile), builds the cost model
from those measurements only, and for every single-task placement, round robin, HEFT and
`autoplace` (without and with `verify=2`) gives the predicted step time (simulator) and the
measured one (median over `--rounds` interleaved rounds of the median of `--runs` steps in a
fresh session). Writes servers.json and servers.md beside this file (with `--json`, the JSON
also to stdout).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import devplace as dp
from devplace.autoplacer import CostModel, autoplace, place, profile_devices, simulate
from devplace.autoplacer.measure import master_task, measure_servers, task_links
from devplace.autoplacer.tf_graph import problem_from_graph
from devplace.autoplacer.timing import measure_in_rounds, measure_placement
from devplace.demo import SEED_CPU, SEED_GPU
from devplace.demo import _build as build_seed

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from models import MODELS  # noqa: E402

tf = dp.tf


def colocate_seed() -> tuple[Any, Any, dict[Any, Any], Any]:
    """The seeds' colocate graph (gradients colocated), its pins left for the placers."""
    graph, fetch = build_seed(True, {SEED_GPU: SEED_GPU, SEED_CPU: SEED_CPU})
    with graph.as_default():
        init = tf.global_variables_initializer()
    return graph, fetch, {}, init


GRAPHS = {**MODELS, "colocate_seed": colocate_seed}


def towers_apart(ops: list[Any]) -> list[int]:
    """two_tower_mlp split by hand: the ops that depend on tower 1's variables alone on task
    1, the rest (tower 0, the head, the fed input) on task 0 (ops in topological order)."""
    seen: dict[str, set[str]] = {}
    for op in ops:
        own = {op.name.split("_")[0]} if op.type == "VariableV2" else set()
        seen[op.name] = own.union(*(seen[t.op.name] for t in op.inputs))
    return [int(seen[op.name] == {"tower1"}) for op in ops]


#: Placements made by hand for a graph, as (label, ops -> device index per op).
BY_HAND = {"two_tower_mlp": ("towers on two tasks (by hand)", towers_apart)}


def pin_client(cluster: Any) -> None:
    """Run this process (the client) and the cluster's forwarder on the master task's cores:
    left free, the scheduler moves them between cores, and a step's time then depends on
    which task's core they took it from."""
    cores = set(cluster.cores["worker/0"])
    os.sched_setaffinity(0, cores)
    if "forwarder" in cluster.pids:
        os.sched_setaffinity(cluster.pids["forwarder"], cores)


def measure_cluster(sess: Any, tasks: list[str], cores: dict[str, int]) -> dict[str, Any]:
    """The links between the tasks and the servers' constants, as CostModel fields."""
    servers = measure_servers(sess, tasks)
    links = task_links(sess, tasks)
    # A pinned task's inter-op pool has exactly its cores' threads; without pinning, the
    # measured number of ops it runs at once.
    threads = {t: cores.get(t, servers.threads[t]) for t in tasks}
    return {
        "fields": {
            "task_links": links,
            "task_threads": threads,
            "task_step_us": servers.task_step_us,
            "step_us": servers.base_us,
            "master_task_us": servers.master_task_us,
            "master": master_task(sess),
        },
        "report": {
            "links": {
                " ".join(k): {"alpha_us": v.alpha, "beta_us_per_byte": v.beta}
                for k, v in links.items()
            },
            "measured_threads": dict(servers.threads),
            "threads_used": threads,
            "task_step_us": servers.task_step_us,
            "base_us": servers.base_us,
            "master_task_us": servers.master_task_us,
        },
    }


def one_graph(
    cluster: Any,
    name: str,
    tasks: list[str],
    cores: dict[str, int],
    fields: dict[str, Any],
    runs: int,
    budget: float,
    rounds: int,
) -> dict[str, Any]:
    """Every placement of one graph: predicted and measured step times (the median of
    `rounds` interleaved rounds of `runs` steps each)."""
    graph, fetch, feed, _ = GRAPHS[name]()
    devices = [f"{t}/device:CPU:0" for t in tasks]
    sess = cluster.session(graph=graph, soft=True, optimize=False)
    try:
        t0 = time.perf_counter()
        profiles = profile_devices(sess, fetch, devices, feed, repeat=5, cores=cores)
        profile_s = time.perf_counter() - t0
        cost = CostModel.from_profiles(profiles, **fields)
        problem, ops = problem_from_graph(fetch, devices, cost, graph=graph, respect_pins=False)
        names = [op.name for op in ops]

        chosen: dict[str, list[int]] = {}
        for k, t in enumerate(tasks):
            chosen[f"single {t}"] = [k] * problem.n
        if name in BY_HAND and len(tasks) > 1:
            label, split = BY_HAND[name]
            chosen[label] = split(ops)
        for strategy in ("round_robin", "heft"):
            chosen[strategy] = place(problem, strategy, budget).tolist()
        for verify in (0, 2):
            p = autoplace(
                fetch,
                devices,
                cost=cost,
                session=sess,
                feed=feed,
                verify=verify,
                runs=runs,
                budget=budget,
                respect_pins=False,
            )
            label = f"autoplace{' verify=2' if verify else ''} ({p.strategy})"
            chosen[label] = [devices.index(p.devices[n]) for n in names]

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
            "ops": problem.n,
            "profile_s": profile_s,
            "shared_profiles": profiles.shared,
            "op_offsets_us": problem.op_offsets,
            "rows": rows,
        }
    finally:
        sess.close()


def summary(graphs: list[dict[str, Any]]) -> dict[str, Any]:
    """Speed-ups of autoplace over the best single task, and prediction errors."""
    errors = []
    out: dict[str, Any] = {"graphs": {}}
    for g in graphs:
        single = min(
            (r for r in g["rows"] if r["placement"].startswith("single")),
            key=lambda r: r["measured_us"],
        )
        autos = {
            r["placement"].split(" (")[0]: r for r in g["rows"] if "autoplace" in r["placement"]
        }
        by_hand = [r["measured_us"] for r in g["rows"] if r["placement"].endswith("(by hand)")]
        out["graphs"][g["graph"]] = {
            "best_single_us": single["measured_us"],
            "by hand": [single["measured_us"] / us for us in by_hand],
            **{f"{k} speed-up": single["measured_us"] / r["measured_us"] for k, r in autos.items()},
            # Paired by round: slower than the best single task in each interleaved round.
            "slower every round": [
                k
                for k, r in autos.items()
                if all(
                    a > b
                    for a, b in zip(
                        r["measured_rounds_us"], single["measured_rounds_us"], strict=True
                    )
                )
            ],
        }
        for r in g["rows"]:
            r["error"] = (r["predicted_us"] - r["measured_us"]) / r["measured_us"]
            errors.append(abs(r["error"]))
    out["median_abs_error"] = statistics.median(errors)
    out["max_abs_error"] = max(errors)
    out["repeat_spread"] = repeat_spread(graphs)
    return out


def repeat_spread(graphs: list[dict[str, Any]]) -> float:
    """The noise floor: over the distinct placements measured, the median ratio of their
    slowest round to their fastest."""
    spreads = {
        (g["graph"], tuple(r["assignment"])): max(r["measured_rounds_us"])
        / min(r["measured_rounds_us"])
        for g in graphs
        for r in g["rows"]
    }
    return statistics.median(spreads.values())


def targets(result: dict[str, Any]) -> list[str]:
    """The issue's targets (2 cores, 2 one-core tasks), each with met or not met."""
    s = result["summary"]
    graphs = s["graphs"]

    def met(ok: bool) -> str:
        return "met" if ok else "NOT met"

    slower = [
        f"{name} ({k.split(' speed-up')[0]}: {v:.2f})"
        for name, g in graphs.items()
        for k, v in g.items()
        if k.endswith("speed-up") and v < 1.0
    ]
    every_round = [f"{name} ({k})" for name, g in graphs.items() for k in g["slower every round"]]
    tower = graphs.get("two_tower_mlp", {})
    best_tower = max((v for k, v in tower.items() if k.endswith("speed-up")), default=0.0)
    hand = "".join(f"; the towers split by hand: {v:.2f}x" for v in tower.get("by hand", []))
    loaded = float(result["load_before"].split()[0]) > (os.cpu_count() or 1)
    return [
        "Targets (2 cores, 2 one-core tasks):",
        f"- autoplace measured never slower than the best single task: {met(not slower)}"
        + (f" (slower: {', '.join(slower)})" if slower else "")
        + "; slower than it in every one of the interleaved rounds: "
        + (", ".join(every_round) or "none"),
        f"- at least 1.3x faster than it on two_tower_mlp: {met(best_tower >= 1.3)} "
        f"({best_tower:.2f}x{hand})",
        f"- prediction error median <= 20%: {met(s['median_abs_error'] <= 0.2)} "
        f"({100 * s['median_abs_error']:.1f}%); worst <= 40%: "
        f"{met(s['max_abs_error'] <= 0.4)} ({100 * s['max_abs_error']:.1f}%)",
        f"- noise floor: a placement's slowest round was {s['repeat_spread']:.2f}x its fastest "
        "(median over the distinct placements)"
        + (
            f"; the load average ({result['load_before'].split()[0]}) was above the "
            f"{os.cpu_count()} cores, so these timings are inflated and noisy"
            if loaded
            else ""
        ),
        "",
    ]


def markdown(result: dict[str, Any]) -> str:
    """servers.md: how it was run, the constants measured, and every graph's table."""
    s = result["summary"]
    lines = [
        "# Placement across servers (measured)",
        "",
        "Written by `benchmarks/placement/servers.py` (see its docstring). Predictions use only",
        "what is measured before any placement is timed: each task's profile (tasks of equal",
        "cores share one), calibrated against its own untraced step (a per-op offset), the link",
        "between the tasks (`measure_link`; a transfer is work of both tasks' cores, half each),",
        "and the servers' constants (`measure_servers`: the master's step alone and per further",
        "task; a pinned task's inter-op pool is its cores). The client (this process) and the",
        "cluster's forwarder run on task 0's core. Measured: the median over `--rounds`",
        "interleaved rounds of the median of `--runs` steps in a fresh session. Error:",
        "(predicted - measured) / measured.",
        "",
        f"`{result['command']}`, {result['date']}, {result['machine']}; load average "
        f"{result['load_before']} before, {result['load_after']} after; {result['seconds']:.0f} s.",
        f"{result['tasks']} worker tasks, cores per task: {result['cores_per_task']} "
        f"({result['cores']}); the client talks to task 0.",
        "",
        "Measured once: " + json.dumps(result["cluster"], default=str),
        "",
        "| graph | ops | placement | predicted µs | measured µs | error |",
        "|---|---:|---|---:|---:|---:|",
    ]
    for g in result["graphs"]:
        for r in g["rows"]:
            lines.append(
                f"| {g['graph']} | {g['ops']} | {r['placement']} | {r['predicted_us']:.0f} | "
                f"{r['measured_us']:.0f} | {100 * r['error']:+.0f}% |"
            )
    lines += [
        "",
        "| graph | best single task µs | autoplace speed-up | autoplace verify=2 speed-up |",
        "|---|---:|---:|---:|",
    ]
    for name, v in s["graphs"].items():
        lines.append(
            f"| {name} | {v['best_single_us']:.0f} | {v.get('autoplace speed-up', 0):.2f} | "
            f"{v.get('autoplace verify=2 speed-up', 0):.2f} |"
        )
    lines += [
        "",
        f"Prediction error over all {sum(len(g['rows']) for g in result['graphs'])} "
        f"measured placements: median {100 * s['median_abs_error']:.1f}%, worst "
        f"{100 * s['max_abs_error']:.1f}%.",
        "",
    ]
    return "\n".join(lines + targets(result))


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; write servers.json and servers.md."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=2)
    parser.add_argument("--cores-per-task", type=int, default=None)
    parser.add_argument("--runs", type=int, default=10, help="steps per measurement")
    parser.add_argument("--budget", type=float, default=0.8, help="seconds per placement")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved measuring rounds")
    parser.add_argument("--graphs", nargs="*", default=list(GRAPHS), choices=list(GRAPHS))
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    load_before = os.getloadavg()
    with dp.LocalCluster(ps=0, workers=args.tasks, cores_per_task=args.cores_per_task) as cluster:
        tasks = [f"/job:worker/task:{i}" for i in range(args.tasks)]
        if cluster.cores:
            pin_client(cluster)
        cores = {
            f"/job:{r.split('/')[0]}/task:{r.split('/')[1]}": len(c)
            for r, c in cluster.cores.items()
        }
        with cluster.session() as sess:
            measured = measure_cluster(sess, tasks, cores)
        graphs = [
            one_graph(
                cluster, g, tasks, cores, measured["fields"], args.runs, args.budget, args.rounds
            )
            for g in args.graphs
        ]
    result = {
        "command": "benchmarks/placement/servers.py "
        + " ".join(sys.argv[1:] if argv is None else argv),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{platform.machine()}, {platform.system()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}",
        "load_before": " ".join(f"{x:.2f}" for x in load_before),
        "load_after": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "tasks": args.tasks,
        "cores_per_task": args.cores_per_task,
        "cores": cores,
        "cluster": measured["report"],
        "graphs": graphs,
        "seconds": time.perf_counter() - t0,
    }
    result["summary"] = summary(graphs)
    (HERE / "servers.json").write_text(json.dumps(result, indent=1, default=str) + "\n")
    (HERE / "servers.md").write_text(markdown(result))
    print(json.dumps(result, indent=1, default=str) if args.json else markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
