"""Batch normalisation built from `tf.nn` ops, with its moving-average updates in `UPDATE_OPS`.

`tf.compat.v1.layers.batch_normalization` left with Keras 3, and nothing built into TF fills
`tf.GraphKeys.UPDATE_OPS` any more, so the seeds' "collect the update ops and bind them to the
training op" pattern needs this layer.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from devplace._tf import tf

__all__ = ["UPDATE_OPS", "batch_norm", "bn", "with_updates"]

#: The graph collection holding batch-norm moving-average updates (`tf.GraphKeys.UPDATE_OPS`).
UPDATE_OPS: str = tf.GraphKeys.UPDATE_OPS


def batch_norm(
    x: Any,
    training: Any = True,
    momentum: float = 0.99,
    epsilon: float = 1e-3,
    center: bool = True,
    scale: bool = True,
    axis: int = -1,
    name: str | None = None,
) -> Any:
    """Normalise `x` over every axis but `axis`, learning `beta`/`gamma` per channel.

    In training (`training` true, or a boolean tensor that is true when run) the batch
    statistics are used and two updates, moving mean and moving variance, are added to
    `UPDATE_OPS`; they run only when fetched or bound with `with_updates`. Otherwise the
    moving statistics are used.
    """
    x = tf.convert_to_tensor(x)
    rank = x.shape.rank
    if rank is None:
        raise ValueError(f"batch_norm: {x.name} needs a known rank")
    if rank < 2:
        raise ValueError(
            f"batch_norm: {x.name} has shape {x.shape}; it needs a batch axis and a channel "
            "axis (rank >= 2). Hint: reshape a vector of samples to [batch, 1]"
        )
    if not -rank <= axis < rank:
        raise ValueError(f"batch_norm: axis {axis} is out of range for {x.name} of rank {rank}")
    channel_axis = axis % rank
    channels = x.shape.as_list()[channel_axis]
    if channels is None:
        raise ValueError(f"batch_norm: {x.name} needs a known size along axis {axis}")
    if not 0.0 <= momentum < 1.0:
        raise ValueError(f"batch_norm: momentum must be in [0, 1), got {momentum!r}")
    reduce_axes = [i for i in range(rank) if i != channel_axis]
    dtype = x.dtype.base_dtype
    with tf.variable_scope(name, default_name="batch_norm"):
        beta = (
            tf.get_variable("beta", [channels], dtype, tf.zeros_initializer()) if center else None
        )
        gamma = (
            tf.get_variable("gamma", [channels], dtype, tf.ones_initializer()) if scale else None
        )
        moving_mean = tf.get_variable(
            "moving_mean", [channels], dtype, tf.zeros_initializer(), trainable=False
        )
        moving_variance = tf.get_variable(
            "moving_variance", [channels], dtype, tf.ones_initializer(), trainable=False
        )
        shape = [1] * rank
        shape[channel_axis] = channels
        batch_mean, batch_variance = tf.nn.moments(x, reduce_axes)
        decay = tf.constant(1.0 - momentum, dtype, name="decay")
        for variable, value in ((moving_mean, batch_mean), (moving_variance, batch_variance)):
            short_name = variable.op.name.rsplit("/", 1)[-1]
            update = tf.assign_sub(
                variable, (variable - value) * decay, name=f"update_{short_name}"
            )
            tf.add_to_collection(UPDATE_OPS, update.op)
        if isinstance(training, bool):
            mean, variance = (
                (batch_mean, batch_variance) if training else (moving_mean, moving_variance)
            )
        else:
            mean, variance = tf.cond(
                training,
                lambda: (batch_mean, batch_variance),
                lambda: (tf.identity(moving_mean), tf.identity(moving_variance)),
            )
        return tf.nn.batch_normalization(
            x,
            tf.reshape(mean, shape),
            tf.reshape(variance, shape),
            None if beta is None else tf.reshape(beta, shape),
            None if gamma is None else tf.reshape(gamma, shape),
            epsilon,
        )


bn = batch_norm


def with_updates(train_op: Any, update_ops: Iterable[Any] | None = None) -> Any:
    """An op that runs `train_op` and every update op (default: all of `UPDATE_OPS`).

    Use it in place of the train op so the moving averages are never forgotten; call it inside
    a device scope (e.g. `dp.cpu()`) to place the grouping op there.
    """
    updates = list(tf.get_collection(UPDATE_OPS) if update_ops is None else update_ops)
    with tf.control_dependencies(updates):
        return tf.group(train_op, name="train_with_updates")
