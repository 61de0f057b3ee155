"""ADCME's variables and derivatives (`julia/DevPlace/src/adcme/variable.jl`): `get_variable`,
`get_dtype`, tensors from Julia arrays, TensorArray elements from 1, Hessians and Jacobians.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from devplace.adapter._tf import hessian_vector_product, tf
from devplace.adapter._tf import jacobian as tf_jacobian
from devplace.bridge.julia_semantics import check_bounds, zero_based
from devplace.core.errors import ArgumentValueError

__all__ = [
    "dtype",
    "gradient_magnitude",
    "hessian",
    "hessian_vector",
    "is_variable",
    "jacobian",
    "tensor_array_read",
    "tensor_array_write",
    "tensor_from",
    "variable",
]


def dtype(x: Any) -> Any:
    """The numpy type of a tensor's elements (a Julia type in DevPlace.jl), None if not numeric."""
    try:
        numpy_type = tf.as_dtype(x.dtype).base_dtype.as_numpy_dtype
    except (AttributeError, TypeError):
        return None
    return numpy_type if np.dtype(numpy_type).kind in "biufc" else None


def is_variable(x: Any) -> bool:
    """ADCME's `is_variable`: a trainable variable."""
    return bool(getattr(x, "trainable", False)) and isinstance(x, tf.Variable)


def variable(name: str | None, scope: str, **kwargs: Any) -> Any:
    """`tf.get_variable` inside `variable_scope(scope, reuse=AUTO_REUSE)`, as ADCME does."""
    initializer = kwargs.get("initializer")
    if isinstance(initializer, (tf.Tensor, tf.Variable)) and kwargs.get("dtype") is None:
        kwargs["dtype"] = initializer.dtype.base_dtype
    # An empty scope is the current one (its name unchanged), reusing as ADCME does.
    with tf.variable_scope(scope or tf.get_variable_scope(), reuse=tf.AUTO_REUSE):
        return tf.get_variable(name, **kwargs)


def tensor_from(values: Sequence[Any], dims: Sequence[int], numpy_type: Any) -> Any:
    """A tensor of Julia shape `dims` from a column-major list of numbers and scalar tensors."""
    elements = [tf.cast(tf.convert_to_tensor(v), numpy_type) for v in values]
    flat = tf.stack(elements) if elements else tf.zeros([0], numpy_type)
    # Column-major order: the reversed shape in row-major, transposed back.
    return tf.transpose(tf.reshape(flat, list(reversed(dims))))


def _element(ta: Any, i: Any) -> Any:
    """Element `i` (from 1) of TensorArray `ta` as TensorFlow counts it; an integer below 1 is
    out of bounds (the size, which may grow, is known when the graph runs: TensorFlow checks)."""
    position = zero_based(i)
    if isinstance(position, int):
        check_bounds(ta, 1, None, position)
    return position


def tensor_array_read(ta: Any, i: Any) -> Any:
    """`read(ta, i)`: element `i` (from 1) of a TensorArray."""
    return ta.read(_element(ta, i))


def tensor_array_write(ta: Any, i: Any, value: Any) -> Any:
    """`write(ta, i, value)`: the TensorArray with element `i` (from 1) written."""
    if not isinstance(value, (tf.Tensor, tf.Variable)):
        value = tf.convert_to_tensor(value, dtype=ta.dtype)
    return ta.write(_element(ta, i), value)


def hessian(ys: Any, xs: Any, **kwargs: Any) -> Any:
    """ADCME's `hessian` of a scalar `ys` with respect to a vector `xs`."""
    if ys.shape.rank != 0 or xs.shape.rank != 1:
        raise ArgumentValueError(
            "hessian",
            "ys, xs",
            (ys, xs),
            "a scalar and a vector",
            "hessian(sum(x^2), x) with x a vector; reduce ys to a scalar first",
        )
    return tf.hessians(ys, xs, **kwargs)[0]


def hessian_vector(f: Any, xs: Any, v: Any, **kwargs: Any) -> Any:
    """The Hessian of `f` with respect to `xs`, times `v` (without forming the Hessian)."""
    v = tf.convert_to_tensor(v, dtype=xs.dtype.base_dtype)
    return hessian_vector_product(f, [xs], [v], **kwargs)[0]


def jacobian(y: Any, x: Any) -> Any:
    """The Jacobian `J[i, j] = dy[i]/dx[j]` of vectors (TF's parallel-for Jacobian)."""
    if y.shape.rank != 1 or x.shape.rank != 1:
        raise ArgumentValueError(
            "jacobian",
            "y, x",
            (y, x),
            "two vectors",
            "reshape them to vectors first, or use gradients(y, x) for other shapes",
        )
    return tf_jacobian(y, x)


def gradient_magnitude(loss: Any, xs: list[Any]) -> Any:
    """`sqrt(sum of squared gradient norms)` of `loss` over `xs`."""
    return tf.global_norm(tf.gradients(loss, xs))
