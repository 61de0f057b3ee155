"""Placement across servers: tasks profiled, the link between them measured and fitted, the
server model (a pool per task, the master's work per task), on a real LocalCluster."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import devplace as dp
from devplace.autoplacer import (
    AutoPlacementError,
    CostModel,
    DeviceProfiles,
    Link,
    Problem,
    ProblemDevice,
    autoplace,
    profile_devices,
    simulate,
)
from devplace.autoplacer.cost import crossing_costs, task_pair
from devplace.autoplacer.measure import (
    _busy_pair,
    busy_crossing_records,
    master_task,
    measure_crossings,
    measure_link,
    measure_servers,
    same_host,
    task_links,
)
from devplace.autoplacer.profiles import pool_equal_tasks
from devplace.autoplacer.tf_graph import problem_from_graph

tf = dp.tf
T0, T1 = "/job:worker/task:0", "/job:worker/task:1"
DEVICES = [f"{T0}/device:CPU:0", f"{T1}/device:CPU:0"]


@pytest.fixture(scope="module")
def cluster():
    with dp.LocalCluster(ps=0, workers=2) as c:
        yield c


def _graph():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [8, 16], name="x")
        w = tf.Variable(tf.ones([16, 16]), name="w")
        y = tf.reduce_sum(tf.nn.relu(tf.matmul(x, w, name="mm")), name="y")
    return graph, x, y


@pytest.fixture
def session(cluster):
    graph, x, y = _graph()
    with cluster.session(graph=graph, soft=True, optimize=False) as sess:
        yield sess, {x: np.ones([8, 16], np.float32)}, y


@pytest.mark.slow
def test_each_task_is_profiled_where_it_ran(session):
    sess, feed, y = session
    profiles = profile_devices(sess, y, DEVICES, feed, repeat=2)
    assert sorted(profiles.profiles) == DEVICES and profiles.shared == {}
    for dev in DEVICES:  # the op ran on the profiled task (from the run's metadata)
        ran = profiles.profiles[dev]["mm"]["device"]
        assert dev.split("/device")[0].replace("/job:worker", "") in ran.replace("/replica:0", "")
        assert profiles.time("mm", dev) == profiles.profiles[dev]["mm"]["us"]


@pytest.mark.slow
def test_tasks_of_equal_cores_share_one_profile_and_say_so(session):
    sess, feed, y = session
    profiles = profile_devices(sess, y, DEVICES, feed, repeat=2, cores={T0: 1, T1: 1})
    assert list(profiles.profiles) == [DEVICES[0]]
    assert profiles.shared == {DEVICES[1]: DEVICES[0]}
    assert profiles.time("mm", DEVICES[1]) == profiles.time("mm", DEVICES[0])
    unequal = profile_devices(sess, y, DEVICES, feed, repeat=2, cores={T0: 1, T1: 2})
    assert sorted(unequal.profiles) == DEVICES and unequal.shared == {}


@pytest.mark.slow
def test_each_profile_is_calibrated_against_its_measured_untraced_step(session):
    sess, feed, y = session
    profiles = profile_devices(sess, y, DEVICES, feed, repeat=2, cores={T0: 1, T1: 1})
    assert list(profiles.steps) == [DEVICES[0]]  # task 1 shares task 0's profile and step
    step = profiles.steps[DEVICES[0]]
    assert step > sum(e["us"] for e in profiles.profiles[DEVICES[0]].values()) * 0.1
    cost = CostModel.from_profiles(profiles, master=T0)
    problem, _ = problem_from_graph(y, DEVICES, cost, graph=sess.graph, respect_pins=False)
    assert set(problem.op_offsets) == set(DEVICES)
    assert problem.op_offsets[DEVICES[0]] == problem.op_offsets[DEVICES[1]]
    # everything on the profiled task is predicted to take what its untraced step took
    assert simulate(problem, [0] * problem.n).makespan == pytest.approx(step, abs=0.05)


@pytest.mark.slow
def test_autoplace_with_a_session_profiles_its_tasks_once_and_caches(session):
    sess, feed, y = session
    first = autoplace({"y": y}, DEVICES, session=sess, feed=feed, strategy="heft")
    assert first.notes[0].startswith("profiled " + DEVICES[0])
    assert "links between their tasks" in first.notes[0]
    assert first.notes[-1] == first.explain().splitlines()[0]  # why, in its first line
    problem = first.problem
    # a measured link, not free logical CPUs (a fit may put all of its cost in either term)
    assert problem.link_alpha[0, 1] > 0 or problem.link_beta[0, 1] > 0
    assert [d.host for d in problem.devices] == [T0, T1]
    again = autoplace([y], DEVICES, session=sess, feed=feed, strategy="heft")
    assert again.notes[0] == f"used the profiles of {', '.join(DEVICES)} cached for this graph"
    assert again.devices == first.devices


def _noisy_tasks(step1: float, noise: float) -> DeviceProfiles:
    """Profiles of two tasks whose op times differ by +-`noise`, task 1's single step `step1`."""
    ops = {f"op{i}": {"us": 100.0 + 10 * i, "type": "MatMul"} for i in range(6)}
    other = {
        k: {**e, "us": e["us"] * (1 + (noise if i % 2 else -noise))}
        for i, (k, e) in enumerate(ops.items())
    }
    other["soft"] = {"us": 5.0, "type": "PyFunc", "device": f"{T1}/device:CPU:0"}
    ops["soft"] = {"us": 9.0, "type": "PyFunc", "device": f"{T0}/device:CPU:0"}
    return DeviceProfiles(
        {DEVICES[0]: ops, DEVICES[1]: other}, steps={DEVICES[0]: 1000.0, DEVICES[1]: step1}
    )


