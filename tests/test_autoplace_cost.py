"""The measured per-device cost model: profiles, fallback rule, link fit, profile_devices,
single-device guard and the verify path (on logical CPU devices)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import GPUS, requires_gpu

import devplace as dp
from devplace.autoplacer import (
    PCIE,
    AutoPlacementError,
    CostModel,
    DeviceProfiles,
    autoplace,
    fit_crossings,
    profile_devices,
    simulate,
)
from devplace.autoplacer.tf_graph import effective_assignment, problem_from_graph
from devplace.autoplacer.verify import MAX_VERIFY_ROUNDS, VERIFY_ROUNDS, decide

tf = dp.tf
ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "placement" / "data" / "gpu_measurements.json"
CPU, GPU = "/device:CPU:0", "/device:GPU:0"
sys.path.insert(0, str(ROOT / "benchmarks" / "placement"))
from models import MODELS  # noqa: E402


def _measurements() -> dict:
    return json.loads(DATA.read_text())


def test_profiles_give_each_kind_its_own_measured_time():
    data = _measurements()["models"]["two_tower_mlp"]["profiles"]
    prof = DeviceProfiles.load(DATA, model="two_tower_mlp")
    assert prof.kinds() == ["CPU", "GPU"]
    assert prof.time("MatMul", CPU) == data[CPU]["MatMul"]["us"]
    assert prof.time("MatMul", "/device:GPU:1") == data[GPU]["MatMul"]["us"]  # same kind
    assert prof.time("MatMul", CPU) / prof.time("MatMul", GPU) > 2  # not one speed factor
    assert prof.time("Relu", CPU) < prof.time("Relu", GPU)
    assert prof.runs_on("_arg_x_0_0", GPU) is False  # the feed stayed on the host
    assert prof.time("no_such_op", CPU) is None


def test_fallback_scales_by_the_median_ratio_of_the_same_op_type():
    prof = DeviceProfiles(
        {
            CPU: {
                "a": {"type": "MatMul", "us": 100.0, "device": CPU, "bytes": 4},
                "b": {"type": "MatMul", "us": 300.0, "device": CPU, "bytes": 4},
                "c": {"type": "Relu", "us": 10.0, "device": CPU, "bytes": 4},
                "d": {"type": "Relu", "us": 10.0, "device": CPU, "bytes": 4},
                "new": {"type": "MatMul", "us": 50.0, "device": CPU, "bytes": 4},
                "moved": {"type": "Relu", "us": 5.0, "device": CPU, "bytes": 4},
            },
            GPU: {
                "a": {"type": "MatMul", "us": 10.0, "device": GPU, "bytes": 4},
                "b": {"type": "MatMul", "us": 30.0, "device": GPU, "bytes": 4},
                "c": {"type": "Relu", "us": 40.0, "device": GPU, "bytes": 4},
                "d": {"type": "Relu", "us": 40.0, "device": GPU, "bytes": 4},
                "moved": {"type": "Relu", "us": 5.0, "device": CPU, "bytes": 4},
            },
        }
    )
    assert prof.time("new", GPU, "MatMul") == pytest.approx(5.0)  # 50 x median(0.1, 0.1)
    assert prof.time("new", GPU, "Conv2D") == pytest.approx(50 * 2.05)  # median(.1, .1, 4, 4)
    assert prof.runs_on("moved", GPU) is False
    compute = CostModel(profiles=prof).compute(
        np.array([1.0, 1.0]), [CPU, GPU], ops=[("c", "Relu"), ("moved", "Relu")]
    )
    assert compute.tolist() == [[10.0, 40.0], [5.0, np.inf]]
    assert prof.time("c", "/device:TPU:0") is None  # a kind never profiled


def test_profiles_save_and_load(tmp_path):
    prof = DeviceProfiles.load(DATA, model="lstm_seq2seq")
    path = prof.save(tmp_path / "lstm.json")
    again = DeviceProfiles.load(path)
    assert again.profiles == prof.profiles
    with pytest.raises(AutoPlacementError, match="no model 'nope'.*lstm_seq2seq"):
        DeviceProfiles.load(DATA, model="nope")
    with pytest.raises(AutoPlacementError, match="missing.json"):
        DeviceProfiles.load(tmp_path / "missing.json")
    with pytest.raises(AutoPlacementError, match="'/cpu:0'.*'MatMul'.*'us' >= 0.*hint"):
        DeviceProfiles({"/cpu:0": {"MatMul": {"us": -1}}})
    (tmp_path / "bad.json").write_text('{"x": 1}')
    with pytest.raises(AutoPlacementError, match="bad.json.*no 'profiles'.*hint"):
        DeviceProfiles.load(tmp_path / "bad.json")


def test_fit_crossings_reproduces_the_measured_crossings():
    records = _measurements()["link_cpu_gpu"]
    link = fit_crossings(records)
    per = {r["bytes"]: (r["cross_chain_us"] - r["same_chain_us"]) / r["crossings"] for r in records}
    assert link.alpha == pytest.approx(min(per.values())) and 20 < link.alpha < 60
    for nbytes, us in per.items():  # 1 MiB costs ~140 µs: twice what an affine fit says
        assert link.time(nbytes) == pytest.approx(us), nbytes
    # linear between measured sizes, the last segment's slope above them
    step = (per[16 << 20] - per[1 << 20]) / (15 << 20)
    assert link.time(3 << 19) == pytest.approx(per[1 << 20] + step * (1 << 19))
    slope = (per[64 << 20] - per[16 << 20]) / (48 << 20)
    assert link.time(128 << 20) == pytest.approx(per[64 << 20] + slope * (64 << 20))
    assert np.allclose(link.time(np.array([4.0, 64 << 20])), [per[4], per[64 << 20]])
    again = {**records[-1], "cross_chain_us": records[-1]["same_chain_us"] + 2e4}
    twice = fit_crossings([*records, again])  # a size measured twice counts at its mean
    assert twice.time(64 << 20) == pytest.approx((per[64 << 20] + 2e3) / 2)
    with pytest.raises(AutoPlacementError, match="crossings.*hint"):
        fit_crossings([{"bytes": 4}, {"bytes": 8}])


def test_a_measured_link_prices_transfers_in_microseconds():
    link = fit_crossings(_measurements()["link_cpu_gpu"])
    cost = CostModel.from_profiles(DeviceProfiles({CPU: {"a": {"us": 1.0}}}), link)
    units = cost.transfer_units(np.array([4.0, 1 << 20]))
    assert np.allclose(units, [link.time(4) - link.alpha, link.time(1 << 20) - link.alpha])
    alpha, beta = cost.links([CPU, "/device:CPU:1", GPU])
    assert alpha[0, 2] == alpha[2, 1] == link.alpha and beta[0, 2] == beta[2, 0] == 1.0
    assert alpha[0, 1] == beta[0, 1] == 0.0  # logical CPUs share memory
    mixed = CostModel(link=link, peer_link=PCIE)
    with pytest.raises(AutoPlacementError, match="measured points.*hint"):
        mixed.links([CPU, GPU])


def _model_problem(name: str):
    data = _measurements()
    graph, fetch, _, _ = MODELS[name]()
    cost = CostModel.from_profiles(
        DeviceProfiles(data["models"][name]["profiles"]), fit_crossings(data["link_cpu_gpu"])
    )
    return graph, fetch, cost


def test_problem_takes_per_device_times_and_marks_host_only_ops():
    graph, fetch, cost = _model_problem("two_tower_mlp")
    problem, ops = problem_from_graph(fetch, [CPU, GPU], cost=cost, graph=graph)
    data = _measurements()["models"]["two_tower_mlp"]["profiles"]
    i = problem.names.index("MatMul")
    assert problem.compute[i].tolist() == [data[CPU]["MatMul"]["us"], data[GPU]["MatMul"]["us"]]
    x = problem.names.index("x")
    assert np.isinf(problem.compute[x, 1])  # fed on the host
    assert problem.devices[0].slots == 4 and problem.devices[1].slots == 4
    assert {dev.channel for dev in problem.devices} == {"host"}


def test_effective_assignment_follows_soft_placement_and_colocation():
    graph, fetch, cost = _model_problem("two_tower_mlp")
    problem, ops = problem_from_graph(fetch, [CPU, GPU], cost=cost, graph=graph)
    want = [GPU] * problem.n
    want[problem.names.index("tower0_l0_w")] = CPU  # its /read asks for the GPU
    a = effective_assignment(problem, want)
    assert a[problem.names.index("x")] == 0  # no GPU kernel: falls back to the CPU
    assert a[problem.names.index("tower0_l0_w")] == 1  # disagreeing group: accelerator first
    assert a[problem.names.index("MatMul")] == 1


@pytest.mark.parametrize("name", list(MODELS))
def test_autoplace_never_predicts_worse_than_the_best_single_device(name):
    graph, fetch, cost = _model_problem(name)
    placed = autoplace(fetch, [CPU, GPU], cost=cost, graph=graph, budget=0.3)
    assert set(placed.single_device) == {CPU, GPU}
    assert placed.predicted_step_time <= min(placed.single_device.values()) * (1 + 1e-9)
    assert placed.predicted_step_time == pytest.approx(
        simulate(placed.problem, placed.schedule.assignment).makespan
    )


def _small_graph():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [64, 64], name="x")
        w = tf.Variable(tf.ones([64, 64]), name="w")
        h = tf.nn.relu(tf.matmul(x, w), name="h")
        y = tf.reduce_sum(tf.matmul(h, w) + h, name="y")
    return graph, x, y


def test_profile_devices_profiles_each_device_and_restores_the_graph(tmp_path):
    graph, x, y = _small_graph()
    before = [op.device for op in graph.get_operations()]
    feed = {x: np.ones([64, 64], np.float32)}
    prof = profile_devices(graph, y, devices=["/cpu:0", "/cpu:1"], feed=feed, repeat=2)
    assert [op.device for op in graph.get_operations()] == before
    assert set(prof.profiles) == {"/device:CPU:0", "/device:CPU:1"}
    for dev, ops in prof.profiles.items():
        assert ops["MatMul"]["device"] == dev and ops["MatMul"]["us"] > 0
        assert ops["MatMul"]["bytes"] == 64 * 64 * 4
    again = DeviceProfiles.load(prof.save(tmp_path / "p.json"))
    assert again.time("MatMul", "/cpu:1") == prof.profiles["/device:CPU:1"]["MatMul"]["us"]
    with pytest.raises(AutoPlacementError, match="non-empty list"):
        profile_devices(graph, y, devices="/cpu:0")


def test_with_a_session_every_single_device_is_measured_by_default_even_when_predicted_best():
    # whatever the model predicts (wrong under load, it would otherwise go unchecked)
    graph, x, y = _small_graph()
    feed = {x: np.ones([64, 64], np.float32)}
    with dp.Session(graph=graph, cpus=2) as sess:
        placed = autoplace(y, ["/cpu:0", "/cpu:1"], session=sess, feed=feed, runs=3)
        alone = autoplace(y, ["/cpu:0"], session=sess, feed=feed, runs=3)
    assert placed.verdict is not None
    assert {"single:/device:CPU:0", "single:/device:CPU:1"} <= set(placed.measured)
    assert alone.verdict is None and not alone.measured  # one device: nothing to decide


def test_verify_measures_the_candidates_and_returns_the_fastest():
    graph, x, y = _small_graph()
    feed = {x: np.ones([64, 64], np.float32)}
    before = [op.device for op in graph.get_operations()]
    with dp.Session(graph=graph, cpus=2) as sess:
        placed = autoplace(y, ["/cpu:0", "/cpu:1"], session=sess, feed=feed, verify=2, runs=5)
    singles = {"single:/device:CPU:0", "single:/device:CPU:1"}
    assert singles < set(placed.measured) == set(placed.predicted)  # and the model's candidates
    assert set(placed.measured_rounds) == set(placed.measured)
    assert all(
        VERIFY_ROUNDS <= len(t) <= MAX_VERIFY_ROUNDS and min(t) > 0
        for t in placed.measured_rounds.values()
    )
    # the predicted-best single device, unless a candidate beat it significantly
    incumbent = "single:" + min(placed.single_device, key=placed.single_device.__getitem__)
    assert placed.strategy == decide(placed.measured_rounds, incumbent)[0]
    assert placed.verdict is not None and placed.verdict.incumbent == incumbent
    assert placed.notes[-2] == placed.verdict.reason
    assert (f"kept {incumbent}" if placed.strategy == incumbent else "chose") in placed.notes[-2]
    assert placed.verdict.reason in placed.explain() and placed.explain() in str(placed)
    if placed.strategy.startswith("single:"):
        assert set(placed.devices.values()) == {placed.strategy.removeprefix("single:")}
    assert [op.device for op in graph.get_operations()] == before
    with pytest.raises(AutoPlacementError, match="verify.*session=sess"):
        autoplace(y, ["/cpu:0"], graph=graph, verify=2)


@requires_gpu
def test_profiles_and_verify_on_a_real_gpu():
    graph, x, y = _small_graph()
    feed = {x: np.ones([64, 64], np.float32)}
    devices = [CPU, GPUS[0]]
    prof = profile_devices(graph, y, devices=devices, feed=feed, repeat=3)
    assert prof.kinds() == ["CPU", "GPU"]
    assert prof.profiles[GPUS[0]]["MatMul"]["device"] == GPUS[0]
    assert prof.runs_on("_arg_x_0_0", GPUS[0]) is False  # feeds arrive on the host
    cost = CostModel.from_profiles(prof)
    with dp.Session(graph=graph, soft=True) as sess:
        placed = autoplace(y, devices, cost=cost, session=sess, feed=feed, verify=2, runs=10)
    assert {f"single:{CPU}", f"single:{GPUS[0]}"} <= set(placed.measured)
    incumbent = "single:" + min(placed.single_device, key=placed.single_device.__getitem__)
    assert placed.strategy == decide(placed.measured_rounds, incumbent)[0]


@pytest.mark.slow
def test_fidelity_script_reports_the_summary_on_the_shared_data():
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks/placement/fidelity_gpu.py"), str(DATA), "--json"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert set(result["spearman"]) == set(MODELS) == set(result["autoplace_vs_best_single"])
    assert result["median_abs_error"] <= 0.2 and result["max_abs_error"] <= 0.5
    assert all(rho >= 0.85 for rho in result["spearman"].values()), result["spearman"]
    assert all(r <= 1 + 1e-9 for r in result["autoplace_vs_best_single"].values())


@pytest.mark.slow
def test_verify_gpu_script_runs_without_a_gpu_too():
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks/placement/verify_gpu.py"),
            "--repeat",
            "2",
            "--runs",
            "3",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    rows = [line for line in out.stdout.splitlines() if line.startswith("| ") and "µs" in line]
    assert [row.split(" | ")[0].strip("| ") for row in rows] == list(MODELS)
    assert "link alpha" in out.stdout


def test_profiling_a_device_the_machine_lacks_is_an_error_or_with_soft_a_labelled_warning():
    graph, x, y = _small_graph()
    feed = {x: np.ones([64, 64], np.float32)}
    missing = f"/device:GPU:{len(GPUS)}"  # one more GPU than this machine has
    with pytest.raises(AutoPlacementError, match=f"device '{missing}' does not exist.*soft=True"):
        profile_devices(graph, y, devices=["/cpu:0", missing], feed=feed, repeat=2)
    with pytest.warns(dp.DevplaceWarning, match=f"'{missing}' does not exist") as caught:
        prof = profile_devices(graph, y, ["/cpu:0", missing], feed=feed, repeat=2, soft=True)
    assert caught[0].filename == __file__  # the warning points at the caller
    # labelled with where each op ran: soft placement's fallback, GPU:0 for the ops it can run
    # where there is one, else the CPU; never the missing device
    ran_on = {e["device"] for e in prof.profiles[missing].values()}
    assert ran_on and ran_on <= {"/device:CPU:0", *GPUS[:1]}
    # MatMul moved to GPU:0 where there is one (a GPU runs it), else to the CPU (it does not)
    assert prof.runs_on("MatMul", missing) is bool(GPUS)
