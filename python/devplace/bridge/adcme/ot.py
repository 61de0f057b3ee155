"""ADCME's optimal transport (`julia/DevPlace/src/adcme/ot.jl`) without its compiled operators.

`sinkhorn` is a TensorFlow while loop in the log domain (stable for small `reg`), so its
gradients with respect to `a`, `b` and `M` are TensorFlow's own, through the iterations.
`emd` solves the transport linear program with scipy's HiGHS in the host (`py_func`), and its
loss is rebuilt in the graph from the optimal plan, so its gradient with respect to `M` is that
plan. `dtw` finds the warping path by dynamic programming in the host and its cost is the sum
of `|s[i] - t[j]|` along the path, in the graph.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import optimize, sparse

from devplace.adapter._tf import tf
from devplace.bridge.adcme.calls import F64, I64, as_f64
from devplace.bridge.adcme.kit import pyplot
from devplace.core.errors import ArgumentValueError

__all__ = [
    "METHODS",
    "dtw",
    "emd",
    "emd_plan",
    "empirical_weights",
    "ot_dist",
    "ot_plot1d",
    "sinkhorn",
    "warping_path",
]

#: The solvers `sinkhorn(...; method)` takes.
METHODS = ("sinkhorn", "greenkhorn", "lp")


def sinkhorn(
    a: Any, b: Any, M: Any, reg: Any, iters: int, tol: float, method: str, returnall: bool
) -> Any:
    """ADCME's `sinkhorn`: the transport cost `sum(P .* M)` of the entropic plan `P` (and `P`
    first with `returnall`); `method="lp"` is `emd`."""
    if method not in METHODS:
        raise ArgumentValueError(
            "sinkhorn", "method", method, f"one of {', '.join(METHODS)}", 'method="sinkhorn"'
        )
    if method == "lp":
        return emd(a, b, M, returnall)
    a, b, M, reg = as_f64(a), as_f64(b), as_f64(M), as_f64(reg)
    log_a, log_b = tf.math.log(a), tf.math.log(b)
    cost = -M / reg

    def plan_log(f: Any, g: Any) -> Any:
        return f[:, None] + cost + g[None, :]

    def marginal_error(f: Any, g: Any) -> Any:
        plan = tf.exp(plan_log(f, g))
        rows, cols = tf.reduce_sum(plan, axis=1), tf.reduce_sum(plan, axis=0)
        return tf.reduce_sum(tf.abs(rows - a)) + tf.reduce_sum(tf.abs(cols - b))

    if method == "sinkhorn":
        # One sweep: scale the rows to a, then the columns to b (in logs: f, g).
        def sweep(f: Any, g: Any) -> tuple[Any, Any]:
            f = log_a - tf.reduce_logsumexp(cost + g[None, :], axis=1)
            g = log_b - tf.reduce_logsumexp(cost + f[:, None], axis=0)
            return f, g
    else:
        # Greenkhorn: scale only the row or column whose sum is furthest from its target.
        def sweep(f: Any, g: Any) -> tuple[Any, Any]:
            lp = plan_log(f, g)
            rows, cols = tf.exp(tf.reduce_logsumexp(lp, 1)), tf.exp(tf.reduce_logsumexp(lp, 0))
            gap_r, gap_c = _bregman(rows, a), _bregman(cols, b)
            i, j = tf.argmax(gap_r), tf.argmax(gap_c)
            new_f = log_a[i] - tf.reduce_logsumexp(cost[i] + g)
            new_g = log_b[j] - tf.reduce_logsumexp(cost[:, j] + f)
            by_row = gap_r[i] >= gap_c[j]
            f = tf.where(by_row, tf.tensor_scatter_nd_update(f, [[i]], [new_f]), f)
            g = tf.where(by_row, g, tf.tensor_scatter_nd_update(g, [[j]], [new_g]))
            return f, g

    def body(k: Any, f: Any, g: Any, err: Any) -> tuple[Any, Any, Any, Any]:
        f, g = sweep(f, g)
        return k + 1, f, g, marginal_error(f, g)

    start = (
        tf.constant(0, I64),
        tf.zeros_like(log_a),
        tf.zeros_like(log_b),
        tf.constant(np.inf, F64),
    )
    _, f, g, _ = tf.while_loop(
        lambda k, f, g, err: err > tol, body, start, maximum_iterations=iters
    )
    plan = tf.exp(plan_log(f, g))
    loss = tf.reduce_sum(plan * M)
    return (plan, loss) if returnall else loss


def _bregman(x: Any, target: Any) -> Any:
    """Greenkhorn's gap between a row (column) sum `x` and its target."""
    return x - target + target * (tf.math.log(target) - tf.math.log(x))


