"""ADCME's sparse matrices in the host (devplace.bridge.adcme.sparse): values against scipy,
gradients against finite differences, and where the scipy solve runs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import scipy.sparse
import scipy.sparse.linalg
from conftest import HAS_GPU

import devplace as dp
from devplace.bridge.adcme import sparse as sp
from devplace.bridge.adcme.assemblers import ASSEMBLERS
from devplace.bridge.adcme.factorizations import FACTORIZATIONS, lu

tf = dp.tf


def coo(a: Any) -> scipy.sparse.coo_matrix:
    return scipy.sparse.coo_matrix(a)


def regular(n: int, seed: int) -> scipy.sparse.coo_matrix:
    """A random sparse n×n matrix, diagonally dominant (well conditioned)."""
    a = scipy.sparse.random(n, n, density=0.4, random_state=seed) + 4 * scipy.sparse.eye(n)
    return coo(a)


def sparse_of(a: scipy.sparse.coo_matrix, values: Any = None) -> Any:
    """The SparseTensor of `a` (row-major), its values `values` when given (a placeholder)."""
    a = coo(a.tocsr())  # row-major order, as from_ijv stores them
    # indices as Julia sends them: from 1
    return sp.from_ijv(a.row + 1, a.col + 1, a.data if values is None else values, *a.shape)


def row_major_values(a: scipy.sparse.coo_matrix) -> np.ndarray:
    return coo(a.tocsr()).data


def check_gradient(
    loss: Callable[[Any], Any], x0: np.ndarray, eps: float = 1e-6, rtol: float = 1e-5
) -> None:
    """TensorFlow's gradient of `loss(x)` at `x0` against central finite differences."""
    x = tf.placeholder(tf.float64, shape=x0.shape)
    out = loss(x)
    (grad,) = tf.gradients(out, [x])
    sess = dp.Session()
    g = sess.run(grad, {x: x0})
    fd = np.zeros_like(x0)
    for i in np.ndindex(x0.shape):
        up, down = x0.copy(), x0.copy()
        up[i] += eps
        down[i] -= eps
        fd[i] = (sess.run(out, {x: up}) - sess.run(out, {x: down})) / (2 * eps)
    np.testing.assert_allclose(g, fd, rtol=rtol, atol=1e-8)


def test_solve_gives_scipys_solution_and_its_gradients_match_finite_differences() -> None:
    a = regular(6, seed=1)
    b = np.linspace(1.0, 2.0, 6)
    w = np.arange(1.0, 7.0)
    x = sp.solve(sparse_of(a), b, "auto")
    np.testing.assert_allclose(
        dp.Session().run(x), scipy.sparse.linalg.spsolve(a.tocsc(), b), rtol=1e-12
    )
    # d/d values and d/d b of w · (A \ b)
    check_gradient(
        lambda v: tf.reduce_sum(w * sp.solve(sparse_of(a, v), b, "auto")), row_major_values(a)
    )
    check_gradient(lambda rhs: tf.reduce_sum(w * sp.solve(sparse_of(a), rhs, "auto")), b)


def test_rows_of_right_hand_sides_are_solved_each() -> None:
    a = regular(5, seed=2)
    rhs = np.arange(15.0).reshape(3, 5)
    x = dp.Session().run(sp.solve(sparse_of(a), rhs, "SparseLU"))
    expected = scipy.sparse.linalg.spsolve(a.tocsc(), rhs.T).T
    np.testing.assert_allclose(x, expected, rtol=1e-12)
    check_gradient(
        lambda v: tf.reduce_sum(sp.solve(sparse_of(a, v), rhs, "auto") ** 2), row_major_values(a)
    )


def test_least_squares_of_a_tall_and_a_wide_matrix() -> None:
    tall = coo(np.array([[1.0, 2], [3, 4], [5, 6], [0, 1]]))
    f = np.array([1.0, 2.0, 0.5, 1.0])
    x = dp.Session().run(sp.solve(sparse_of(tall), f, "auto"))
    np.testing.assert_allclose(x, np.linalg.lstsq(tall.toarray(), f, rcond=None)[0], rtol=1e-10)
    check_gradient(
        lambda v: tf.reduce_sum(sp.solve(sparse_of(tall, v), f, "auto")), row_major_values(tall)
    )
    wide = coo(tall.toarray().T)
    y = dp.Session().run(sp.solve(sparse_of(wide), np.array([1.0, 2.0]), "auto"))
    np.testing.assert_allclose(y, np.linalg.pinv(wide.toarray()) @ [1.0, 2.0], rtol=1e-10)


