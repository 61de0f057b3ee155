"""Workload files scored as their README says, the cost model, and `devplace place`."""

from __future__ import annotations

import json

import numpy as np
import pytest

from devplace.autoplace import NVLINK, PCIE, CostModel, PlacementError, fit_link, simulate
from devplace.autoplace.command import place_file
from devplace.autoplace.cost import device_kind
from devplace.autoplace.workloads import (
    WORKLOAD_DIR,
    load_workload,
    shared_workloads,
    small_graphs,
)
from devplace.cli import main

TINY = {
    "maxSizePerFPGA": 10.0,
    "maxFPGAs": 2,
    "maxCPUs": 2,
    "nodes": [
        {"id": 5, "supportedOnFpga": 1, "cpuLatency": 10, "fpgaLatency": 1, "size": 6},
        {"id": 2, "supportedOnFpga": 1, "cpuLatency": 20, "fpgaLatency": 2, "size": 6},
        {"id": 9, "supportedOnFpga": 0, "cpuLatency": 4, "fpgaLatency": 0, "size": 0},
        {
            "id": 7,
            "supportedOnFpga": 1,
            "cpuLatency": 8,
            "fpgaLatency": 1,
            "size": 1,
            "colorClass": 3,
        },
        {
            "id": 8,
            "supportedOnFpga": 1,
            "cpuLatency": 8,
            "fpgaLatency": 1,
            "size": 1,
            "colorClass": 3,
        },
    ],
    "edges": [
        {"sourceId": 2, "destId": 5, "cost": 3},
        {"sourceId": 5, "destId": 9, "cost": 0.5},
        {"sourceId": 9, "destId": 7, "cost": 0.25},
        {"sourceId": 7, "destId": 8, "cost": 1},
    ],
}


@pytest.fixture
def tiny(tmp_path):
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(TINY))
    return path


def test_tiny_workload_follows_the_readme_rules(tiny):
    p = load_workload(tiny)
    assert [dev.name for dev in p.devices] == ["acc:0", "acc:1", "cpu:0", "cpu:1"]
    assert p.names == ["2", "5", "7", "8", "9"]  # by id
    assert p.caps[:2].tolist() == [10, 10] and np.isinf(p.caps[2:]).all()
    assert not p.allowed[4, :2].any()  # id 9 is CPU-only
    assert p.groups[2] == p.groups[3]
    # 2 on acc:0, 5 on acc:1 (2 * 3 acc-acc), 9 on cpu:0 (0.5), 7+8 on cpu:1 (free).
    s = simulate(p, [0, 1, 3, 3, 2])
    assert s.makespan == pytest.approx(2 + 6 + 1 + 0.5 + 4 + 0 + 8 + 8)
    assert not simulate(p, [0, 0, 3, 3, 2]).feasible  # 12 bytes on a 10-byte accelerator


def test_shared_workloads_load_with_their_sizes():
    by = {p.name: p for p in shared_workloads()}
    assert (by["bert24-layers"].n, by["bert24-layers"].d) == (32, 13)
    assert (by["resnet50-layers"].n, by["resnet50-layers"].d) == (177, 22)
    assert (by["bert-l3-operators"].n, by["bert-l3-operators"].d) == (235, 12)
    assert not by["bert24-layers"].serial_links


def test_small_graphs_are_small_dags():
    for p in small_graphs():
        assert 8 <= p.n <= 14
        assert p.lower_bound() > 0


def test_bad_workloads_are_named(tmp_path):
    with pytest.raises(PlacementError, match="nope.json"):
        load_workload(tmp_path / "nope.json")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**TINY, "edges": [{"sourceId": 2, "destId": 99, "cost": 1}]}))
    with pytest.raises(PlacementError, match="bad.json.*unknown node id"):
        load_workload(bad)
    missing = tmp_path / "missing.json"
    missing.write_text(json.dumps({"nodes": []}))
    with pytest.raises(PlacementError, match="missing.json.*'edges'.*hint"):
        load_workload(missing)


def test_place_file_reports_the_simulated_makespan(tiny, tmp_path):
    out = tmp_path / "out.json"
    assert main(["place", str(tiny), "--strategy", "heft", "-o", str(out)]) == 0
    result = json.loads(out.read_text())
    assert set(result["assignment"]) == {"2", "5", "7", "8", "9"}
    p = load_workload(tiny)
    names = [dev.name for dev in p.devices]
    a = [names.index(result["assignment"][k]) for k in p.names]
    assert result["makespan"] == pytest.approx(simulate(p, a).makespan)
    assert result["strategy"] == "heft" and result["seconds"] >= 0


def test_place_file_on_a_shared_workload_is_feasible():
    result = place_file(str(WORKLOAD_DIR / "bert24-layers.json"), "search", budget_s=0.3)
    assert result["feasible"]
    assert len(result["assignment"]) == 32


def test_place_command_bad_input_exits_2(tmp_path, capsys):
    assert main(["place", str(tmp_path / "none.json")]) == 2
    assert "none.json" in capsys.readouterr().err


def test_fit_link_recovers_alpha_and_beta():
    sizes = np.array([1e3, 1e5, 1e6, 4e6])
    link = fit_link(sizes, 7.0 + 2e-4 * sizes)
    assert link.alpha == pytest.approx(7.0, rel=1e-6)
    assert link.beta == pytest.approx(2e-4, rel=1e-6)
    with pytest.raises(PlacementError, match="at least 2"):
        fit_link([1.0], [2.0])


def test_link_matrices_for_the_presets():
    names = ["/device:CPU:0", "/device:GPU:0", "/device:GPU:1"]
    alpha, beta = CostModel.pcie().links(names)
    assert beta[0, 1] == PCIE.beta and beta[1, 2] == 2 * PCIE.beta  # through host memory
    assert beta[0, 0] == 0 and alpha[1, 2] == 2 * PCIE.alpha
    alpha, beta = CostModel.nvlink().links(names)
    assert beta[1, 2] == NVLINK.beta and beta[2, 0] == PCIE.beta
    compute = CostModel(speeds={"acc": 10.0}).compute(np.array([100.0]), names)
    assert compute.tolist() == [[100.0, 10.0, 10.0]]
    assert device_kind("/job:w/task:0/device:CPU:3") == "cpu" and device_kind("acc:0") == "acc"
    with pytest.raises(PlacementError, match="GPU:0"):
        CostModel(speeds={"/device:GPU:0": 0}).speed("/device:GPU:0")
