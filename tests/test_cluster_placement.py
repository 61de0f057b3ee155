"""Device functions over a real cluster: values computed on TF servers, devices from RunMetadata."""

import os

import numpy as np
import pytest
from conftest import DEFAULT_DEVICE

import devplace as dp
from devplace.cluster import LocalCluster, devices, netns

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

PS0 = "/job:ps/replica:0/task:0/device:CPU:0"
PS1 = "/job:ps/replica:0/task:1/device:CPU:0"
W1_CPU0 = "/job:worker/replica:0/task:1/device:CPU:0"
W1_CPU1 = "/job:worker/replica:0/task:1/device:CPU:1"
# Where an op with no device type runs on a task: the servers share this machine's devices, so
# its GPU:0 where there is a GPU, else its CPU:0.
W1_DEFAULT = "/job:worker/replica:0/task:1" + DEFAULT_DEVICE
PS0_DEFAULT, PS1_DEFAULT = (f"/job:ps/replica:0/task:{i}" + DEFAULT_DEVICE for i in (0, 1))


@pytest.fixture(scope="module")
def cluster():
    """Two ps tasks and two workers, each with two CPU devices; stopped by PID at the end."""
    with LocalCluster(ps=2, workers=2, cpus=2, start_timeout=120) as running:
        yield running


@pytest.fixture
def sess(cluster):
    session = cluster.session(timeout=30, optimize=False)
    yield session
    session.close()


def test_servers_are_real_and_isolated_when_the_os_allows(cluster):
    pids = cluster.pids
    assert set(pids) >= {"ps/0", "ps/1", "worker/0", "worker/1"}
    assert all(a.startswith("127.0.0.1:") for addrs in cluster.spec.values() for a in addrs)
    assert cluster.start_seconds["total"] < 120
    ours = os.readlink("/proc/self/ns/net")
    for role in ("ps/0", "ps/1", "worker/0", "worker/1"):
        theirs = os.readlink(f"/proc/{pids[role]}/ns/net")
        if netns.supported()[0]:
            assert cluster.isolated
            assert theirs != ours
            assert theirs == os.readlink(f"/proc/{pids['forwarder']}/ns/net")
            interfaces = [
                line.split(":")[0].strip()
                for line in open(f"/proc/{pids[role]}/net/dev").read().splitlines()[2:]
            ]
            assert interfaces == ["lo"]
        else:
            assert not cluster.isolated


def test_session_sees_every_task_device(sess):
    found = set(sess.devices())
    for job, task, cpu in [("ps", 0, 0), ("ps", 1, 1), ("worker", 0, 0), ("worker", 1, 1)]:
        assert f"/job:{job}/replica:0/task:{task}/device:CPU:{cpu}" in found


def test_assign_to_device_with_a_ps_job(sess):
    fn = dp.assign_to_device("/job:worker/task:1/cpu:1", ps_device="/job:ps/task:0/cpu:0")
    with dp.device(fn):
        w = dp.Variable(np.arange(6.0).reshape(2, 3), name="w")
        x = dp.constant(np.ones((3, 1)), name="x")
        y = dp.matmul(w, x, name="y")
    dp.init(sess)
    np.testing.assert_allclose(dp.run(sess, y), [[3.0], [12.0]])
    report = dp.placement(sess, y)
    assert report.actual("w") == PS0
    assert report.actual("y") == W1_CPU1
    assert report.actual("x") == W1_CPU1
    assert not report.moved
    crossing = [t for t in report.transfers if t.source == PS0 and t.destination == W1_CPU1]
    assert crossing and crossing[0].bytes == 6 * 8


def _trainable_sum(count):
    """`count` scalar variables 1, 2, ... and a gradient step pulling their sum towards 1."""
    vs = [dp.tf.Variable(float(i + 1), name=f"v{i}") for i in range(count)]
    total = dp.tf.add_n(vs, name="total")
    loss = dp.square(total - 1.0, name="loss")
    return vs, dp.tf.train.GradientDescentOptimizer(0.05).minimize(loss, name="train")


def test_round_robin_over_ps_tasks_matches_replica_device_setter(cluster, sess):
    """The same model placed by TF's replica_device_setter and by round_robin in a worker
    scope: every op runs on the same device (RunMetadata), and training gives the same values,
    on every machine: both leave the device type to TF (a ps task's GPU:0 where it has one)."""
    ps = devices(cluster.spec, "ps")
    assert ps == ["/job:ps/task:0", "/job:ps/task:1"]
    with dp.device("/job:worker/task:1"), dp.device(dp.round_robin(ps)):
        ours, train = _trainable_sum(4)
    dp.init(sess)
    report = dp.placement(sess, train)
    expected = [PS0_DEFAULT, PS1_DEFAULT, PS0_DEFAULT, PS1_DEFAULT]
    assert [report.actual(f"v{i}") for i in range(4)] == expected
    assert report.actual("total") == W1_DEFAULT

    setter = dp.tf.train.replica_device_setter(
        cluster=cluster.cluster_spec, worker_device="/job:worker/task:1"
    )
    graph = dp.tf.Graph()
    with graph.as_default(), dp.tf.device(setter):
        theirs, their_train = _trainable_sum(4)
        init = dp.tf.global_variables_initializer()
    assert [dp.parse_device(v.device).task for v in theirs] == [0, 1, 0, 1]
    with cluster.session(graph=graph, timeout=30, optimize=False) as their_sess:
        their_sess.run(init)
        their_report = dp.placement(their_sess, their_train)
        their_values = their_sess.run(theirs)
    ran = {op.name: op.actual for op in report.ops}
    assert len(ran) > 20  # the variables, their reads, the sum, the gradients, the updates
    assert ran == {op.name: op.actual for op in their_report.ops}
    np.testing.assert_allclose(sess.run(ours), their_values)


def test_greedy_by_bytes_balances_ps_tasks(cluster, sess):
    fn = dp.greedy_by_bytes(devices(cluster.spec, "ps"))
    sizes = [100, 10, 10, 50, 40, 10]
    with dp.device(fn):
        vs = [dp.Variable(np.full(n, 1.0, np.float32), name=f"g{i}") for i, n in enumerate(sizes)]
    with dp.device("/job:worker/task:0/cpu:0"):
        total = dp.tf.add_n([dp.reduce_sum(v) for v in vs], name="total")
    dp.init(sess)
    assert dp.run(sess, total) == sum(sizes)
    report = dp.placement(sess, total)
    actual = [report.actual(f"g{i}") for i in range(len(sizes))]
    # float32 bytes: 400 -> ps0; 40, 40, 200, 160 -> ps1 (it stays lighter until 440 > 400);
    # the last 40 -> ps0 again.
    assert actual == [PS0_DEFAULT, PS1_DEFAULT, PS1_DEFAULT, PS1_DEFAULT, PS1_DEFAULT, PS0_DEFAULT]
    assert fn.load == {"/job:ps/task:0": 440, "/job:ps/task:1": 440}
