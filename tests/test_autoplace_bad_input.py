"""Bad input to automatic placement: a table for the Python API and one for `devplace place`.

Each case asserts the error type (exit status for the command line), that the message names
the input (the file, the place inside it, or the option), and that no traceback is shown.
"""

from __future__ import annotations

import copy
import json
import math
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import devplace as dp
from devplace.autoplacer import AutoPlacementError, autoplace, place, workloads
from devplace.autoplacer.command import main
from devplace.autoplacer.placers.m_sct import MAX_SCT_OPS
from devplace.autoplacer.placers.search import MAX_BUDGET_S, run_search
from devplace.autoplacer.workloads import (
    MAX_DEVICES,
    WorkloadError,
    chain,
    load_workload,
    random_layered,
)

#: Seconds a rejected `devplace place` may take: start-up (TensorFlow's import, ~3-6 s on a
#: busy machine) plus the check; nothing may wait for a placement or a budget.
CLI_BOUND_S = 60

GOOD = {
    "maxSizePerFPGA": 10.0,
    "maxFPGAs": 1,
    "maxCPUs": 1,
    "nodes": [
        {"id": 1, "supportedOnFpga": 1, "cpuLatency": 4, "fpgaLatency": 1, "size": 2},
        {"id": 2, "supportedOnFpga": 0, "cpuLatency": 3, "fpgaLatency": 0, "size": 0},
        {"id": 3, "supportedOnFpga": True, "cpuLatency": 5, "fpgaLatency": 2},
    ],
    "edges": [
        {"sourceId": 1, "destId": 2, "cost": 1},
        {"sourceId": 2, "destId": 3, "cost": 0.5},
    ],
}


def _edit(path: str, value: object) -> dict:
    """GOOD with the value at `path` ("nodes.1.cpuLatency") replaced, or deleted if DELETE."""
    data = copy.deepcopy(GOOD)
    *parents, last = path.split(".")
    obj: object = data
    for key in parents:
        obj = obj[int(key)] if isinstance(obj, list) else obj[key]  # type: ignore[index]
    key = int(last) if isinstance(obj, list) else last
    if value is DELETE:
        del obj[key]  # type: ignore[attr-defined]
    else:
        obj[key] = value  # type: ignore[index]
    return data


DELETE = object()

# (case id, file content, what the message must contain besides the file name)
WORKLOADS = [
    ("missing id", _edit("nodes.1.id", DELETE), ["nodes[1].id", "'id' field"]),
    ("missing cpuLatency", _edit("nodes.0.cpuLatency", DELETE), ["nodes[0] (id 1).cpuLatency"]),
    ("missing fpgaLatency", _edit("nodes.2.fpgaLatency", DELETE), ["(id 3).fpgaLatency"]),
    ("missing edge cost", _edit("edges.1.cost", DELETE), ["edges[1].cost"]),
    ("missing edges", _edit("edges", DELETE), ["edges", "'edges' field"]),
    ("nodes as a dict", _edit("nodes", {"1": GOOD["nodes"][0]}), ["nodes", "an object"]),
    ("node not an object", _edit("nodes.1", [2, 3]), ["nodes[1]", "a node object", "a list"]),
    ("edge not an object", _edit("edges.0", "1->2"), ["edges[0]", "an edge object", "'1->2'"]),
    ("string id", _edit("nodes.2.id", "3"), ["nodes[2].id", "an integer id", "'3'"]),
    ("mixed id types", _edit("edges.0.sourceId", "1"), ["edges[0].sourceId", "'1'"]),
    ("latency as string", _edit("nodes.0.cpuLatency", "4"), ["(id 1).cpuLatency", "'4'"]),
    ("latency as bool", _edit("nodes.0.cpuLatency", True), ["(id 1).cpuLatency", "true"]),
    ("negative latency", _edit("nodes.1.cpuLatency", -3), ["(id 2).cpuLatency", ">= 0", "-3"]),
    ("infinite latency", _edit("nodes.0.fpgaLatency", math.inf), ["(id 1).fpgaLatency", "Inf"]),
    ("NaN cost", _edit("edges.0.cost", math.nan), ["edges[0].cost", "NaN"]),
    ("negative size", _edit("nodes.2.size", -1), ["nodes[2] (id 3).size", "-1"]),
    ("flag not 0/1", _edit("nodes.0.supportedOnFpga", 2), ["(id 1).supportedOnFpga", "2"]),
    ("colour class as text", _edit("nodes.0.colorClass", "a"), ["(id 1).colorClass"]),
    ("self-loop", _edit("edges.0.destId", 1), ["edges[0]", "self-loop on node id 1"]),
    ("unknown node", _edit("edges.1.destId", 99), ["edges[1].destId", "99"]),
    ("duplicate id", _edit("nodes.1.id", 1), ["second node with id 1"]),
    ("no nodes", _edit("nodes", []), ["nodes", "at least one node"]),
    ("no devices", _edit("maxCPUs", 0) | {"maxFPGAs": 0}, ["maxFPGAs + maxCPUs"]),
    ("device bomb", _edit("maxFPGAs", 100_000), ["maxFPGAs", f"0..{MAX_DEVICES}", "100000"]),
    ("negative count", _edit("maxCPUs", -1), ["maxCPUs", "-1"]),
    ("fractional count", _edit("maxCPUs", 1.5), ["maxCPUs", "1.5"]),
    ("top level a list", [GOOD], ["top level", "a list of 1"]),
    ("cycle", _edit("edges.0.sourceId", 3), ["cycle through ops", "'3'"]),
    ("runs nowhere", _edit("maxCPUs", 0), ["op '2'", "can run on none of the devices"]),
]