def test_equal_tasks_pool_their_profiles_so_noise_cannot_pick_a_split():
    profiles = _noisy_tasks(1040.0, 0.15)
    pooled, notes = pool_equal_tasks(profiles, {T0: 1, T1: 1})
    a, b = (pooled.profiles[d] for d in DEVICES)
    for i in range(6):  # each op: the mean of both tasks' times, the same on both
        op = f"op{i}"
        mean = (
            profiles.profiles[DEVICES[0]][op]["us"] + profiles.profiles[DEVICES[1]][op]["us"]
        ) / 2
        assert a[op]["us"] == b[op]["us"] == pytest.approx(mean)
        assert a[op]["type"] == "MatMul"
    assert (a["soft"]["us"], b["soft"]["us"]) == (9.0, 5.0)  # ran elsewhere on each: kept
    assert pooled.steps == profiles.steps  # each task still calibrates with its own step
    assert len(notes) == 1 and "within 4%" in notes[0] and T1 in notes[0]
    # Unequal tasks keep their own: steps 30% apart, or another number of threads.
    for threads, step1 in (({T0: 1, T1: 1}, 1300.0), ({T0: 1, T1: 2}, 1040.0)):
        unequal = _noisy_tasks(step1, 0.15)
        kept, notes = pool_equal_tasks(unequal, threads)
        assert kept.profiles == unequal.profiles and notes == []


@pytest.mark.slow
def test_measure_link_fits_the_link_the_cost_model_uses_for_that_pair(session):
    sess, feed, y = session
    link = measure_link(sess, T0, DEVICES[1], sizes=(4, 65536), hops=2, runs=3)
    assert link.name == f"{T0}<->{T1}" and link.alpha >= 0 and link.beta >= 0
    assert link.alpha + link.beta * 65536 > 0
    assert same_host(sess, T0, T1) and master_task(sess) == T0
    measured = profile_devices(sess, y, DEVICES, feed, repeat=2)
    profiles = DeviceProfiles(measured.profiles)  # uncalibrated: the crossing alone differs
    cost = CostModel.from_profiles(profiles, task_links={task_pair(T0, T1): link}, master=T0)
    alpha, beta = cost.links(DEVICES)
    assert alpha[0, 1] == alpha[1, 0] == link.alpha and beta[0, 1] == link.beta
    problem, ops = problem_from_graph(y, DEVICES, cost, graph=sess.graph)
    x = [op.name for op in ops].index("x")  # fed on the master's task: crossing to task 1
    assert problem.compute[x, 1] == pytest.approx(problem.compute[x, 0] + link.time(8 * 16 * 4))


