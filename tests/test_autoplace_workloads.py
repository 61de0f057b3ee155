"""Workload files scored as their README says, the cost model, and `devplace place`."""

from __future__ import annotations

import gc
import heapq
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from devplace.autoplacer import (
    NVLINK,
    PCIE,
    AutoPlacementError,
    CostModel,
    fit_link,
    place,
    simulate,
)
from devplace.autoplacer.command import main as place_command
from devplace.autoplacer.command import place_file
from devplace.autoplacer.cost import device_kind
from devplace.autoplacer.placers.search import DEFAULT_BUDGET_S, MAX_BUDGET_S
from devplace.autoplacer.workloads import (
    WORKLOAD_DIR,
    bundled_workloads,
    load_workload,
    read_workload,
    shared_workloads,
    small_graphs,
)
from devplace.cli import main
from devplace.core import _json
from devplace.core._json import parse_json

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


def readme_score(data: dict, device_of: dict) -> float:
    """The README's scoring rules, written out directly (node ids -> "acc:i" / "cpu:j").

    Each step schedules, on the device that can start something earliest, that device's
    earliest-ready node (ties: topological index); at one instant, a node taking no time goes
    before one that takes time, so what it makes ready at that instant competes too.
    """
    nodes = {x["id"]: x for x in data["nodes"]}
    preds: dict = {i: [] for i in nodes}
    succs: dict = {i: [] for i in nodes}
    cost = {}
    for e in data["edges"]:
        preds[e["destId"]].append(e["sourceId"])
        succs[e["sourceId"]].append(e["destId"])
        cost[e["sourceId"]] = e["cost"]
    indeg = {i: len(preds[i]) for i in nodes}
    heap = sorted(i for i in nodes if indeg[i] == 0)
    topo: dict = {}
    while heap:
        u = heapq.heappop(heap)
        topo[u] = len(topo)
        for v in succs[u]:
            indeg[v] -= 1
            if indeg[v] == 0:
                heapq.heappush(heap, v)

    def kind(dev: str) -> str:
        return dev.split(":")[0]

    def delay(u: int, a: str, b: str) -> float:
        if a == b or kind(a) == kind(b) == "cpu":
            return 0.0
        return cost[u] if kind(a) != kind(b) else 2 * cost[u]

    def time_on(v: int) -> float:
        return nodes[v]["cpuLatency" if kind(device_of[v]) == "cpu" else "fpgaLatency"]

    finish: dict = {}
    free: dict = {}
    while len(finish) < len(nodes):
        ready_by_dev: dict = {}
        for v in nodes.keys() - finish.keys():
            if all(u in finish for u in preds[v]):
                dev = device_of[v]
                at = max((finish[u] + delay(u, device_of[u], dev) for u in preds[v]), default=0.0)
                ready_by_dev.setdefault(dev, []).append((at, topo[v], v))
        picks = []
        for dev, items in ready_by_dev.items():
            begin = max(free.get(dev, 0.0), min(items)[0])
            at, rank, v = min(x for x in items if x[0] <= begin)
            picks.append((begin, time_on(v) > 0, at, rank, v))
        begin, _, _, _, v = min(picks)
        finish[v] = free[device_of[v]] = begin + time_on(v)
    return max(finish.values())


def _readme_check(path, assignments) -> None:
    data = json.loads(path.read_text())
    p = load_workload(path)
    ids = sorted(x["id"] for x in data["nodes"])
    for a in assignments:
        device_of = {i: p.devices[x].name for i, x in zip(ids, a, strict=True)}
        assert simulate(p, a).makespan == pytest.approx(readme_score(data, device_of), abs=1e-9)


def test_simulator_scores_shared_workloads_as_the_readme_says():
    rng = np.random.default_rng(0)
    for path in sorted(WORKLOAD_DIR.glob("*.json")):
        p = load_workload(path)
        _, label = np.unique(p.groups, return_inverse=True)
        ok = p.group_allowed()
        first = [int(np.flatnonzero(label == g)[0]) for g in range(label.max() + 1)]
        randoms = [
            np.array([rng.choice(np.flatnonzero(ok[i])) for i in first])[label] for _ in range(3)
        ]
        placed = [place(p, s) for s in ("human", "heft", "contiguous")]
        _readme_check(path, placed + randoms)