def _write(tmp_path: Path, content: object, name: str = "w.json") -> Path:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


def test_the_good_workload_loads(tmp_path):
    p = load_workload(_write(tmp_path, GOOD))
    assert (p.n, p.d) == (3, 2)
    assert np.isinf(p.compute[1, 0])  # id 2 is not supported on the accelerator


@pytest.mark.parametrize(
    ("content", "needles"), [c[1:] for c in WORKLOADS], ids=[c[0] for c in WORKLOADS]
)
def test_load_workload_names_the_file_and_the_place(tmp_path, content, needles):
    path = _write(tmp_path, content, "bad-input.json")
    with pytest.raises(WorkloadError) as info:
        load_workload(path)
    message = str(info.value)
    assert "bad-input.json" in message and "hint:" in message
    for needle in needles:
        assert needle in message
    assert isinstance(info.value, (dp.Error, ValueError))


def test_unreadable_and_malformed_files_are_named(tmp_path):
    cases = {
        tmp_path / "absent.json": "absent.json",
        _write(tmp_path, "{nodes: 1", "broken.json"): "not valid JSON",
        _write(tmp_path, "[" * 100_000 + "]" * 100_000, "deep.json"): "nested too deeply",
        _write(tmp_path, "", "empty.json"): "not valid JSON",
    }
    for path, needle in cases.items():
        with pytest.raises(WorkloadError, match=needle) as info:
            load_workload(path)
        assert path.name in str(info.value)


def test_too_many_nodes_are_refused_before_arrays_are_made(tmp_path, monkeypatch):
    monkeypatch.setattr(workloads, "MAX_NODES", 1000)  # the real limit is millions
    nodes = [{"id": i, "cpuLatency": 1, "fpgaLatency": 1} for i in range(1001)]
    path = _write(tmp_path, {**GOOD, "nodes": nodes, "edges": []})
    with pytest.raises(WorkloadError, match="at most 1,000 nodes"):
        load_workload(path)


@pytest.mark.parametrize("source", ["file", "endless"])
def test_input_over_the_size_limit_is_refused_unread(tmp_path, monkeypatch, source):
    monkeypatch.setattr(workloads, "MAX_WORKLOAD_BYTES", 1000)
    path = Path("/dev/zero") if source == "endless" else _write(tmp_path, " " * 1001, "big.json")
    with pytest.raises(WorkloadError, match=f"{path.name}.* is larger than"):
        load_workload(path)


@pytest.mark.parametrize("budget", [math.inf, 1e9, math.nan, 0, -1, "soon", None, True])
def test_place_refuses_budgets_outside_the_range(budget):
    with pytest.raises(AutoPlacementError) as info:
        place(chain(4), "auto", budget)  # type: ignore[arg-type]
    message = str(info.value)
    assert "budget" in message and f"(0, {MAX_BUDGET_S:g}]" in message and repr(budget) in message


