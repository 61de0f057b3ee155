"""How placement time grows with the graph: random DAGs of 1k to 1M ops on 4 devices.

    .venv/bin/python benchmarks/placement/scaling.py [--sizes 1000 5000 20000 100000 1000000]
        [--placer-sizes 1000 5000 20000] [--budget 0.8]

Each graph is a workload file (the format of python/devplace/workloads/README.md): op i takes
3 inputs drawn from the ops before it, accelerator times 1-10, CPU times 4x those, transfer
costs 0.5-5, on 2 accelerators and 2 CPU cores. Recorded per size: the whole `devplace place`
command for strategy auto (in process: reading, placement, scoring and writing the record, its
CPU seconds; and as a separate process, start-up included, with its peak memory), and per
registered placer at the smaller sizes its time and makespan, or why it was
refused. Wall and CPU seconds are both kept: on a shared machine the CPU time is the steadier
measure. Writes scaling.json and scaling.md beside this file with the machine, the command, the
load average and the date.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from devplace.autoplacer.command import main as place_command
from devplace.autoplacer.placers import PLACERS
from devplace.autoplacer.placers.search import DEFAULT_BUDGET_S
from devplace.autoplacer.simulator import simulate
from devplace.autoplacer.workloads import load_workload

HERE = Path(__file__).resolve().parent
INPUTS_PER_OP = 3


def random_dag(n: int, seed: int = 0) -> dict[str, Any]:
    """A workload with n ops, each fed by up to 3 distinct earlier ops, on 2 accs + 2 CPUs."""
    rng = np.random.default_rng(seed)
    acc = rng.uniform(1.0, 10.0, n)
    cost = rng.uniform(0.5, 5.0, n)
    nodes = [
        {"id": i, "supportedOnFpga": 1, "cpuLatency": 4 * a, "fpgaLatency": a, "size": 1.0}
        for i, a in enumerate(acc.tolist())
    ]
    edges = [
        {"sourceId": u, "destId": v, "cost": cost[u]}
        for v in range(1, n)
        for u in sorted(set(rng.integers(0, v, size=min(INPUTS_PER_OP, v)).tolist()))
    ]
    return {"maxSizePerFPGA": float(n), "maxFPGAs": 2, "maxCPUs": 2, "nodes": nodes, "edges": edges}


#: Runs the command given as its arguments and prints its exit status, wall seconds and peak
#: memory (ru_maxrss). A process forked from this one would count this one's memory as its
#: own (Linux carries the forking process's peak into the child's at exec: 3.7 GB reported
#: for a 1M-op command that peaks at 2.6 GB), so a small fresh process starts it.
_RUNNER = """
import os, subprocess, sys, time
t0 = time.perf_counter()
child = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
_, status, usage = os.wait4(child.pid, 0)
print(os.waitstatus_to_exitcode(status), time.perf_counter() - t0, usage.ru_maxrss)
"""


def time_command(path: Path, budget: float) -> tuple[float, float]:
    """Wall seconds and peak memory (MB) of `devplace place PATH` as a separate process
    (start-up included)."""
    command = [sys.executable, "-m", "devplace", "place", str(path), "--budget", str(budget)]
    out = subprocess.run(
        [sys.executable, "-c", _RUNNER, *command], capture_output=True, text=True, check=True
    ).stdout.split()
    if int(out[0]):
        raise RuntimeError(f"devplace place {path} failed ({out[0]})")
    return float(out[1]), int(out[2]) / 1024


def place_in_process(path: Path, budget: float) -> dict[str, Any]:
    """The whole `devplace place PATH -o OUT` in this process (reading, placing, scoring,
    writing the record): its result record with the command's CPU seconds."""
    out = path.with_suffix(".placed.json")
    c0 = time.process_time()
    with contextlib.redirect_stdout(io.StringIO()):
        status = place_command([str(path), "--budget", str(budget), "-o", str(out)])
    cpu = time.process_time() - c0
    if status:
        raise RuntimeError(f"devplace place {path} failed ({status})")
    result = json.loads(out.read_text())
    return {**result, "command_cpu_seconds": cpu}


def per_placer(path: Path, budget: float) -> dict[str, dict[str, Any]]:
    """Each registered placer's time and makespan on the workload, or why it was refused."""
    problem = load_workload(path)
    out: dict[str, dict[str, Any]] = {}
    for name, placer in PLACERS.items():
        refusal = placer.refusal(problem)
        if refusal is not None:
            out[name] = {"refused": refusal}
            continue
        t0, c0 = time.perf_counter(), time.process_time()
        assignment = placer(problem, budget)
        seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
        out[name] = {
            "seconds": seconds,
            "cpu_seconds": cpu,
            "makespan": simulate(problem, assignment).makespan,
        }
        print(f"  {name}: {seconds:.2f} s ({cpu:.2f} s CPU)", flush=True)
    return out