@st.composite
def tiny_workloads(draw: st.DrawFn) -> tuple[dict, list[list[int]]]:
    """Workload files with many zero latencies and costs (instants where order matters)."""
    n = draw(st.integers(2, 9))
    ids = sorted(draw(st.sets(st.integers(0, 50), min_size=n, max_size=n)))
    lat = st.sampled_from([0.0, 0.0, 1.0, 2.0, 3.0])
    nodes = [
        {"id": i, "supportedOnFpga": 1, "cpuLatency": draw(lat), "fpgaLatency": draw(lat)}
        for i in ids
    ]
    cost = {i: draw(st.sampled_from([0.0, 0.0, 1.0, 2.5])) for i in ids}
    edges = [
        {"sourceId": ids[u], "destId": ids[v], "cost": cost[ids[u]]}
        for v in range(n)
        for u in range(v)
        if draw(st.booleans())
    ]
    data = {"maxSizePerFPGA": 1, "maxFPGAs": 2, "maxCPUs": 2, "nodes": nodes, "edges": edges}
    device = st.lists(st.integers(0, 3), min_size=n, max_size=n)
    return data, draw(st.lists(device, min_size=1, max_size=3))


@settings(max_examples=150, deadline=None)
@given(tiny_workloads())
def test_simulator_scores_tiny_workloads_as_the_readme_says(tmp_path_factory, case):
    data, assignments = case
    path = tmp_path_factory.mktemp("w") / "w.json"
    path.write_text(json.dumps(data))
    _readme_check(path, assignments)


def test_a_node_taking_no_time_completes_before_others_start_at_that_instant(tmp_path):
    # Node 1 (cpu:0) takes no time; node 4 (acc:1) needs it and so is ready at 0, as is node 10
    # (acc:1): 4 goes first (smaller topological index), 10 after it; node 16 (cpu:0) at 0.
    lat = {1: (0, 0), 4: (1, 2), 7: (1, 0), 10: (0, 2), 13: (2, 2), 16: (3, 0)}
    data = {
        "maxSizePerFPGA": 1,
        "maxFPGAs": 2,
        "maxCPUs": 2,
        "nodes": [
            {"id": i, "supportedOnFpga": 1, "cpuLatency": c, "fpgaLatency": f}
            for i, (c, f) in lat.items()
        ],
        "edges": [
            {"sourceId": u, "destId": v, "cost": 0}
            for u, v in [(1, 4), (4, 7), (1, 13), (4, 13), (1, 16)]
        ],
    }
    path = tmp_path / "zero.json"
    path.write_text(json.dumps(data))
    s = simulate(load_workload(path), [2, 1, 2, 1, 2, 2])  # acc:1 = 1, cpu:0 = 2
    assert s.start.tolist() == [0, 0, 3, 2, 4, 0]
    assert s.makespan == 6
    _readme_check(path, [[2, 1, 2, 1, 2, 2]])


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


def test_place_reports_the_readme_score_of_its_assignment_for_every_shared_workload():
    for path in sorted(WORKLOAD_DIR.glob("*.json")):
        result = place_file(str(path), "auto", budget_s=0.3)
        data = json.loads(path.read_text())
        device_of = {int(i): dev for i, dev in result["assignment"].items()}
        assert len(device_of) == len(data["nodes"])
        assert result["makespan"] == pytest.approx(readme_score(data, device_of), abs=1e-9)
        assert result["feasible"] and result["lower_bound"] <= result["makespan"]


def test_place_command_says_what_auto_chose_with_units(capsys):
    path = WORKLOAD_DIR / "bert-l3-operators.json"
    assert main(["place", str(path), "--budget", "0.3"]) == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)  # stdout stays the JSON record
    assert result["chosen"].startswith("search (from ")
    assert result["skipped"]["exhaustive"].startswith("exhaustive is for at most 14")
    summary = captured.err.splitlines()
    assert summary[0] == f"{path}: 235 ops on 12 devices; strategy auto chose {result['chosen']}"
    assert summary[1].startswith(f"makespan {result['makespan']:.6g} workload time units")
    assert "placed in " in summary[2] and summary[2].endswith(" s with loading and scoring)")
    assert f"skipped exhaustive: {result['skipped']['exhaustive']}" in summary


