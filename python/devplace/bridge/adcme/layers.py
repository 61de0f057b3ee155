"""ADCME's layers (src/layers.jl) for DevPlace.jl: the variables of a fully connected layer, the
per-sample Jacobian of a network, dropout.

`fully_connected` makes its weights and biases as TF1's `tf.contrib.layers.fully_connected` did
(gone from TensorFlow 2), by the same names (`<scope>/fully_connected[_k]/weights`, `biases`;
Glorot-uniform weights, zero biases), so ADCME's `ae(x, dims, scope)` finds its variables again
under `reuse=AUTO_REUSE` and `ae_to_code` reads them from a saved file.
"""

from __future__ import annotations

from typing import Any

from devplace.adapter._tf import tf
from devplace.core.errors import ArgumentValueError

__all__ = ["dropout", "fully_connected", "sample_jacobian"]


def fully_connected(inputs: Any, units: int, scope: str | None = None) -> Any:
    """`inputs @ weights + biases` (before any activation) with new or reused variables."""
    inputs = tf.convert_to_tensor(inputs)
    if inputs.shape.ndims != 2 or inputs.shape[1] is None:
        raise ArgumentValueError(
            "dense", "inputs", inputs, "a matrix with a known number of columns",
            "reshape a vector x into a column: reshape(x, length(x), 1)",
        )  # fmt: skip
    dtype = inputs.dtype.base_dtype
    with tf.variable_scope(scope, default_name="fully_connected"):
        weights = tf.get_variable(
            "weights", [int(inputs.shape[1]), units], dtype, tf.glorot_uniform_initializer()
        )
        biases = tf.get_variable("biases", [units], dtype, tf.zeros_initializer())
    return tf.matmul(inputs, weights) + biases


def sample_jacobian(u: Any, x: Any) -> Any:
    """`du[i, k, j] = ∂u[i, k] / ∂x[i, j]` for a network applied to each row of `x` alone."""
    columns = [tf.gradients(u[:, k], x)[0] for k in range(int(u.shape[1]))]
    return tf.stack(columns, axis=1)


def dropout(x: Any, rate: Any, training: Any) -> Any:
    """Each entry of `x` zeroed with probability `rate` and the rest scaled by 1/(1-rate) when
    `training` (a bool or a boolean tensor), else `x`."""
    x = tf.convert_to_tensor(x)
    if isinstance(training, bool):
        return tf.nn.dropout(x, rate=rate) if training else tf.identity(x)
    return tf.cond(training, lambda: tf.nn.dropout(x, rate=rate), lambda: tf.identity(x))