def markdown(record: dict[str, Any]) -> str:
    """The results as tables."""
    lines = [
        "# Placement scaling",
        "",
        f"{record['date']} on {record['machine']}.",
        f"Command: `{record['command']}`. Budget {record['budget']} s.",
        f"Load average (1, 5, 15 min) before {fmt_load(record['load_before'])}, after "
        f"{fmt_load(record['load_after'])}: wall times grow with other work on the machine, "
        "CPU times (of this process) much less.",
        "",
        "Random DAGs, 3 inputs per op, 2 accelerators + 2 CPUs (see scaling.py).",
        "",
        "## `devplace place` with strategy auto",
        "",
        "In process: the whole command (`devplace place DAG.json -o OUT.json`: reading, "
        "placing, scoring, writing) run in this process, its CPU seconds; placement: the "
        "placer alone; as a command: a separate process, start-up included, with its peak "
        "memory (maximum resident set).",
        "",
        "| ops | edges | in process CPU (s) | placement (s) | placement CPU (s) | "
        "as a command (s) | its memory (MB) | chosen | makespan | lower bound |",
        "|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|",
    ]
    for row in record["auto"]:
        lines.append(
            f"| {row['ops']:,} | {row['edges']:,} | {row['cpu_seconds']:.2f} | "
            f"{row['seconds']:.2f} | {row['placement_cpu_seconds']:.2f} | "
            f"{row['command_seconds']:.2f} | {row['command_mb']:,.0f} | {row['chosen']} | "
            f"{row['makespan']:.6g} | {row['lower_bound']:.6g} |"
        )
    sizes = list(record["placers"])
    lines += [
        "",
        "## Per placer: seconds, CPU seconds (makespan), or refused by size",
        "",
        "| placer | " + " | ".join(f"{int(n):,} ops" for n in sizes) + " |",
        "|---|" + "---:|" * len(sizes),
    ]
    for name in PLACERS:
        cells = []
        for n in sizes:
            cell = record["placers"][n][name]
            cells.append(
                "refused"
                if "refused" in cell
                else f"{cell['seconds']:.2f}, {cell['cpu_seconds']:.2f} ({cell['makespan']:.6g})"
            )
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    refusals = {
        f"{name}: {cell['refused']}"
        for by in record["placers"].values()
        for name, cell in by.items()
        if "refused" in cell
    }
    lines += ["", *(f"- {x}" for x in sorted(refusals))]
    return "\n".join(lines) + "\n"


def fmt_load(load: tuple[float, float, float]) -> str:
    """A load average triple as text."""
    return ", ".join(f"{x:.1f}" for x in load)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--sizes", type=int, nargs="+", default=[1000, 5000, 20000, 100000, 1000000]
    )
    parser.add_argument("--placer-sizes", type=int, nargs="+", default=[1000, 5000, 20000])
    parser.add_argument("--budget", type=float, default=DEFAULT_BUDGET_S)
    parser.add_argument("--out", default=str(HERE / "scaling"), help="output path stem")
    args = parser.parse_args()
    record: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, numpy {np.__version__}",
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "budget": args.budget,
        "load_before": os.getloadavg(),
        "auto": [],
        "placers": {},
    }
    with tempfile.TemporaryDirectory() as tmp:
        for n in sorted(set(args.sizes) | set(args.placer_sizes)):
            data = random_dag(n)
            path = Path(tmp) / f"dag{n}.json"
            path.write_text(json.dumps(data))
            if n in args.sizes:
                result = place_in_process(path, args.budget)
                row = {k: v for k, v in result.items() if k != "assignment"}
                command_seconds, command_mb = time_command(path, args.budget)
                row.update(
                    edges=len(data["edges"]),
                    placement_cpu_seconds=row.pop("cpu_seconds"),
                    cpu_seconds=row.pop("command_cpu_seconds"),
                    command_seconds=command_seconds,
                    command_mb=command_mb,
                )
                record["auto"].append(row)
                print(f"{n} ops: the command {row['cpu_seconds']:.2f} s CPU in process", flush=True)
            if n in args.placer_sizes:
                record["placers"][n] = per_placer(path, args.budget)
    record["load_after"] = os.getloadavg()
    Path(args.out + ".json").write_text(json.dumps(record, indent=1) + "\n")
    Path(args.out + ".md").write_text(markdown(record))


if __name__ == "__main__":
    main()
