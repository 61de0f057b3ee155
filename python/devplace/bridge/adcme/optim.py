"""ADCME's optimizers (src/optim.jl) for DevPlace.jl: scipy's minimizers over a graph's variables.

`ScipyOptimizerInterface` is TF1 contrib's class of that name (gone from TensorFlow 2), which
ADCME's `BFGS!` drives: the variables are packed into one vector, scipy.optimize.minimize
(L-BFGS-B by default) evaluates the loss and its gradients by feeding the variables, and the
variables are assigned once at the end. Unlike TF1's, the variables are also assigned when the
optimization stops early (Ctrl-C, an error in a callback): to the last iterate scipy accepted,
the best values so far.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import scipy.optimize
from threadpoolctl import ThreadpoolController

from devplace.adapter._tf import tf
from devplace.core.errors import ArgumentValueError

__all__ = ["CustomOptimizer", "PackedProblem", "ScipyOptimizerInterface", "bfgs_minimize"]

BOUNDED_METHODS = ("L-BFGS-B", "TNC", "SLSQP", "Powell", "Nelder-Mead", "trust-constr", "COBYQA")
CONSTRAINED_METHODS = ("SLSQP", "COBYLA", "COBYQA", "trust-constr")


def _flat_bounds(var: Any, bounds: Any) -> tuple[np.ndarray, np.ndarray]:
    """A variable's (lower, upper) bounds, each broadcast to its flattened size."""
    size = int(np.prod(var.shape.as_list()))
    try:
        lower, upper = bounds
    except (TypeError, ValueError):
        raise ArgumentValueError(
            "BFGS!", "bounds", bounds, "a pair (lower, upper) per variable", "Dict(x => [1.0, 3.0])"
        ) from None
    return (
        np.broadcast_to(np.asarray(lower, dtype=float), var.shape).reshape(size),
        np.broadcast_to(np.asarray(upper, dtype=float), var.shape).reshape(size),
    )


class PackedProblem:
    """`loss` over `var_list` (default: the trainable variables) as a function of one float64
    vector: what both optimizers below minimize (TF1's `ExternalOptimizerInterface`).

    `var_to_bounds` maps a variable to its (lower, upper) bounds (numbers or arrays of its
    shape); `equalities` and `inequalities` are scalar tensors kept `== 0` and `>= 0`; `grads`
    (one per variable) replaces `tf.gradients(loss, ...)`. Variables the loss does not depend on
    are left out. `optimizer_kwargs` are kept for the optimizer (as TF1 keeps them).
    """

    def __init__(
        self,
        loss: Any,
        var_list: Sequence[Any] | None = None,
        equalities: Sequence[Any] = (),
        inequalities: Sequence[Any] = (),
        var_to_bounds: dict[Any, Any] | None = None,
        grads: Sequence[Any] | None = None,
        **optimizer_kwargs: Any,
    ) -> None:
        self.loss = loss
        self.optimizer_kwargs = optimizer_kwargs
        self.vars = list(var_list if var_list is not None else tf.trainable_variables())
        if not self.vars:
            raise ArgumentValueError(
                type(self).__name__, "var_list", self.vars, "at least one variable",
                "make one with Variable(1.0) before the loss",
            )  # fmt: skip
        if grads is None:
            grads = tf.gradients(loss, self.vars)
        kept = [(v, g) for v, g in zip(self.vars, grads, strict=True) if g is not None]
        self.vars = [v for v, _ in kept]
        self.shapes = [v.shape.as_list() for v in self.vars]
        self.sizes = [int(np.prod(s)) for s in self.shapes]
        self.packed_grad = self._packed([g for _, g in kept])
        self.constraints = [("eq", c) for c in equalities or ()] + [
            ("ineq", c) for c in inequalities or ()
        ]
        self.constraint_grads = [
            self._packed(tf.gradients(c, self.vars)) for _, c in self.constraints
        ]
        self.bounded = bool(var_to_bounds)
        self.lower, self.upper = self._bounds(var_to_bounds or {})
        self.placeholders = [
            tf.placeholder(v.dtype.base_dtype, s)
            for v, s in zip(self.vars, self.shapes, strict=True)
        ]
        self.assign_ops = [v.assign(p) for v, p in zip(self.vars, self.placeholders, strict=True)]

    def _bounds(self, var_to_bounds: dict[Any, Any]) -> tuple[np.ndarray, np.ndarray]:
        """The packed vector's lower and upper bounds (infinite where a variable has none)."""
        lower, upper = [], []
        for var, size in zip(self.vars, self.sizes, strict=True):
            lo, up = _flat_bounds(var, var_to_bounds[var]) if var in var_to_bounds else (
                np.full(size, -np.inf), np.full(size, np.inf))  # fmt: skip
            lower.append(lo)
            upper.append(up)
        return np.concatenate(lower), np.concatenate(upper)

    def unpack(self, x: np.ndarray) -> list[np.ndarray]:
        """The packed vector `x` as one array per variable."""
        parts = np.split(np.asarray(x, dtype=float), np.cumsum(self.sizes)[:-1])
        return [p.reshape(s) for p, s in zip(parts, self.shapes, strict=True)]

    def _feed(self, x: np.ndarray, feed_dict: dict[Any, Any] | None) -> dict[Any, Any]:
        feed = dict(feed_dict or {})
        feed.update(zip(self.vars, self.unpack(x), strict=True))
        return feed

    def packed_values(self, session: Any, feed_dict: Any = None) -> np.ndarray:
        """The variables' values as one float64 vector."""
        values = session.run(self.vars, feed_dict=feed_dict)
        return np.concatenate([np.ravel(v) for v in values]).astype(float)

    def evaluate(self, session: Any, x: np.ndarray) -> tuple[float, np.ndarray]:
        """Assign `x` to the variables; the loss and its gradient there (ADCME's `Optimize!`)."""
        self.assign(session, x)
        loss, grad = session.run([self.loss, self.packed_grad])
        return float(loss), np.asarray(grad, dtype=float)

    def assign(self, session: Any, x: np.ndarray) -> None:
        """Assign the packed vector `x` to the variables."""
        session.run(
            self.assign_ops, feed_dict=dict(zip(self.placeholders, self.unpack(x), strict=True))
        )

    def _packed(self, grads: Sequence[Any]) -> Any:
        """One float64 vector of gradients, zeros for a variable a tensor does not depend on."""
        return tf.concat(
            [
                tf.reshape(tf.cast(tf.zeros_like(v) if g is None else g, tf.float64), [-1])
                for v, g in zip(self.vars, grads, strict=True)
            ],
            0,
        )


