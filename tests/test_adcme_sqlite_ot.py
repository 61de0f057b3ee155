"""ADCME's SQLite databases and optimal transport in the host (devplace.bridge.adcme.sqlite,
devplace.bridge.adcme.ot): files checked with Python's own sqlite3, a database killed
mid-transaction, transport costs against a plain numpy Sinkhorn loop and scipy's linear
programs, gradients against finite differences, warping against a plain dynamic program."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.optimize
import scipy.spatial.distance
import scipy.stats

import devplace as dp
from devplace.bridge.adcme import ot
from devplace.bridge.adcme import sqlite as sq
from devplace.core.errors import ArgumentValueError

tf = dp.tf


def count(path: Path, table: str = "t") -> int:
    with sqlite3.connect(path) as conn:
        return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def test_rows_and_columns_written_are_what_sqlite3_reads(tmp_path: Path) -> None:
    path = tmp_path / "sim.db"
    db = sq.open_database(str(path), True)
    sq.execute(db, "CREATE TABLE t (name text primary key, dt real, h real)")
    sq.execute(db, "INSERT INTO t VALUES (?, ?, 0.01)", [[("a", 0.1), ("b", np.float64(0.3))]])
    sq.execute(db, "INSERT INTO t VALUES (?, ?, ?)", [["c", "d"], np.array([0.5, 0.9]), [1, 2]])
    sq.insert(db, "t", [{"name": "a", "dt": 7.0, "h": None}])
    with sqlite3.connect(path) as conn:
        assert sorted(conn.execute("SELECT * FROM t")) == [
            ("a", 7.0, None),
            ("b", 0.3, 0.01),
            ("c", 0.5, 1.0),
            ("d", 0.9, 2.0),
        ]
    assert sq.table_names(db) == ["t", "sqlite_autoindex_t_1"]
    assert sq.columns(db, "t") == ["name", "dt", "h"]
    rows, names, _ = sq.execute(db, "SELECT name, h FROM t WHERE dt > ?", one_row=(0.4,))
    assert sorted(rows) == [("a", None), ("c", 1.0), ("d", 2.0)] and names == ["name", "h"]
    sq.drop_table(db, "t")
    sq.close(db)
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0


def test_a_failing_row_of_many_leaves_nothing_and_the_error_names_the_statement(
    tmp_path: Path,
) -> None:
    path = tmp_path / "t.db"
    db = sq.open_database(str(path), True)
    sq.execute(db, "CREATE TABLE t (i integer primary key)")
    sql = "INSERT INTO t VALUES (?)"
    with pytest.raises(sq.SQLError) as caught:
        sq.execute(db, sql, [[(1,), (2,), (1,)]])
    assert "IntegrityError: UNIQUE constraint failed: t.i" in str(caught.value)
    assert repr(sql) in str(caught.value)
    assert isinstance(caught.value.__cause__, sqlite3.IntegrityError)
    assert count(path) == 0 and sq.table_names(db) == ["t"]
    # Without commit_after_execute, the failed statement alone is undone: earlier ones stay.
    db = sq.open_database(str(path), False)
    sq.execute(db, sql, [[(1,), (2,)]])
    with pytest.raises(sq.SQLError, match="no such table: u"):
        sq.execute(db, "INSERT INTO u VALUES (1)")
    with pytest.raises(sq.SQLError):
        sq.execute(db, sql, [[(3,), (2,)]])
    assert count(path) == 0  # nothing committed yet
    sq.commit(db)
    assert count(path) == 2
    sq.execute(db, sql, one_row=(5,))
    sq.close(db, keep=False)  # the do-block's close after an error: rolled back
    assert count(path) == 2


def test_bad_parameters_and_a_closed_memory_database_are_refused_by_name() -> None:
    db = sq.open_database(None, True)
    sq.execute(db, "CREATE TABLE t (a real, b real)")
    with pytest.raises(ArgumentValueError, match=r"lengths.*\[2, 3\]"):
        sq.execute(db, "INSERT INTO t VALUES (?, ?)", [[1.0, 2.0], [1.0, 2.0, 3.0]])
    with pytest.raises(sq.SQLError, match="supplied"):
        sq.execute(db, "INSERT INTO t VALUES (?, ?)", [[(1.0,)]])
    sq.close(db)
    with pytest.raises(sq.SQLError, match="in-memory database was closed"):
        sq.table_names(db)


def test_a_database_that_cannot_be_opened_or_committed_names_its_file(tmp_path: Path) -> None:
    path = tmp_path / "no such folder" / "x.db"
    with pytest.raises(sq.SQLError, match=f"cannot open the database '{path}'"):
        sq.execute(sq.open_database(str(path), True), "CREATE TABLE t (a real)")
    db = sq.open_database(str(tmp_path / "ro.db"), True)
    sq.execute(db, "CREATE TABLE t (a real)")
    sq.execute(db, "PRAGMA query_only = 1")  # every write refused, as a read-only file would be
    with pytest.raises(sq.SQLError, match="attempt to write a readonly database"):
        sq.execute(db, "INSERT INTO t VALUES (1)")


KILLED_CHILD = """
import sys, time
from devplace.bridge.adcme import sqlite as sq
db = sq.open_database(sys.argv[1], True)
sq.execute(db, "PRAGMA cache_size = 5")  # spill changed pages to the file mid-transaction
sq.execute(db, "CREATE TABLE t (i integer, pad text)")
sq.execute(db, "INSERT INTO t VALUES (?, ?)", [[(i, "x" * 200) for i in range(100)]])