@pytest.mark.slow
def test_the_busy_pair_computes_both_chains_while_tensors_cross_both_ways(cluster):
    """The graph `measure_crossings` times: each task runs its own matmul chain, and each
    crossing tensor is made on one task and read on the other (RunMetadata), its value the
    numpy one."""
    graph, y = _busy_pair(T0, T1, nbytes=4096, crossings=3, layers=2, n=8)
    with dp.Session(target=cluster.target(), graph=graph, optimize=False) as sess:
        meta = tf.RunMetadata()
        options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
        got = sess.run(y, options=options, run_metadata=meta)
    h = np.full((8, 8), 1e-3, np.float32)
    for _ in range(2):
        h = np.tanh(h @ np.full((8, 8), 1e-3, np.float32))
    assert got == pytest.approx(2 * h.sum() + 2 * 3 * 1.0001, rel=1e-5)
    ran: dict[str, set[str]] = {}
    for dev in meta.step_stats.dev_stats:
        task = "task:1" if "task:1" in dev.device else "task:0"
        for node in dev.node_stats:
            ran.setdefault(node.node_name, set()).add(task)
    matmuls = [name for name in ran if name.startswith("MatMul")]
    assert len(matmuls) == 4 and {t for m in matmuls for t in ran[m]} == {"task:0", "task:1"}
    by_name = {op.name: op for op in graph.get_operations()}
    crossing = [
        op
        for op in graph.get_operations()
        if op.type == "StridedSlice" and op.inputs[0].op.device != op.device
    ]
    assert len(crossing) == 6  # three each way, each reading a tensor of the other task
    assert {T0 in op.device for op in crossing} == {True, False}
    assert all(by_name[op.inputs[0].op.name].outputs[0].shape == (1024,) for op in crossing)


@pytest.mark.slow
def test_measure_crossings_prices_a_crossing_by_the_growth_of_a_busy_step(session):
    """Records: the busy step with no crossing, and per size with `crossings` each way; the
    link is fitted to the growth per crossing. autoplace's links are measured this way."""
    sess, _, _ = session
    records = busy_crossing_records(sess, T0, T1, sizes=(4, 65536), crossings=2, runs=3, rounds=1)
    assert [r["bytes"] for r in records] == [4.0, 65536.0]
    assert all(r["crossings"] == 2 and r["same_chain_us"] > 0 for r in records)
    assert len({r["same_chain_us"] for r in records}) == 1  # one step without crossings
    link = measure_crossings(sess, T0, T1, sizes=(4, 65536), crossings=2, runs=3, rounds=1)
    assert link.name == f"crossings between busy {T0}<->{T1}"
    assert link.alpha >= 0 and link.beta >= 0
    found = task_links(sess, [T0, T1])
    assert found[task_pair(T0, T1)].name == link.name
    with pytest.raises(AutoPlacementError, match="two different tasks and crossings >= 1"):
        measure_crossings(sess, T0, T1, crossings=0)
    sizes, costs = crossing_costs(records)
    assert sizes == [4.0, 65536.0] and all(c >= 0 for c in costs)