def test_place_command_with_output_file_prints_the_summary(tiny, tmp_path, capsys):
    out = tmp_path / "out.json"
    assert main(["place", str(tiny), "--strategy", "heft", "-o", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith("5 ops on 4 devices; strategy heft")
    assert json.loads(out.read_text())["chosen"] == "heft"


def test_place_help_states_the_budget_range_and_default(capsys):
    with pytest.raises(SystemExit) as info:
        main(["place", "--help"])
    assert info.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert f"in (0, {MAX_BUDGET_S:g}] (default {DEFAULT_BUDGET_S})" in text


def test_place_command_names_an_output_path_it_cannot_write(tiny, tmp_path, capsys):
    target = tmp_path / "missing-folder" / "out.json"
    assert main(["place", str(tiny), "-o", str(target)]) == 2
    err = capsys.readouterr().err
    assert "missing-folder" in err and "Traceback" not in err


def test_a_bundled_workload_is_placed_by_its_name_from_any_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # nothing of that name here: the bundled file is used
    assert bundled_workloads() == ["bert-l3-operators", "bert24-layers", "resnet50-layers"]
    assert main(["place", "bert24-layers", "--budget", "0.3"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert (
        result["feasible"]
        and len(result["assignment"]) == load_workload(WORKLOAD_DIR / "bert24-layers.json").n
    )
    assert load_workload("bert24-layers.json").n == len(result["assignment"])


def test_place_help_names_every_bundled_workload(capsys):
    with pytest.raises(SystemExit):
        main(["place", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert all(name in text for name in bundled_workloads())


def test_an_unknown_workload_name_lists_the_bundled_ones(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["place", "bert25-layers"]) == 2
    err = capsys.readouterr().err
    assert "'bert25-layers'" in err and "bert24-layers" in err and "Traceback" not in err


def test_place_command_bad_input_exits_2(tmp_path, capsys):
    assert main(["place", str(tmp_path / "none.json")]) == 2
    assert "none.json" in capsys.readouterr().err


def test_fit_link_recovers_alpha_and_beta():
    sizes = np.array([1e3, 1e5, 1e6, 4e6])
    link = fit_link(sizes, 7.0 + 2e-4 * sizes)
    assert link.alpha == pytest.approx(7.0, rel=1e-6)
    assert link.beta == pytest.approx(2e-4, rel=1e-6)
    with pytest.raises(AutoPlacementError, match="at least 2"):
        fit_link([1.0], [2.0])


def test_fit_link_lets_small_transfers_set_alpha():
    # Small transfers cost 2 µs plus 4 µs/MB; the two large ones are noisy (as measured on a
    # busy machine). Plain least squares would put alpha near 3.8 µs; relative error keeps 2.
    sizes = np.array([256.0, 1024, 4096, 16384, 65536, 1048576, 4194304])
    times = 2.0 + 4e-6 * sizes
    times[-2:] = [20.0, 18.0]
    link = fit_link(sizes, times)
    assert link.alpha == pytest.approx(2.0, abs=0.2)
    assert link.time(16384) == pytest.approx(2.0 + 4e-6 * 16384, rel=0.1)


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
    with pytest.raises(AutoPlacementError, match="GPU:0"):
        CostModel(speeds={"/device:GPU:0": 0}).speed("/device:GPU:0")


@pytest.mark.parametrize(
    "text",
    [
        json.dumps(TINY),
        '{"a": 1, "a": [2.5e-3, -0.0, 1E+2, "x\\u00e9\\n"]}',
        '{"id": 1234567890123456789012345}',  # beyond 64 bits: orjson would make a float
        '{"id": -9223372036854775809}',
        "[NaN, Infinity, -Infinity]",
        "[1e400]",
        '["\\ud800"]',
        "\ufeff[1]",
        "[1] x",
        "[1,]",
    ],
)
def test_workload_json_is_read_as_the_json_module_reads_it(text):
    raw = text.encode()
    try:
        expected = json.loads(raw)
    except json.JSONDecodeError as err:
        with pytest.raises(json.JSONDecodeError) as raised:
            parse_json(raw)
        assert str(raised.value) == str(err)
        return
    got = parse_json(raw)
    assert repr(got) == repr(expected)  # NaN and -0.0 too, and ints stay ints


def test_a_long_digit_run_is_found_across_the_chunks_it_is_read_in(monkeypatch):
    monkeypatch.setattr(_json, "_CHUNK", 8)
    digits = "1" * _json._LONG_RUN
    for offset in range(12):
        assert _json._has_long_digit_run((" " * offset + digits + " ").encode())
        assert not _json._has_long_digit_run((" " * offset + digits[1:] + " 1").encode())


def test_a_node_id_beyond_64_bits_is_kept_as_the_integer_written(tmp_path):
    data = json.loads(json.dumps(TINY))
    big = 10**24 + 7
    data["nodes"][0]["id"] = big
    for edge in data["edges"]:
        for end in ("sourceId", "destId"):
            edge[end] = big if edge[end] == TINY["nodes"][0]["id"] else edge[end]
    path = tmp_path / "big.json"
    path.write_text(json.dumps(data))
    assert big in read_workload(path).ids


def test_place_command_leaves_the_garbage_collector_as_it_found_it(tiny, tmp_path):
    out = tmp_path / "out.json"
    assert gc.isenabled()
    assert place_command([str(tiny), "-o", str(out)]) == 0
    assert gc.isenabled()
    gc.disable()
    try:
        assert place_command([str(tiny), "-o", str(out)]) == 0
        assert not gc.isenabled()
    finally:
        gc.enable()
