"""`autoplace` on real TF graphs: problem building, apply, device functions, errors."""

from __future__ import annotations

import numpy as np
import pytest

import devplace as dp
from devplace.autoplacer import (
    AutoPlacement,
    AutoPlacementError,
    CostModel,
    InfeasibleError,
    autoplace,
)
from devplace.autoplacer.tf_graph import problem_from_graph

tf = dp.tf
CPUS = ["/cpu:0", "/cpu:1"]


def build():
    """Two towers over one input; the second tower's weight colocated with its matmul."""
    x = tf.placeholder(tf.float32, [8, 16], name="x")
    w1 = tf.Variable(tf.ones([16, 16]), name="w1")
    w2 = tf.Variable(tf.ones([16, 16]), name="w2")
    a = tf.nn.relu(tf.matmul(x, w1), name="a")
    with tf.colocate_with(w2.op):
        b = tf.matmul(x, w2, name="b")
    with dp.device("/cpu:1"):
        c = tf.add(a, b, name="c")
    y = tf.reduce_sum(c, name="y")
    return x, y


def test_placement_covers_the_closure_and_keeps_constraints():
    x, y = build()
    p = autoplace(y, devices=CPUS)
    assert isinstance(p, AutoPlacement)
    closure = {op.name for op in tf.get_default_graph().get_operations()} - {"init"}
    assert "x" in p.devices and "w1" in p.devices and set(p.devices) <= closure
    assert p["b"] == p["w2"]  # colocation
    assert p["c"] == "/device:CPU:1"  # user pin kept
    assert p.predicted_step_time > 0 and p.asked == "auto"
    assert p.strategy.startswith(("search (from ", "exhaustive", "single:"))  # what auto chose


def test_apply_then_run_places_ops_where_predicted():
    x, y = build()
    p = autoplace(y, devices=CPUS, strategy="round_robin")
    graph = tf.get_default_graph()
    p.apply(graph)
    init = tf.global_variables_initializer()
    with dp.Session(cpus=2, optimize=False) as sess:
        sess.run(init)
        report = dp.placement(sess, y, feed={x: np.ones([8, 16], np.float32)})
    for name in ("w1", "a", "b", "c", "y"):
        assert report.actual(name) == p[name], name
    assert len({p[n] for n in ("w1", "a", "b", "y")}) == 2  # round robin used both devices


def test_device_function_rebuilds_the_same_placement():
    _, y = build()
    p = autoplace(y, devices=CPUS, strategy="round_robin")
    with tf.Graph().as_default() as g2:
        with dp.device(p.device_function()):
            build()
        for op in g2.get_operations():
            if op.name in p.devices and op.name != "c":
                assert dp.canonical_device(op.device) == p[op.name], op.name


def test_profile_times_become_compute_costs():
    x, y = build()
    init = tf.global_variables_initializer()
    with dp.Session(cpus=2, optimize=False) as sess:
        sess.run(init)
        prof = dp.run_profile(sess, y, feed={x: np.ones([8, 16], np.float32)}, repeat=3)
    cost = CostModel(speeds={"/device:CPU:1": 2.0})
    problem, ops = problem_from_graph(y, CPUS, cost=cost, profile=prof)
    i = [op.name for op in ops].index("a")
    assert problem.compute[i, 0] == prof.op_stats["a"].duration_us
    assert problem.compute[i, 1] == prof.op_stats["a"].duration_us / 2
    j = [op.name for op in ops].index("w1")
    assert problem.is_param[j] and problem.memory[j] == 16 * 16 * 4
    p = autoplace(y, devices=CPUS, cost=cost, profile=prof)
    assert p.predicted_step_time > 0


def test_memory_caps_move_variables():
    _, y = build()
    p = autoplace(y, devices=CPUS, memory={"/cpu:0": 1500}, strategy="search", budget=0.2)
    assert sum(p[w] == "/device:CPU:0" for w in ("w1", "w2")) <= 1  # 1,024 bytes each
    assert p.schedule.feasible


def test_bad_inputs_are_named():
    _, y = build()
    with pytest.raises(AutoPlacementError, match="non-empty list.*hint"):
        autoplace(y, devices=[])
    with pytest.raises(AutoPlacementError, match="/gpu:x"):
        autoplace(y, devices=["/cpu:0", "/gpu:x"])
    with pytest.raises(AutoPlacementError, match="'c'.*pinned.*respect_pins"):
        autoplace(y, devices=["/cpu:0"])
    with pytest.raises(AutoPlacementError, match="unknown placement strategy 'best'"):
        autoplace(y, devices=CPUS, strategy="best")
    with pytest.raises(AutoPlacementError, match="fetch"):
        autoplace(42, devices=CPUS)
    with pytest.raises(AutoPlacementError, match="unknown devices"):
        autoplace(y, devices=CPUS, memory={"/gpu:3": 1})
    p = autoplace(y, devices=["/cpu:0"], respect_pins=False)
    assert set(p.devices.values()) == {"/device:CPU:0"}


def test_op_without_a_kernel_on_any_device_is_named():
    # MakeUnique is registered with no kernel at all: no device may run it.
    x = tf.placeholder(tf.float32, [4, 4], name="x")
    graph = tf.get_default_graph()
    unique = graph.create_op("MakeUnique", [x], [tf.float32], name="unique").outputs[0]
    y = tf.reduce_sum(unique, name="y")
    with pytest.raises(InfeasibleError, match="'unique'.*none of the devices.*hint"):
        problem_from_graph(y, CPUS)
    with pytest.raises(InfeasibleError, match="'unique'"):
        autoplace(y, devices=CPUS)


def test_autoplace_takes_the_fetch_forms_dp_placement_takes():
    x, y = build()
    want = autoplace(y, devices=CPUS, strategy="round_robin").devices
    for fetches in ({"y": y}, [y], (y,), {"out": [y]}, y.op, "y", "y:0"):
        assert autoplace(fetches, devices=CPUS, strategy="round_robin").devices == want, fetches
    with dp.Session(cpus=2, optimize=False) as sess:
        dp.init(sess)
        report = dp.placement(sess, {"y": y}, feed={x: np.ones([8, 16], np.float32)})
    assert report.actual("y")  # the same dict form runs in dp.placement
    with pytest.raises(AutoPlacementError, match=r"fetch 3.*as dp.placement takes"):
        autoplace({"y": 3}, devices=CPUS)


def _three_branches():
    """Three relu(matmul) branches over one input, summed (the graph recorded in BEFORE)."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [64, 128], name="x")
        branches = []
        for t in range(3):
            w = tf.Variable(tf.ones([128, 128]), name=f"w{t}")
            branches.append(tf.nn.relu(tf.matmul(x, w), name=f"r{t}"))
        y = tf.reduce_sum(tf.add_n(branches), name="y")
    return graph, y


#: Predicted step times (µs, static estimates, two CPUs) recorded before `autoplace` was split
#: into parts and the placers re-registered (commit 1809db5).
BEFORE = {
    "exhaustive": 446.09159999999997,
    "heft": 453.6452,
    "round_robin": 454.64599999999996,
    "m_etf": 450.36839999999995,
    "auto": 446.09159999999997,
}


@pytest.mark.parametrize("strategy", sorted(BEFORE))
def test_autoplace_predicts_what_it_predicted_before(strategy):
    graph, y = _three_branches()
    p = autoplace(y, devices=CPUS, strategy=strategy, graph=graph, budget=3.0)
    assert p.predicted_step_time == pytest.approx(BEFORE[strategy], rel=1e-9)
    assert p.single_device == pytest.approx({"/device:CPU:0": 700.8524, "/device:CPU:1": 700.8524})