class ScipyOptimizerInterface(PackedProblem):
    """Minimize `loss` over `var_list` (default: the trainable variables) with scipy.

    The arguments are `PackedProblem`'s; `optimizer_kwargs` go to `scipy.optimize.minimize`:
    `method` (L-BFGS-B unless given; `equalities` and `inequalities` need a constrained one such
    as SLSQP), `options` and scipy's other keywords.
    """

    def _scipy_bounds(self) -> list[tuple[float | None, float | None]] | None:
        """scipy's bounds: a (lower, upper) pair per entry, None where unbounded."""
        if not self.bounded:
            return None
        return [
            (None if math.isinf(a) else float(a), None if math.isinf(b) else float(b))
            for a, b in zip(self.lower, self.upper, strict=True)
        ]

    def _scipy_constraints(self, session: Any, feed_dict: Any) -> list[dict[str, Any]]:
        def evaluate(t: Any) -> Callable[[np.ndarray], Any]:
            return lambda x: session.run(t, feed_dict=self._feed(x, feed_dict))

        return [
            {"type": kind, "fun": evaluate(c), "jac": evaluate(g)}
            for (kind, c), g in zip(self.constraints, self.constraint_grads, strict=True)
        ]

    def minimize(
        self,
        session: Any,
        feed_dict: dict[Any, Any] | None = None,
        fetches: Sequence[Any] | None = None,
        step_callback: Callable[..., Any] | None = None,
        loss_callback: Callable[..., Any] | None = None,
        **run_kwargs: Any,
    ) -> Any:
        """Run the minimization; the variables hold the result (or the last accepted iterate
        when it stops early). `loss_callback(*fetched)` follows each evaluation (`fetches`
        evaluated with the loss), `step_callback(x)` each accepted step. Returns scipy's result."""
        fetches = list(fetches or [])
        scipy_kwargs = dict(self.optimizer_kwargs)
        method = scipy_kwargs.pop("method", "L-BFGS-B")
        options = dict(scipy_kwargs.pop("options", None) or {})
        x0 = self.packed_values(session, feed_dict)
        accepted = [x0.copy()]

        def loss_and_grad(x: np.ndarray) -> tuple[float, np.ndarray]:
            out = session.run(
                [self.loss, self.packed_grad, *fetches],
                feed_dict=self._feed(x, feed_dict),
                **run_kwargs,
            )
            if loss_callback is not None:
                loss_callback(*out[2:])
            return float(out[0]), np.asarray(out[1], dtype=float)

        def on_step(x: np.ndarray, *_: Any) -> None:
            accepted[0] = np.array(x, dtype=float)
            if step_callback is not None:
                step_callback(accepted[0])

        try:
            with _blas_controller().limit(limits=1, user_api="blas"):
                result = scipy.optimize.minimize(
                    loss_and_grad,
                    x0,
                    jac=True,
                    method=method,
                    bounds=self._scipy_bounds() if method in BOUNDED_METHODS else None,
                    constraints=self._scipy_constraints(session, feed_dict)
                    if method in CONSTRAINED_METHODS
                    else (),
                    callback=on_step,
                    options=options,
                    **scipy_kwargs,
                )
        except BaseException:
            self.assign(session, accepted[0])  # Ctrl-C or an error: keep the best values so far
            raise
        self.assign(session, result.x)
        return result


