"""Dead and hung peers on a real cluster: clear errors naming task and address, in bounded time."""

import socket
import time

import pytest

import devplace as dp
from devplace.adapter.session import REFUSED_WAIT_S
from devplace.cluster import (
    LocalCluster,
    PeerAbortedError,
    PeerDeadlineError,
    PeerUnavailableError,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

TIMEOUT = 4.0


@pytest.fixture(scope="module")
def cluster():
    """One ps task and two workers; stopped by PID at the end, also when a test fails."""
    with LocalCluster(ps=1, workers=2, start_timeout=120) as running:
        yield running


@pytest.fixture
def model(cluster):
    """A variable on the ps, read on worker 1, and a session on worker 0 (the master)."""
    with dp.device("/job:ps/task:0/cpu:0"):
        v = dp.Variable(3.0, name="v")
    with dp.device("/job:worker/task:1/cpu:0"):
        y = v * 2.0
    sess = cluster.session(timeout=TIMEOUT)
    dp.init(sess)
    # After a test restarted a task, its peers' gRPC channels to it may still be in their
    # reconnect backoff for a few seconds ("Connection refused" though it listens again)
    deadline = time.monotonic() + 30
    while True:
        try:
            assert dp.run(sess, y) == 6.0
            break
        except PeerUnavailableError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)
    yield sess, y
    sess.close()


def _failing_run(sess, fetch, error):
    start = time.monotonic()
    with pytest.raises(error) as caught:
        sess.run(fetch)
    return caught.value, time.monotonic() - start


def test_plain_remote_sessions_get_a_finite_timeout(cluster):
    with dp.Session(target=cluster.target()) as sess:
        assert sess.config.operation_timeout_in_ms == dp.DEFAULT_REMOTE_TIMEOUT * 1000
    with cluster.session() as sess:  # TF's deadline, then up to 1 s to probe the tasks
        assert sess.config.operation_timeout_in_ms == (dp.DEFAULT_REMOTE_TIMEOUT - 1) * 1000
    with cluster.session(timeout=2.5) as sess:
        assert sess.config.operation_timeout_in_ms == 2250


def test_dead_ps_is_named_with_its_address(cluster, model):
    sess, y = model
    address = cluster.address("ps", 0)
    cluster.kill("ps", 0)
    try:
        err, took = _failing_run(sess, y, PeerUnavailableError)
    finally:
        cluster.restart("ps", 0)
    assert isinstance(err, dp.tf.errors.UnavailableError)
    assert took < TIMEOUT
    assert f"task /job:ps/task:0 at {address} is gone" in err.message
    assert "Hint:" in err.message and "restart" in err.message
    assert err.tasks == ["/job:ps/task:0"]
    # The ps is back, empty: the old session's state there is gone, and it says so.
    restarted, _ = _failing_run(sess, y, PeerAbortedError)
    assert isinstance(restarted, dp.tf.errors.AbortedError)
    assert "restarted" in restarted.message and "Checkpointer.reconnect" in restarted.message


@pytest.mark.parametrize(("job", "task"), [("ps", 0), ("worker", 0)], ids=["ps", "master"])
def test_hung_peer_gives_deadline_exceeded_within_the_timeout(cluster, model, job, task):
    sess, y = model
    address = cluster.address(job, task)
    cluster.pause(job, task)
    try:
        err, took = _failing_run(sess, y, PeerDeadlineError)
    finally:
        cluster.resume(job, task)
    assert isinstance(err, dp.tf.errors.DeadlineExceededError)
    assert took < TIMEOUT + 1.0  # TF's deadline + the probe = the timeout (+ scheduling)
    assert f"task /job:{job}/task:{task} at {address} is silent" in err.message
    assert "kill -CONT" in err.message
    assert err.tasks == [f"/job:{job}/task:{task}"]
    assert dp.run(sess, y) == 6.0  # resumed: the same session works again


def test_dead_master_is_named_within_the_timeout(cluster):
    with dp.device("/job:worker/task:0/cpu:0"):
        y = dp.constant(2.0) * 5.0
    sess = cluster.session(timeout=TIMEOUT)
    try:
        assert dp.run(sess, y) == 10.0
        address = cluster.address("worker", 0)
        cluster.kill("worker", 0)
        try:
            start = time.monotonic()
            with pytest.raises((PeerUnavailableError, PeerDeadlineError)) as caught:
                sess.run(y)
            took = time.monotonic() - start
        finally:
            cluster.restart("worker", 0)
    finally:
        sess.close()
    assert took < TIMEOUT  # TF retries the master until its deadline, a tenth before the timeout
    assert f"task /job:worker/task:0 at {address} is gone" in caught.value.message
    assert caught.value.tasks == ["/job:worker/task:0"]


def test_slow_step_is_not_blamed_on_a_peer(cluster):
    with dp.device("/job:worker/task:1/cpu:0"):
        q = dp.tf.FIFOQueue(1, dp.tf.float32)
        y = q.dequeue()  # never fed: blocks until the deadline
    with cluster.session(timeout=1.0) as sess:
        err, took = _failing_run(sess, y, PeerDeadlineError)
    assert took < 1.0 + 1.0
    assert "yet every task answers" in err.message
    assert err.tasks == []


def test_a_master_refusing_connections_is_named_within_seconds():
    # TF retries a refusing master until its deadline (60 s by default); devplace asks first.
    with socket.create_server(("127.0.0.1", 0)) as gone:
        port = gone.getsockname()[1]
    sess = dp.Session(target=f"grpc://127.0.0.1:{port}")
    assert sess.config.operation_timeout_in_ms == dp.DEFAULT_REMOTE_TIMEOUT * 1000
    err, took = _failing_run(sess, dp.constant(1.0), PeerDeadlineError)
    assert took < REFUSED_WAIT_S + 2
    assert f"the task at 127.0.0.1:{port} is gone (connection failed: Connection refused)" in (
        err.message
    )
    assert "TensorFlow said" not in err.message  # TF said nothing: it was still retrying


def test_a_master_that_accepts_and_never_answers_keeps_the_timeout():
    with socket.create_server(("127.0.0.1", 0)) as silent:  # the kernel accepts; nobody answers
        port = silent.getsockname()[1]
        sess = dp.Session(target=f"grpc://127.0.0.1:{port}", timeout=TIMEOUT)
        err, took = _failing_run(sess, dp.constant(1.0), PeerDeadlineError)
    assert TIMEOUT <= took < TIMEOUT + 3
    assert (
        f"no answer within the timeout of {TIMEOUT:g} s: the task at 127.0.0.1:{port} is silent"
        in (err.message)
    )