def rows():
    for i in range(10**9):
        if i == 20000:
            print("mid-transaction", flush=True)
            time.sleep(120)
        yield (i, "y" * 200)

sq.execute(db, "INSERT INTO t VALUES (?, ?)", [rows()])
"""


@pytest.mark.slow
def test_a_process_killed_mid_transaction_leaves_the_file_at_its_last_commit(
    tmp_path: Path,
) -> None:
    path = tmp_path / "killed.db"
    child = subprocess.Popen(
        [sys.executable, "-c", KILLED_CHILD, str(path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout.readline() == "mid-transaction\n"
        size_mid = path.stat().st_size
        child.send_signal(signal.SIGKILL)
    finally:
        child.kill()
        child.wait(timeout=30)
    # The file was being written (pages spilled) with a hot journal beside it when killed.
    assert Path(f"{path}-journal").is_file() and size_mid > 100 * 200
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert conn.execute("SELECT count(*), max(i), min(pad) FROM t").fetchone() == (
            100,
            99,
            "x" * 200,
        )
    assert not os.path.exists(f"{path}-journal")  # rolled back on open


# Optimal transport --------------------------------------------------------------------------


def numpy_sinkhorn(a: np.ndarray, b: np.ndarray, M: np.ndarray, reg: float, n: int = 5000) -> Any:
    """A plain Sinkhorn loop: the plan and its cost."""
    K = np.exp(-M / reg)
    u, v = np.ones(len(a)), np.ones(len(b))
    for _ in range(n):
        u = a / (K @ v)
        v = b / (K.T @ u)
    P = u[:, None] * K * v[None, :]
    return P, float((P * M).sum())


def adcme_problem() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ADCME's test/ot.jl problem: a ∝ 1:5, b ∝ 1:10, M[i, j] = 1/(i+j)."""
    a, b = np.arange(1, 6) / 15, np.arange(1, 11) / 55
    return a, b, 1 / (np.arange(1, 6)[:, None] + np.arange(1, 11)[None, :])