def test_a_busy_step_grows_by_the_link_time_per_crossing_each_way():
    """What `measure_crossings` measures is what the model books: two one-thread tasks each
    busy with a 1000 µs op, k tensors crossing each way; every crossing's link time is work of
    the sender (half) and the receiver (half), so each task pays one link time per pair of
    crossings and the step grows by k link times (the link of the fit reproduces the
    measurement it came from)."""
    link = Link("busy", alpha=100.0, beta=1e-3)

    def busy_pair(k: int, nbytes: float) -> Problem:
        # ops: chain0, chain1, then k sources on each task, then k readers on the other
        n = 2 + 4 * k
        hosts = ["/job:w/task:0", "/job:w/task:1"]
        devices = [ProblemDevice(f"d{i}", "cpu", host=h) for i, h in enumerate(hosts)]
        compute = np.zeros((n, 2))
        compute[:2] = 1000.0
        edges = [(2 + i, 2 + 2 * k + i) for i in range(2 * k)]
        xfer = np.zeros(n)
        xfer[2 : 2 + 2 * k] = nbytes
        off = 1 - np.eye(2)
        return Problem(
            names=[f"op{i}" for i in range(n)],
            devices=devices,
            compute=compute,
            edges=edges,
            xfer=xfer,
            link_alpha=off * link.alpha,
            link_beta=off * link.beta,
            memory=np.zeros(n),
        )

    def step(k: int, nbytes: float) -> float:
        # chain0 and the sources to task 1 on task 0, chain1 and the other sources on task 1
        a = [0, 1, *([0] * k), *([1] * k), *([1] * k), *([0] * k)]
        return simulate(busy_pair(k, nbytes), a).makespan

    for nbytes in (4.0, 65536.0):
        for k in (1, 4):
            assert step(k, nbytes) - step(0, nbytes) == pytest.approx(k * link.time(nbytes))


@pytest.mark.slow
def test_measure_servers_gives_each_task_its_threads(session):
    sess, _, _ = session
    constants = measure_servers(sess, [T0, T1], runs=3, chains=2)
    assert set(constants.threads) == {T0, T1}
    assert all(1 <= n <= 2 for n in constants.threads.values())
    assert constants.task_step_us >= 0 and constants.base_us > 0
    # the master's own task's share of a step: at most the whole step of one tiny op there
    assert 0 <= constants.master_task_us <= constants.base_us
    # task 1's partition starts after task 0's first op, well within the probe's step
    assert 0 <= constants.remote_start_us < 50_000


@pytest.mark.slow
def test_measuring_needs_a_cluster_session_and_two_tasks(session):
    sess, _, _ = session
    with dp.Session(cpus=1) as local, pytest.raises(AutoPlacementError, match="grpc.*hint"):
        measure_link(local, T0, T1)
    with pytest.raises(AutoPlacementError, match="two different tasks"):
        measure_link(sess, T0, DEVICES[0])
    with pytest.raises(AutoPlacementError, match="names no task.*hint"):
        measure_link(sess, "/device:CPU:0", T1)


def test_each_pair_of_tasks_gets_its_own_link():
    near, far = Link("same host", 50.0, 1e-4), Link("other host", 400.0, 1e-3)
    devices = [f"/job:w/task:{i}/device:CPU:0" for i in range(3)]
    cost = CostModel(
        task_links={task_pair(devices[0], devices[1]): near},
        task_link=far,
    )
    alpha, beta = cost.links(devices)
    assert alpha[0, 1] == 50.0 and alpha[0, 2] == alpha[1, 2] == 400.0 and beta[2, 0] == 1e-3
    with pytest.raises(AutoPlacementError, match="measured points.*hint"):
        CostModel(task_link=Link("curve", 1.0, 0.0, ((4.0, 1.0), (8.0, 2.0)))).links(devices)


def _two_tasks(threads: int, step: float) -> Problem:
    """Four independent 10 µs ops that may run on two one-device tasks."""
    return Problem(
        names=[f"op{i}" for i in range(4)],
        devices=[
            ProblemDevice("a", "cpu", slots=4, pool="/job:w/task:0", host="/job:w/task:0"),
            ProblemDevice("b", "cpu", slots=4, pool="/job:w/task:1", host="/job:w/task:1"),
        ],
        compute=np.full((4, 2), 10.0),
        edges=[],
        xfer=np.zeros(4),
        link_alpha=np.zeros((2, 2)),
        link_beta=np.zeros((2, 2)),
        memory=np.zeros(4),
        pool_capacity={"/job:w/task:0": threads, "/job:w/task:1": threads},
        host_step_cost=step,
        step_cost=7.0,
        master_host="/job:w/task:0",
    )


