"""How ADCME's rules take what DevPlace.jl sends (`julia/DevPlace/src/adcme/calls.jl`).

Indices arrive from Julia as Julia writes them (from 1, values or tensors) and become
TensorFlow's by `julia_semantics.zero_based`, the one place that rule is written.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from devplace.adapter._tf import tf
from devplace.bridge.julia_semantics import check_bounds, zero_based
from devplace.core.errors import ArgumentValueError

__all__ = ["F64", "I64", "as_f64", "index_vector"]

F64 = tf.float64
I64 = tf.int64


def as_f64(x: Any) -> Any:
    """`x` as a float64 tensor: a tensor cast, anything else converted at float64 (a Python
    float converted first would be rounded to float32)."""
    if isinstance(x, (tf.Tensor, tf.Variable)):
        return tf.cast(x, F64)
    return tf.convert_to_tensor(np.asarray(x, dtype=np.float64))


def index_vector(index: Any, length: Any = None, of: Any = None, dim: int = 1) -> Any:
    """Julia indices (from 1: an integer, a vector, a Bool mask or a tensor of them) as a
    0-based int64 vector; None (Julia's `:`) means all `length` of them. Julia values are
    checked against `length` (dimension `dim` of `of`) where known: an IndexError."""
    if index is None:
        if length is None:
            raise ArgumentValueError(
                "scatter", "index", ":", "used on a dimension of known size", "set_shape first"
            )
        return tf.range(length, dtype=I64)
    positions = zero_based(index)
    if isinstance(positions, (tf.Tensor, tf.Variable)):
        return tf.reshape(tf.cast(positions, I64), [-1])
    size = length if isinstance(length, int) else getattr(length, "value", None)
    mask = np.asarray(index).dtype == bool
    check_bounds(of, dim, size, positions, ("m", np.asarray(index)) if mask else ("v",))
    return tf.constant(np.asarray(positions, dtype=np.int64).reshape(-1))