def emd_plan(a: np.ndarray, b: np.ndarray, M: np.ndarray) -> np.ndarray:
    """The optimal transport plan from `a` to `b` under cost `M` (scipy's HiGHS)."""
    m, n = M.shape
    rows = sparse.kron(sparse.eye(m), np.ones((1, n)))
    cols = sparse.kron(np.ones((1, m)), sparse.eye(n))
    done = optimize.linprog(
        M.ravel(),
        A_eq=sparse.vstack([rows, cols]).tocsr(),
        b_eq=np.concatenate([a, b]),
        bounds=(0, None),
        method="highs",
    )
    if done.status != 0:
        raise ArgumentValueError(
            "emd",
            "a, b",
            (a.tolist(), b.tolist()),
            "weights (non-negative, each summing to 1) between which a plan exists",
            f"scipy's linprog says: {done.message}",
        )
    return done.x.reshape(m, n)


def emd(a: Any, b: Any, M: Any, returnall: bool) -> Any:
    """ADCME's `emd`: the earth mover's distance `sum(P .* M)` of the optimal plan `P` (and `P`
    first with `returnall`); its gradient with respect to `M` is `P`."""
    a, b, M = as_f64(a), as_f64(b), as_f64(M)
    plan = tf.stop_gradient(tf.numpy_function(emd_plan, [a, b, M], F64, stateful=False))
    plan = tf.reshape(plan, tf.shape(M))
    loss = tf.reduce_sum(plan * M)
    return (plan, loss) if returnall else loss


def ot_dist(x: Any, y: Any, order: Any) -> Any:
    """ADCME's `ot_dist`: `M[i, j] = ‖x[i, :] - y[j, :]‖_order`."""
    x, y, order = as_f64(x), as_f64(y), as_f64(order)
    x = tf.reshape(x, [tf.shape(x)[0], -1])
    y = tf.reshape(y, [tf.shape(y)[0], -1])
    diff = tf.abs(x[:, None, :] - y[None, :, :])
    return tf.reduce_sum(diff**order, axis=2) ** (1.0 / order)


def empirical_weights(x: Any, y: Any) -> tuple[Any, Any, Any, Any]:
    """The samples `x` and `y` as matrices (a vector is one column) and their equal weights."""
    x, y = as_f64(x), as_f64(y)
    x, y = (tf.reshape(v, [-1, 1]) if v.shape.rank == 1 else v for v in (x, y))
    a, b = (tf.ones(tf.shape(v)[:1], F64) / tf.cast(tf.shape(v)[0], F64) for v in (x, y))
    return x, y, a, b


def warping_path(s: np.ndarray, t: np.ndarray) -> np.ndarray:
    """The optimal dynamic time warping path of `s` and `t` under `|s[i] - t[j]|`, as rows
    `(i, j)` from 0."""
    m, n = len(s), len(t)
    cost = np.abs(s[:, None] - t[None, :])
    D = np.full((m + 1, n + 1), np.inf)
    D[0, 0] = 0.0
    for i in range(1, m + 1):
        # D[i, j] = min(A[j], D[i, j-1] + cost[j]) with A from the row above: a min-plus
        # scan, D[i, j] = C[j] + min over k <= j of (A[k] - C[k]), C the running sum of cost.
        above = cost[i - 1] + np.minimum(D[i - 1, 1:], D[i - 1, :-1])
        running = np.cumsum(cost[i - 1])
        D[i, 1:] = running + np.minimum.accumulate(above - running)
    path = [(m - 1, n - 1)]
    i, j = m, n
    while (i, j) != (1, 1):
        steps = [(i - 1, j - 1), (i - 1, j), (i, j - 1)]
        i, j = min((p for p in steps if p[0] >= 1 and p[1] >= 1), key=lambda p: D[p])
        path.append((i - 1, j - 1))
    return np.array(path[::-1], dtype=np.int64)


def dtw(s: Any, t: Any) -> tuple[Any, Any]:
    """ADCME's `dtw`: the warping cost and path (rows `(i, j)`, from 1) of series `s` and `t`;
    the cost's gradient is that of the sum along the path."""
    s, t = as_f64(s), as_f64(t)
    path = tf.numpy_function(warping_path, [s, t], I64, stateful=False)
    path = tf.reshape(path, [-1, 2])
    cost = tf.reduce_sum(tf.abs(tf.gather(s, path[:, 0]) - tf.gather(t, path[:, 1])))
    return cost, path + 1


def ot_plot1d(a: Any, b: Any, M: Any) -> Any:
    """ADCME's `ot_plot1D`: source `a` (left), target `b` (top) and the plan `M` (an image), on
    figure 4 of pyplot, as ADCME drew it."""
    a, b, M = np.asarray(a), np.asarray(b), np.asarray(M)
    plt = pyplot()
    plt.figure(4, figsize=(5, 5))
    ax1 = plt.subplot(222)
    plt.plot(np.arange(len(b)), b, "r")
    plt.yticks(())
    plt.title("Target")
    ax2 = plt.subplot(223)
    plt.plot(a, np.arange(len(a)), "b")
    plt.gca().invert_xaxis()
    plt.gca().invert_yaxis()
    plt.xticks(())
    plt.title("Source")
    plt.subplot(224, sharex=ax1, sharey=ax2)
    plt.imshow(M, interpolation="nearest")
    plt.axis("off")
    plt.xlim((0, M.shape[1] - 1))
    plt.tight_layout()
    plt.subplots_adjust(wspace=0.0, hspace=0.2)
    return plt.gcf()