def test_a_task_runs_as_many_ops_as_its_pool_and_each_task_costs_the_master():
    one = _two_tasks(threads=1, step=5.0)
    assert simulate(one, [0, 0, 0, 0]).makespan == 40 + 7  # one thread: one op at a time
    assert simulate(one, [0, 0, 1, 1]).makespan == 20 + 7 + 5  # a task besides the master
    two = _two_tasks(threads=2, step=5.0)
    assert simulate(two, [0, 0, 0, 0]).makespan == 20 + 7
    assert simulate(two, [1, 1, 1, 1]).makespan == 20 + 7 + 5  # the master's task unused
    # a step that runs nothing on the master's task saves that task's share of the step
    idle = replace(two, master_host_cost=3.0)
    assert simulate(idle, [1, 1, 1, 1]).makespan == 20 + 7 + 5 - 3
    assert simulate(idle, [0, 0, 1, 1]).makespan == 10 + 7 + 5


def test_transfers_between_tasks_do_not_queue_on_a_channel():
    def problem(hosts: list[str | None]) -> Problem:
        return Problem(
            names=["a", "b", "c"],
            devices=[
                ProblemDevice("d0", "cpu", slots=2, host=hosts[0]),
                ProblemDevice("d1", "cpu", slots=2, host=hosts[1]),
            ],
            compute=np.array([[1.0, 1.0], [1.0, 1.0], [0.0, 0.0]]),
            edges=[(0, 2), (1, 2)],
            xfer=np.zeros(3),
            link_alpha=np.array([[0.0, 10.0], [10.0, 0.0]]),
            link_beta=np.zeros((2, 2)),
            memory=np.zeros(3),
        )

    assert simulate(problem([None, None]), [0, 0, 1]).makespan == 21  # one channel, in turn
    # two gRPC requests at once: each end's half (5) on the two slots there, 1-6 and 6-11
    assert simulate(problem([T0, T1]), [0, 0, 1]).makespan == 11


def test_a_transfer_between_tasks_is_work_of_both_ends():
    """Half of a transfer's link time holds a slot of the sending task, then the other half a
    slot of the receiving one, each queued with the ops there (measured: each end of a gRPC
    transfer pays about half its time in CPU)."""
    problem = Problem(
        names=["send", "busy0", "busy1", "use", "later"],
        devices=[ProblemDevice("d0", "cpu", host=T0), ProblemDevice("d1", "cpu", host=T1)],
        compute=np.array([[1.0, 1.0], [3.0, 3.0], [6.0, 6.0], [1.0, 1.0], [2.0, 2.0]]),
        edges=[(0, 3)],
        xfer=np.array([100.0, 0.0, 0.0, 0.0, 0.0]),
        link_alpha=np.array([[0.0, 2.0], [2.0, 0.0]]),
        link_beta=np.array([[0.0, 0.04], [0.04, 0.0]]),  # "send" to d1: 2 + 4 = 6
        memory=np.zeros(5),
    )
    a = [0, 0, 1, 1, 1]
    s = simulate(problem, a)
    # d0: send 0-1, busy0 1-4 (ready since 0), the sender's half 4-7;
    # d1: busy1 0-6, later 6-8, the receiver's half 8-11, use 11-12
    assert s.start[1] == 1 and s.start[4] == 6 and s.start[3] == 11 and s.makespan == 12
    assert s.transfers == 1 and s.transfer_time == pytest.approx(6.0)
    # all on the receiver: its half (6) queued at 1, after later: 8-14, use 14-15
    assert simulate(replace(problem, host_send_share=0.0), a).makespan == 15
    # all on the sender: 4-10 after busy0; use 10-11 on d1, idle since later ended at 8
    assert simulate(replace(problem, host_send_share=1.0), a).makespan == 11
    with pytest.raises(AutoPlacementError, match=r"host_send_share.*\[0, 1\]"):
        replace(problem, host_send_share=1.5)


