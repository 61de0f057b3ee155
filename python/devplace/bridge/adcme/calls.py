"""How ADCME's rules take what DevPlace.jl sends (`julia/DevPlace/src/adcme/calls.jl`).

Indices arrive from Julia 0-based when they are Julia values (`scatter_index` subtracts one
there) and 1-based when they are tensors (subtracted here, in the graph).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from devplace.adapter._tf import tf
from devplace.core.errors import ArgumentValueError

__all__ = ["F64", "I64", "as_f64", "zero_based"]

F64 = tf.float64
I64 = tf.int64


def as_f64(x: Any) -> Any:
    """`x` as a float64 tensor: a tensor cast, anything else converted at float64 (a Python
    float converted first would be rounded to float32)."""
    if isinstance(x, (tf.Tensor, tf.Variable)):
        return tf.cast(x, F64)
    return tf.convert_to_tensor(np.asarray(x, dtype=np.float64))


def zero_based(index: Any, length: Any = None) -> Any:
    """Julia indices as a 0-based int64 vector: a Julia vector arrives 0-based, a tensor
    1-based; None (Julia's `:`) means all `length` of them."""
    if index is None:
        if length is None:
            raise ArgumentValueError(
                "scatter", "index", ":", "used on a dimension of known size", "set_shape first"
            )
        return tf.range(length, dtype=I64)
    if isinstance(index, (tf.Tensor, tf.Variable)):
        return tf.reshape(tf.cast(index, I64) - 1, [-1])
    return tf.constant(np.asarray(index, dtype=np.int64).reshape(-1))
