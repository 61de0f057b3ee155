"""Gradients and Jacobians whose ops can be colocated with the forward ops they differentiate."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from devplace.adapter._tf import tf
from devplace.core.errors import ArgumentTypeError, ArgumentValueError

__all__ = ["gradients"]


def _is_list(x: Any) -> bool:
    return isinstance(x, (list, tuple))


def _jacobian(y: Any, xs: list[Any], colocate: bool) -> list[Any]:
    """d y[i...] / d x[j...] for every x, shaped `y.shape + x.shape`, one gradient per entry."""
    shape = y.shape
    if not shape.is_fully_defined():
        raise ArgumentValueError(
            "gradients",
            "ys",
            y,
            "a scalar, or a tensor of static shape for a Jacobian",
            "reshape ys to a known size or reduce it to a scalar first (e.g. dp.reduce_sum)",
        )
    rows = tf.unstack(tf.reshape(y, [-1]))
    per_row = [
        tf.gradients(row, xs, colocate_gradients_with_ops=colocate, unconnected_gradients="zero")
        for row in rows
    ]
    result = []
    for j, x in enumerate(xs):
        if colocate:
            # The assembling ops sit with the forward output, not on the default device.
            with tf.colocate_with(y.op):
                result.append(_stack(per_row, j, shape, x))
        else:
            result.append(_stack(per_row, j, shape, x))
    return result


def _stack(per_row: list[list[Any]], j: int, shape: Any, x: Any) -> Any:
    stacked = tf.stack([grads[j] for grads in per_row])
    return tf.reshape(stacked, shape.concatenate(tf.convert_to_tensor(x).shape))


def gradients(ys: Any, xs: Any, colocate: bool = False, **kwargs: Any) -> Any:
    """Gradients of `ys` with respect to `xs`, like `tf.gradients`, with three differences.

    - `colocate=True` puts each gradient op on its forward op's device
      (`colocate_gradients_with_ops`), for scalars, lists, and Jacobians alike.
    - A non-scalar tensor `ys` gives its Jacobian, shaped `ys.shape + x.shape`
      (a list of tensors, `ys`, sums over ys as `tf.gradients` does).
    - A single `xs` gives a single tensor back, a list gives a list.

    Other keyword arguments go to `tf.gradients`.
    """
    if not isinstance(colocate, bool):
        raise ArgumentTypeError(
            "gradients",
            "colocate",
            colocate,
            "True or False",
            "colocate=True puts each gradient op on its forward op's device",
        )
    single = not _is_list(xs)
    xs_list: Sequence[Any] = [xs] if single else list(xs)
    if not _is_list(ys) and tf.convert_to_tensor(ys).shape.rank not in (0, None):
        if kwargs:
            raise ArgumentTypeError(
                "gradients",
                "ys",
                ys,
                f"a scalar or a list when passing {', '.join(sorted(kwargs))}",
                "those options are not supported for Jacobians: leave them out, or pass "
                "a list of tensors to sum over (as tf.gradients does)",
            )
        result = _jacobian(tf.convert_to_tensor(ys), list(xs_list), colocate)
    else:
        result = tf.gradients(ys, xs_list, colocate_gradients_with_ops=colocate, **kwargs)
    return result[0] if single else result