def random_problem(m: int, n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a, b = rng.random(m) + 0.1, rng.random(n) + 0.1
    return a / a.sum(), b / b.sum(), rng.random((m, n)) * 3


@pytest.mark.parametrize("reg", [1.0, 0.1, 0.02])
def test_sinkhorn_gives_the_plain_numpy_loops_plan_and_cost(reg: float) -> None:
    a, b, M = random_problem(6, 9, seed=3)
    P_np, cost_np = numpy_sinkhorn(a, b, M, reg)
    with tf.Session() as sess:
        P, cost = sess.run(ot.sinkhorn(a, b, M, reg, 5000, 1e-15, "sinkhorn", True))
        greedy = sess.run(ot.sinkhorn(a, b, M, reg, 20000, 1e-11, "greenkhorn", False))
        adcme = sess.run(ot.sinkhorn(*adcme_problem(), 1.0, 1000, 1e-9, "sinkhorn", False))
    np.testing.assert_allclose(P, P_np, rtol=1e-8, atol=1e-14)
    assert cost == pytest.approx(cost_np, rel=1e-9)
    assert greedy == pytest.approx(cost_np, rel=1e-6)
    assert adcme == pytest.approx(0.10269121, abs=1e-8)  # ADCME's test/ot.jl


def test_sinkhorn_gradients_match_finite_differences() -> None:
    a0, b0, M0 = random_problem(4, 5, seed=7)
    a_, b_, M_ = (tf.placeholder(tf.float64, shape=v.shape) for v in (a0, b0, M0))
    loss = ot.sinkhorn(a_, b_, M_, 0.5, 2000, 1e-14, "sinkhorn", False)
    grads = tf.gradients(loss, [a_, b_, M_])
    with tf.Session() as sess:

        def f(a: np.ndarray, b: np.ndarray, M: np.ndarray) -> float:
            return float(sess.run(loss, {a_: a, b_: b, M_: M}))

        ga, gb, gM = sess.run(grads, {a_: a0, b_: b0, M_: M0})
        h = 1e-6
        for value, grad, which in ((a0, ga, 0), (b0, gb, 1), (M0, gM, 2)):
            for idx in np.ndindex(value.shape):
                e = np.zeros_like(value)
                e[idx] = h
                args = [a0, b0, M0]
                plus, minus = list(args), list(args)
                plus[which], minus[which] = value + e, value - e
                fd = (f(*plus) - f(*minus)) / (2 * h)
                assert grad[idx] == pytest.approx(fd, rel=1e-5, abs=1e-8), (which, idx)


def test_emd_is_the_linear_programs_optimum_with_the_plan_as_gradient() -> None:
    a, b, M = random_problem(5, 7, seed=11)
    M_ = tf.constant(M)
    P, cost = ot.emd(a, b, M_, True)
    grad = tf.gradients(cost, M_)[0]
    with tf.Session() as sess:
        P, cost, grad = sess.run([P, cost, grad])
    # The dual program, solved on its own: max a·f + b·g with f[i] + g[j] <= M[i, j].
    m, n = M.shape
    A = np.zeros((m * n, m + n))
    for i, j in np.ndindex(m, n):
        A[i * n + j, i] = A[i * n + j, m + j] = 1.0
    dual = scipy.optimize.linprog(
        -np.concatenate([a, b]), A_ub=A, b_ub=M.ravel(), bounds=(None, None), method="highs"
    )
    assert cost == pytest.approx(-dual.fun, rel=1e-9)
    np.testing.assert_allclose(P.sum(axis=1), a, atol=1e-12)
    np.testing.assert_allclose(P.sum(axis=0), b, atol=1e-12)
    np.testing.assert_array_equal(grad, P)
    # Never more than entropic transport's cost, which tends to it as reg shrinks.
    _, entropic = numpy_sinkhorn(a, b, M, 0.01, n=20000)
    assert cost <= entropic < cost + 0.05


def test_empirical_emd_is_the_assignment_and_the_1d_wasserstein_distance() -> None:
    rng = np.random.default_rng(5)
    x, y = rng.normal(size=(8, 2)), rng.normal(size=(8, 2))
    M = scipy.spatial.distance.cdist(x, y)
    rows, cols = scipy.optimize.linear_sum_assignment(M)
    u, v = rng.normal(size=12), rng.normal(size=12) + 1
    with tf.Session() as sess:
        _, _, a, b = ot.empirical_weights(x, y)
        cost = sess.run(ot.emd(a, b, ot.ot_dist(x, y, 2), False))
        xu, yv, a1, b1 = ot.empirical_weights(u, v)
        cost1d = sess.run(ot.emd(a1, b1, ot.ot_dist(xu, yv, 1), False))
    assert cost == pytest.approx(M[rows, cols].mean(), rel=1e-9)
    assert cost1d == pytest.approx(scipy.stats.wasserstein_distance(u, v), rel=1e-9)


def test_emd_refuses_weights_without_a_plan() -> None:
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="emd: a, b"):
        sess.run(ot.emd(np.array([0.5, 0.5]), np.array([0.9, 0.9]), np.ones((2, 2)), False))