@pytest.mark.parametrize("budget", [math.inf, 0, "soon"])
def test_autoplace_refuses_budgets_outside_the_range(budget):
    x = dp.constant(1.0)
    with pytest.raises(AutoPlacementError, match=r"budget must be a number of seconds in \(0, "):
        autoplace(dp.tf.sin(x), devices=["/cpu:0"], budget=budget)


def test_a_placer_above_its_size_limit_is_refused_by_name():
    p = random_layered(MAX_SCT_OPS + 1, seed=0)
    with pytest.raises(AutoPlacementError, match=f"m_sct is for at most {MAX_SCT_OPS:,} ops.*hint"):
        place(p, "m_sct")


def test_search_starts_no_portfolio_member_once_the_budget_is_spent():
    found = run_search(random_layered(200, seed=1), budget_s=1e-9)
    assert found.start == "heft"  # the first member always runs, so there is a result
    assert "not started: the budget was spent" in found.skipped.values()


def _layered_workload(n: int, seed: int = 0) -> dict:
    """A workload file's content: n nodes in layers of 3, each fed by two of the layer before."""
    rng = np.random.default_rng(seed)
    nodes = [
        {
            "id": i,
            "supportedOnFpga": 1,
            "cpuLatency": int(rng.integers(5, 40)),
            "fpgaLatency": int(rng.integers(1, 10)),
        }
        for i in range(n)
    ]
    edges = [
        {"sourceId": int(u), "destId": v, "cost": int(rng.integers(1, 6))}
        for v in range(3, n)
        for u in {v - 3 - v % 3, v - 1 - v % 3}
    ]
    return {"maxSizePerFPGA": 100.0, "maxFPGAs": 2, "maxCPUs": 1, "nodes": nodes, "edges": edges}


def test_place_command_keeps_an_exact_placer_to_its_budget(tmp_path, capsys):
    path = _write(tmp_path, _layered_workload(40))
    out = tmp_path / "out.json"
    t0 = time.monotonic()
    assert main([str(path), "--strategy", "milp", "--budget", "1", "-o", str(out)]) == 0
    assert time.monotonic() - t0 < 1 + 5  # budget plus a generous margin for a busy machine
    result = json.loads(out.read_text())
    assert result["chosen"] == "milp" and result["optimal"] is False and result["feasible"]
    assert "not proven optimal" in capsys.readouterr().out


# (case id, extra arguments, file content or None for no file, what stderr must contain).
# The table samples each class once (the API table above holds every case): in this process in
# the fast tier, and each in a fresh process (which imports TensorFlow) in the slow one.
CLI_CASES = [
    ("budget inf", ["--budget", "inf"], GOOD, ["--budget", "(0, 3600]", "inf"]),
    ("budget 1e9", ["--budget", "1e9"], GOOD, ["--budget", "1e9"]),
    ("budget text", ["--budget", "soon"], GOOD, ["--budget", "'soon'"]),
    ("missing file", [], None, ["cli.json"]),
    ("missing cpuLatency", [], WORKLOADS[1][1], ["cli.json", "nodes[0] (id 1).cpuLatency"]),
    ("device bomb", [], WORKLOADS[23][1], ["cli.json", "maxFPGAs"]),
    ("unknown strategy", ["--strategy", "fastest"], GOOD, ["'fastest'", "heft"]),
]


CLI_TABLE = pytest.mark.parametrize(
    ("extra", "content", "needles"), [c[1:] for c in CLI_CASES], ids=[c[0] for c in CLI_CASES]
)


def _cli_file(tmp_path: Path, content: object) -> Path:
    path = tmp_path / "cli.json"
    if content is not None:
        path.write_text(json.dumps(content))
    return path


@CLI_TABLE
def test_place_command_in_process_rejects_bad_input_in_one_message(
    tmp_path, capsys, extra, content, needles
):
    path = _cli_file(tmp_path, content)
    try:
        code = main([str(path), *extra])
    except SystemExit as stop:  # argparse's refusals
        code = stop.code
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and "Traceback" not in err
    for needle in needles:
        assert needle in err


@pytest.mark.slow
@CLI_TABLE
def test_place_command_rejects_bad_input_in_one_message(tmp_path, extra, content, needles):
    path = _cli_file(tmp_path, content)
    t0 = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "devplace", "place", str(path), *extra],
        capture_output=True,
        text=True,
        timeout=CLI_BOUND_S,
    )
    assert time.monotonic() - t0 < CLI_BOUND_S
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    for needle in needles:
        assert needle in proc.stderr
