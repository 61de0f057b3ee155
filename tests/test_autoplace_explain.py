"""`explain()` on a recorded problem: every number against one computed by hand."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import devplace
from devplace.autoplacer import Problem, ProblemDevice, simulate
from devplace.autoplacer.explain import breakdown, explain_text
from devplace.autoplacer.workloads import load_workload
from devplace.core.formatting import format_time

T0, T1 = "/job:w/task:0/device:CPU:0", "/job:w/task:1/device:CPU:0"


def two_tasks() -> Problem:
    """x feeds A (1000 µs) and B (600 µs), joined by `join`; two one-core tasks, t0 the
    master; a crossing costs 100 µs (half each end), a step 500 µs, a further task 300 µs,
    and t1's partition starts 50 µs late."""
    devices = [ProblemDevice(T0, "cpu", host="t0"), ProblemDevice(T1, "cpu", host="t1")]
    times = [0.0, 1000.0, 600.0, 0.0]
    return Problem(
        names=["x", "A", "B", "join"],
        devices=devices,
        compute=np.array([[t, t] for t in times]),
        edges=[(0, 1), (0, 2), (1, 3), (2, 3)],
        xfer=np.full(4, 4096.0),
        link_alpha=np.array([[0.0, 100.0], [100.0, 0.0]]),
        link_beta=np.zeros((2, 2)),
        memory=np.zeros(4),
        out_bytes=np.full(4, 4096.0),
        step_cost=500.0,
        host_step_cost=300.0,
        master_host="t0",
        master_host_cost=200.0,
        host_start_delay=50.0,
    )


SPLIT, SINGLE = [0, 0, 1, 0], [0, 0, 0, 0]


def test_the_split_in_numbers():
    problem = two_tasks()
    # by hand: x's sender half 0-50 on t0, then A 50-1050; the receiver half 50-100 on t1
    # (its partition starts at 50), B 100-700, B's halves 700-750 (t1) and 1050-1100 (t0),
    # join at 1100; plus the step 500 and the further task 300
    assert simulate(problem, SPLIT).makespan == 1900.0
    assert simulate(problem, SINGLE).makespan == 2100.0  # 1000 + 600 + 500
    b = breakdown(problem, SPLIT, reference=0)
    assert (b.step, b.ops, b.compute, b.on_reference) == (
        1900.0,
        {0: 3, 1: 1},
        {0: 1000.0, 1: 600.0},
        {0: 1000.0, 1: 600.0},
    )
    assert (b.crossings, b.crossing_bytes, b.crossing_us) == (2, 8192.0, 200.0)
    assert b.overheads == {"step": 500.0, "further hosts": 300.0}
    assert b.start_delay == 50.0
    idle_master = breakdown(problem, [1, 1, 1, 1], reference=0)
    assert idle_master.overheads == {"step": 500.0, "further hosts": 300.0, "idle master": -200.0}


def test_explain_a_split_against_the_single_device():
    text = explain_text(two_tasks(), SPLIT, "search", SINGLE, ("single:t0", np.array(SINGLE)))
    assert text.splitlines() == [
        f"search: predicted step 1,900 µs; everything on {T0}: 2,100 µs (1.11x the pick's)",
        f"  compute per device (the same ops on {T0}):",
        f"    {T0}: 3 ops, 1,000 µs (1,000 µs there)",
        f"    {T1}: 1 op, 600 µs (600 µs there; 600 µs taken off {T0})",
        "  crossings: 2 tensors, 8,192 bytes, 200 µs of link time; between tasks each end's "
        "cores do part of it (50% the sender's)",
        "  fixed costs: 800 µs (step 500 µs, further hosts 300 µs); other tasks' partitions "
        "start 50 µs late",
        "  single:t0: predicted 2,100 µs (+11% against the pick); it takes 0 µs of compute off "
        f"{T0}, with 0 crossings (0 µs of link time), -300 µs more fixed costs",
    ]


def test_explain_a_single_device_pick_says_what_the_best_split_would_cost():
    text = explain_text(
        two_tasks(),
        SINGLE,
        "single:t0",
        SINGLE,
        ("search", np.array(SPLIT)),
        {"single:t0": [2000.0, 2100.0, 2200.0], "search": [2500.0, 2400.0, 2600.0]},
        "verify (3 interleaved rounds, spread 1.10x): kept single:t0",
    )
    lines = text.splitlines()
    assert (
        lines[0]
        == f"single:t0: predicted step 2,100 µs; everything on {T0}: 2,100 µs (1.00x the pick's)"
    )
    assert lines[-3] == (
        "  search: predicted 1,900 µs (-10% against the pick); it takes 600 µs of compute off "
        f"{T0}, with 2 crossings (200 µs of link time), 300 µs more fixed costs and a 50 µs "
        "later start elsewhere"
    )
    assert lines[-2] == "  measured (median): single:t0 2,100 µs, search 2,500 µs"
    assert lines[-1] == "  verify (3 interleaved rounds, spread 1.10x): kept single:t0"


def test_breakdown_of_a_recorded_workload_against_its_file():
    """bert24-layers (a shipped, profiled workload): layers alternate between acc:0 and cpu:0;
    every number of the breakdown recomputed from the JSON file by its documented rules."""

    path = Path(devplace.__file__).parent / "workloads" / "bert24-layers.json"
    raw = json.loads(path.read_text())
    problem = load_workload(path)
    names = [dev.name for dev in problem.devices]
    acc, cpu = names.index("acc:0"), names.index("cpu:0")
    device_of = {n["id"]: acc if k % 2 == 0 else cpu for k, n in enumerate(raw["nodes"])}
    assignment = [device_of[int(name.removeprefix("node"))] for name in problem.names]

    b = breakdown(problem, assignment, reference=cpu)
    nodes = {n["id"]: n for n in raw["nodes"]}
    on = {acc: "fpgaLatency", cpu: "cpuLatency"}
    for j in (acc, cpu):
        mine = [n for i, n in nodes.items() if device_of[i] == j]
        assert b.ops[j] == len(mine)
        assert b.compute[j] == pytest.approx(sum(n[on[j]] for n in mine))
        assert b.on_reference[j] == pytest.approx(sum(n["cpuLatency"] for n in mine))
    # one transfer per (source, other device); between a cpu and an acc it costs the edge's cost
    crossing = {
        (e["sourceId"], device_of[e["destId"]]): e
        for e in raw["edges"]
        if device_of[e["sourceId"]] != device_of[e["destId"]]
    }
    assert b.crossings == len(crossing)
    assert b.crossing_us == pytest.approx(sum(e["cost"] for e in crossing.values()))
    assert b.step == simulate(problem, assignment).makespan

    text = explain_text(problem, assignment, "alternating", [cpu] * problem.n)
    assert f"acc:0: {b.ops[acc]} ops, {format_time(b.compute[acc])}" in text
    assert f"crossings: {len(crossing)} tensors" in text
    assert f"{format_time(sum(e['cost'] for e in crossing.values()))} of link time" in text