def test_factorized_solve_equals_solve_with_the_same_gradients() -> None:
    a = regular(6, seed=3)
    b = np.linspace(-1.0, 1.0, 6)
    values = tf.constant(row_major_values(a))
    s = sparse_of(a, values)
    handle = sp.factorize(s, 10)
    x1, x2 = sp.factorized_solve(s, handle, b), sp.factorized_solve(s, handle, 2 * b)
    plain = sp.solve(s, b, "auto")
    grads = tf.gradients(tf.reduce_sum(x1**2), [values])
    plain_grads = tf.gradients(tf.reduce_sum(plain**2), [values])
    r = dp.Session().run([x1, x2, plain, grads, plain_grads])
    np.testing.assert_allclose(r[0], r[2], rtol=1e-12)
    np.testing.assert_allclose(r[1], 2 * r[2], rtol=1e-12)
    np.testing.assert_allclose(r[3], r[4], rtol=1e-10)


def test_a_loops_factorizations_stay_until_a_later_loop_solves_with_them() -> None:
    # 12 runs of one factorize op (more than a while_loop's 10 iterations at once) all made
    # before any solve: each solve still finds its own run's factors.
    a = regular(5, seed=4)
    b = np.linspace(1.0, 2.0, 5)
    values = tf.constant(row_major_values(a))
    steps = 12

    def factorize_step(i: Any, handles: Any) -> Any:
        scaled = sparse_of(a, values * tf.cast(i + 1, tf.float64))
        return i + 1, handles.write(i, sp.factorize(scaled, 10))

    _, handles = tf.while_loop(
        lambda i, _: i < steps, factorize_step, [0, tf.TensorArray(tf.int64, size=steps)]
    )
    handles = handles.stack()

    def solve_step(i: Any, xs: Any) -> Any:
        scaled = sparse_of(a, values * tf.cast(i + 1, tf.float64))
        return i + 1, xs.write(i, sp.factorized_solve(scaled, handles[i], b))

    _, xs = tf.while_loop(
        lambda i, _: i < steps, solve_step, [0, tf.TensorArray(tf.float64, size=steps)]
    )
    solved = dp.Session().run(xs.stack())
    x = scipy.sparse.linalg.spsolve(a.tocsc(), b)
    np.testing.assert_allclose(solved, [x / (k + 1) for k in range(steps)], rtol=1e-10)


def test_a_singular_matrix_fails_when_run_naming_it() -> None:
    x = sp.solve(sparse_of(coo(np.zeros((3, 3)))), np.ones(3), "auto")
    with pytest.raises(tf.errors.InvalidArgumentError, match="singular"):
        dp.Session().run(x)


def test_bad_arguments_are_named() -> None:
    a = sparse_of(regular(3, seed=4))
    with pytest.raises(dp.Error, match="rhs"):
        sp.solve(a, np.ones(4), "auto")
    with pytest.raises(dp.Error, match="method"):
        sp.solve(a, np.ones(3), "Cholesky")
    with pytest.raises(dp.Error, match="trisolve"):
        sp.trisolve(np.ones(3), np.ones(3), np.ones(2), np.ones(3))


def test_sparse_products_sums_and_blocks_match_scipy_with_gradients() -> None:
    a = coo(scipy.sparse.random(5, 4, density=0.5, random_state=5))
    b = coo(scipy.sparse.random(4, 6, density=0.5, random_state=6))
    s, t = sparse_of(a), sparse_of(b)
    r = dp.Session().run(
        [
            sp.to_dense(sp.matmul(s, t)),
            sp.to_dense(sp.select(s, np.array([5, 1, 1]), np.array([2, 4]))),
            sp.reduce_sum(s, 1),
            sp.to_dense(sp.add(s, s)),
            sp.matmul_dense(s, np.ones(4)),
        ]
    )
    np.testing.assert_allclose(r[0], (a @ b).toarray(), rtol=1e-12)
    np.testing.assert_allclose(r[1], a.toarray()[[4, 0, 0]][:, [1, 3]])
    np.testing.assert_allclose(r[2], a.toarray().sum(axis=0), rtol=1e-12)
    np.testing.assert_allclose(r[3], 2 * a.toarray())
    np.testing.assert_allclose(r[4], a.toarray().sum(axis=1), rtol=1e-12)
    check_gradient(
        lambda v: tf.reduce_sum(sp.to_dense(sp.matmul(sparse_of(a, v), t)) ** 2),
        row_major_values(a),
    )