def _fed_at_home(slots: int, fed: bool = True, hosts: bool = True) -> Problem:
    """x (fed) on task 0 feeds a chain a1 (100 µs) -> a2 (100 µs) and an op b (300 µs) there,
    and r (50 µs) on task 1; links are free."""
    names = ["x", "a1", "a2", "b", "r"]
    compute = np.array([[0.0] * 2, [100.0] * 2, [100.0] * 2, [300.0] * 2, [50.0] * 2])
    on = ["/job:w/task:0", "/job:w/task:1"] if hosts else [None, None]
    return Problem(
        names=names,
        devices=[ProblemDevice(f"d{i}", "cpu", slots=slots, host=h) for i, h in enumerate(on)],
        compute=compute,
        edges=[(0, 1), (1, 2), (0, 3), (0, 4)],
        xfer=np.zeros(5),
        link_alpha=np.zeros((2, 2)),
        link_beta=np.zeros((2, 2)),
        memory=np.zeros(5),
        fed=np.array([fed, False, False, False, False]),
    )


def test_a_fed_tensor_leaves_its_task_behind_the_chains_it_starts_there():
    """Measured on one-core tasks: the feed's consumers and its send go to the task's pool
    together, and threads that take a consumer run its chain first. The model: the longest
    chain at home (b, 300 µs) starts at once; the rest (a1's chain, the send to task 1) wait
    for the chains' mean time (250 µs) and then for the core b holds until 300 µs."""
    a = [0, 0, 0, 0, 1]
    held = simulate(_fed_at_home(slots=1), a)
    assert held.start[3] == 0.0  # b, the longest chain
    assert held.start[4] == pytest.approx(300.0)  # r: the send left when b let go the core
    assert list(held.start[1:3]) == pytest.approx([300.0, 400.0])
    assert held.makespan == pytest.approx(500.0)
    # not fed, a task that runs both chains at once, or devices of no server: the send leaves
    # at once (r at 0)
    for problem in (
        _fed_at_home(slots=1, fed=False),
        _fed_at_home(slots=2),
        _fed_at_home(slots=1, hosts=False),
    ):
        assert simulate(problem, a).start[4] == 0.0
    # one chain at home (b) leaves a thread of the pool: the send leaves at once (a1 at 0)
    assert simulate(_fed_at_home(slots=1), [0, 1, 1, 0, 1]).start[1] == 0.0


def test_profiling_one_op_at_a_time_gives_each_op_its_own_time_and_leaves_the_graph():
    """Two branches of matmuls side by side: profiled one op at a time, no two ops of a traced
    step overlap (their times add up to no more than the span of the step's ops), and the
    graph (its control edges included) is as it was."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [384, 384], name="x")
        outs = []
        for _branch in range(2):
            h = x
            for _ in range(4):
                h = tf.tanh(tf.matmul(h, h))
            outs.append(tf.reduce_sum(h))
        with tf.control_dependencies([outs[0]]):
            y = tf.add_n(outs, name="y")
    before = graph.as_graph_def()
    feed = {x: np.full([384, 384], 1e-3, np.float32)}
    profiles = profile_devices(graph, y, ["/device:CPU:0"], feed, repeat=5, one_at_a_time=True)
    ops = profiles.profiles["/device:CPU:0"]
    assert sum("MatMul" in entry["type"] for entry in ops.values()) == 8  # oneDNN's in-process
    assert sum(entry["us"] for entry in ops.values()) <= 1.05 * profiles.spans["/device:CPU:0"]
    assert graph.as_graph_def() == before