@functools.cache
def _blas_controller() -> ThreadpoolController:
    """The process's BLAS libraries (scipy's among them), which
    `ScipyOptimizerInterface.minimize` keeps to one thread while it runs: L-BFGS-B's vectors
    and small systems gain nothing from more, and OpenBLAS's threads, waiting for work between
    calls, take the cores from TensorFlow's (`BFGS!` on a 200-variable loss ran 2–7 times
    slower on the 2-core machine at load 3; see benchmarks/bridge/RESULTS.md)."""
    return ThreadpoolController()


class CustomOptimizer(PackedProblem):
    """ADCME's `CustomOptimizer`: the minimization done by a user's function
    `driver(f, df, c, dc, x0, x_L, x_U, nineq, neq) -> x` (a Julia function in DevPlace.jl)."""

    def __init__(self, driver: Callable[..., Any], loss: Any, **kwargs: Any) -> None:
        super().__init__(loss, **kwargs)
        self.driver = driver

    def minimize(self, session: Any, feed_dict: Any = None) -> np.ndarray:
        """Run the driver; assign the `x` it returns to the variables, and return it."""
        x0 = self.packed_values(session, feed_dict)
        constraints = [c for _, c in self.constraints]
        kinds = [kind for kind, _ in self.constraints]
        order = [i for i, k in enumerate(kinds) if k == "ineq"] + [
            i for i, k in enumerate(kinds) if k == "eq"
        ]

        def run(fetches: Any, x: np.ndarray) -> Any:
            return session.run(fetches, feed_dict=self._feed(x, feed_dict))

        def c(x: np.ndarray) -> np.ndarray:
            return np.array([run(constraints[i], x) for i in order], dtype=float)

        def dc(x: np.ndarray) -> np.ndarray:
            return np.concatenate(
                [run(self.constraint_grads[i], x) for i in order] or [np.zeros(0)]
            )

        x = self.driver(
            lambda x: float(run(self.loss, x)),
            lambda x: np.asarray(run(self.packed_grad, x), dtype=float),
            c,
            dc,
            x0,
            self.lower,
            self.upper,
            kinds.count("ineq"),
            kinds.count("eq"),
        )
        x = np.asarray(x, dtype=float)
        self.assign(session, x)
        return x


def bfgs_minimize(
    value_and_gradients_function: Callable[[Any], Any],
    initial_position: Any,
    max_iterations: int = 50,
    **kwargs: Any,
) -> Any:
    """ADCME's `BFGS!(f, x0)`: tensorflow_probability's BFGS built into the graph; the tensor of
    the final position."""
    import tensorflow_probability as tfp  # noqa: PLC0415 (slow to import, needed here only)

    def value_and_gradients(x: Any) -> tuple[Any, Any]:
        value, gradient = value_and_gradients_function(x)
        return tf.convert_to_tensor(value), tf.convert_to_tensor(gradient)

    results = tfp.optimizer.bfgs_minimize(
        value_and_gradients,
        initial_position=tf.convert_to_tensor(initial_position, dtype=tf.float64),
        max_iterations=max_iterations,
        **kwargs,
    )
    return results.position