@pytest.mark.parametrize("order", [1, 2, 3, 5])
def test_ot_dist_is_scipys_minkowski_distance_with_its_gradient(order: int) -> None:
    rng = np.random.default_rng(order)
    x0, y = rng.random((6, 3)), rng.random((4, 3))
    x = tf.constant(x0)
    M = ot.ot_dist(x, y, order)
    g = tf.gradients(tf.reduce_sum(M), x)[0]
    with tf.Session() as sess:
        M, g = sess.run([M, g])
    np.testing.assert_allclose(M, scipy.spatial.distance.cdist(x0, y, "minkowski", p=order))
    d = x0[:, None, :] - y[None, :, :]
    by_hand = np.sum(np.sign(d) * np.abs(d) ** (order - 1) / M[:, :, None] ** (order - 1), axis=1)
    np.testing.assert_allclose(g, by_hand, rtol=1e-10)


def plain_dtw(s: np.ndarray, t: np.ndarray) -> float:
    """Dynamic time warping, the textbook double loop."""
    D = np.full((len(s) + 1, len(t) + 1), np.inf)
    D[0, 0] = 0
    for i in range(1, len(s) + 1):
        for j in range(1, len(t) + 1):
            D[i, j] = abs(s[i - 1] - t[j - 1]) + min(D[i - 1, j], D[i, j - 1], D[i - 1, j - 1])
    return float(D[-1, -1])


def test_dtw_cost_and_path_are_the_textbook_dynamic_programs() -> None:
    rng = np.random.default_rng(2)
    cases = [(np.array([1, 2, 3, 5, 5, 5, 6.0]), np.array([1, 1, 2, 2, 3, 5.0]))]
    cases += [(rng.normal(size=m), rng.normal(size=n)) for m, n in [(1, 1), (1, 5), (30, 17)]]
    for s, t in cases:
        s_ = tf.constant(s)
        cost, path = ot.dtw(s_, t)
        grad = tf.convert_to_tensor(tf.gradients(cost, s_)[0])  # from IndexedSlices
        with tf.Session() as sess:
            cost, path, grad = sess.run([cost, path, grad])
        assert cost == pytest.approx(plain_dtw(s, t), rel=1e-12, abs=1e-12)
        steps = np.diff(path, axis=0)
        assert path[0].tolist() == [1, 1] and path[-1].tolist() == [len(s), len(t)]
        assert all(tuple(d) in {(1, 0), (0, 1), (1, 1)} for d in steps)
        i, j = path[:, 0] - 1, path[:, 1] - 1
        assert np.abs(s[i] - t[j]).sum() == pytest.approx(cost)
        np.testing.assert_allclose(grad, np.bincount(i, np.sign(s[i] - t[j]), len(s)))
    assert plain_dtw(*cases[0]) == 1.0  # ADCME's ot page


def test_ot_plot1d_draws_source_target_and_plan(tmp_path: Path) -> None:
    a, b, M = adcme_problem()
    fig = ot.ot_plot1d(a, b, M)
    titles = sorted(ax.get_title() for ax in fig.axes)
    assert titles == ["", "Source", "Target"]
    np.testing.assert_array_equal(fig.axes[2].images[0].get_array(), M)
    fig.savefig(tmp_path / "plan.png")
    assert (tmp_path / "plan.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_sinkhorn_refuses_an_unknown_method() -> None:
    with pytest.raises(ArgumentValueError, match="method must be one of sinkhorn, greenkhorn, lp"):
        ot.sinkhorn([1.0], [1.0], [[0.0]], 1.0, 10, 1e-9, "exact", False)
