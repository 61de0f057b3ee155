"""Checkpoints with real processes: save, kill the ps, restart it, restore, continue training."""

import time

import numpy as np
import pytest

import devplace as dp
from devplace.cluster import Checkpointer, LocalCluster, PeerUnavailableError

pytestmark = pytest.mark.timeout(240)

TARGET = np.array([3.0, -1.0], np.float32)


def _model():
    """w on the ps, the gradient step on the worker; plain gradient descent, deterministic."""
    fn = dp.assign_to_device("/job:worker/task:0/cpu:0", ps_device="/job:ps/task:0/cpu:0")
    with dp.device(fn):
        w = dp.Variable(np.zeros(2, np.float32), name="w")
        loss = dp.reduce_sum(dp.square(w - TARGET))
        train = dp.tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    return w, train


def _steps(sess, w, train, first, last, ckpt):
    seen = {}
    for step in range(first, last + 1):
        sess.run(train)
        seen[step] = sess.run(w)
        ckpt.after_step(sess, step)
    return seen


@pytest.mark.slow
def test_training_survives_a_ps_restart(tmp_path):
    with LocalCluster(ps=1, workers=1, start_timeout=120) as cluster:
        w, train = _model()
        ckpt = Checkpointer(tmp_path / "ckpt", every=3)

        def session():
            return cluster.session(timeout=10)

        sess = session()
        assert ckpt.restore_or_init(sess) == 0
        before = _steps(sess, w, train, 1, 5, ckpt)
        assert ckpt.latest_step() == 3
        assert not np.allclose(before[5], before[3])

        cluster.kill("ps", 0)
        with pytest.raises(PeerUnavailableError, match="/job:ps/task:0"):
            sess.run(train)
        sess.close()
        cluster.restart("ps", 0)

        fresh = session()  # the restarted ps is empty: nothing to read before the restore
        with pytest.raises(dp.tf.errors.FailedPreconditionError):
            fresh.run(w)
        fresh.close()

        start = time.monotonic()
        sess, step = ckpt.reconnect(session, timeout=60)
        assert time.monotonic() - start < 60
        assert step == 3
        np.testing.assert_array_equal(sess.run(w), before[3])
        after = _steps(sess, w, train, step + 1, 6, ckpt)
        np.testing.assert_allclose(after[4], before[4], rtol=1e-6)
        np.testing.assert_allclose(after[5], before[5], rtol=1e-6)
        assert ckpt.latest_step() == 6

        path = ckpt.save(sess, 7)  # on demand
        assert path.endswith("model.ckpt-7") and ckpt.latest_step() == 7
        sess.close()


def test_checkpointer_rejects_bad_intervals(tmp_path):
    dp.Variable(1.0)
    with pytest.raises(ValueError, match="every must be a positive number of steps"):
        Checkpointer(tmp_path, every=0)
    assert Checkpointer(tmp_path).restore(dp.Session()) is None
