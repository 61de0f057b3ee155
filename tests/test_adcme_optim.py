"""ADCME's `ScipyOptimizerInterface` (what `BFGS!` drives) from Python: the minimum it finds, and
scipy's BLAS kept to one thread while it runs (and given back after)."""

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

import devplace as dp
from devplace.bridge.adcme.optim import ScipyOptimizerInterface

tf = dp.tf


def blas_threads() -> list[int]:
    return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]


def test_lbfgsb_finds_the_least_squares_solution_with_blas_in_one_thread():
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=(30, 5)), rng.normal(size=30)
    graph = tf.Graph()
    with graph.as_default():
        x = dp.Variable(tf.zeros([5], tf.float64), name="x")
        loss = tf.reduce_sum((tf.linalg.matvec(tf.constant(a), x) - b) ** 2)
        sess = dp.Session(graph=graph)
        dp.init(sess)
        during: list[list[int]] = []
        opt = ScipyOptimizerInterface(loss, options={"maxiter": 100, "ftol": 1e-14, "gtol": 1e-12})
        with threadpool_limits(limits=2, user_api="blas"):  # two threads, whatever the machine
            before = blas_threads()
            opt.minimize(sess, loss_callback=lambda *_: during.append(blas_threads()))
            after = blas_threads()
        solved = sess.run(x)
    assert before == [2] * len(before) and before and during
    assert all(threads == [1] * len(before) for threads in during)
    assert after == before
    np.testing.assert_allclose(solved, np.linalg.lstsq(a, b, rcond=None)[0], atol=1e-6)