def test_trisolve_matches_numpy_and_has_gradients() -> None:
    lower, main, upper = np.full(3, 1.0), np.array([5.0, 6, 7, 8]), np.full(3, 2.0)
    d = np.arange(4.0)
    full = np.diag(main) + np.diag(lower, -1) + np.diag(upper, 1)
    x = dp.Session().run(sp.trisolve(lower, main, upper, d))
    np.testing.assert_allclose(x, np.linalg.solve(full, d), rtol=1e-12)
    check_gradient(lambda m: tf.reduce_sum(sp.trisolve(lower, m, upper, d) ** 2), main)


def py_funcs() -> list[Any]:
    return [op for op in tf.get_default_graph().get_operations() if op.type.startswith("PyFunc")]


def test_the_solve_runs_on_the_cpu_of_its_scope_with_its_gradient() -> None:
    a = regular(4, seed=7)
    values = tf.constant(row_major_values(a))
    with dp.cpu(1):
        x = sp.solve(sparse_of(a, values), np.ones(4), "auto")
        (g,) = dp.gradients(tf.reduce_sum(x), [values], colocate=True)
    report = dp.placement(dp.Session(cpus=2, optimize=False), [x, g])
    names = [op.name for op in py_funcs()]
    assert len(names) == 3  # A's LU factorization, the solve, and the adjoint solve using it
    assert {report.actual(n) for n in names} == {"/device:CPU:1"}


#: The scope: a GPU whether or not this machine has one (requested devices are graph facts).
SCOPE = "/device:GPU:0"
#: The CPU the host's ops ask for under SCOPE: its index comes from the scope (GPU:0 -> CPU:0).
SCOPE_CPU = "/device:CPU:0"


def test_under_a_gpu_scope_the_solve_is_put_on_a_cpu() -> None:
    a = regular(4, seed=8)
    values = tf.constant(row_major_values(a))
    with dp.device(SCOPE):
        x = sp.solve(sparse_of(a, values), np.ones(4), "auto")
        (g,) = dp.gradients(tf.reduce_sum(x), [values], colocate=True)
    host_ops = py_funcs()
    # the factorization, the solve, the adjoint solve (colocated gradients included)
    assert {op.name: op.device for op in host_ops} == {op.name: SCOPE_CPU for op in host_ops}
    assert len(host_ops) == 3
    around = [op for op in x.graph.get_operations() if op not in host_ops and op.device]
    assert around and all(op.device == SCOPE for op in around), "the rest keeps the scope"
    # soft placement: without a GPU, the ops asking for one run on a CPU
    report = dp.placement(dp.Session(soft=True, optimize=False), [x, g])
    assert all(report.actual(op.name).endswith(SCOPE_CPU) for op in host_ops)
    if HAS_GPU:
        host = {op.name for op in host_ops}
        ran = [op for op in report.ops if op.name not in host and op.actual.endswith(SCOPE)]
        assert ran, f"the sparse ops around the solve run on {SCOPE}"


def test_the_host_states_errors_are_devplace_errors_naming_the_next_step() -> None:
    # ValueErrors too, so that py_func reports them as InvalidArgumentError when the graph runs.
    with pytest.raises(dp.Error, match=r"not open: run SparseAssembler\(-7, n\)") as closed:
        ASSEMBLERS.take(-7)
    with pytest.raises(dp.Error, match="raise max_cache_size") as dropped:
        FACTORIZATIONS.get(-1)
    with pytest.raises(dp.Error, match="2×2 matrix is singular") as singular:
        lu(np.array([[0, 0]]), np.array([0.0]), np.array([2, 2]))
    assert all(isinstance(e.value, ValueError) for e in (closed, dropped, singular))
