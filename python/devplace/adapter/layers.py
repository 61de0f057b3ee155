"""Batch normalisation built from `tf.nn` ops, with its moving-average updates in `UPDATE_OPS`.

`tf.compat.v1.layers.batch_normalization` left with Keras 3, and nothing built into TF fills
`tf.GraphKeys.UPDATE_OPS` any more, so the seeds' "collect the update ops and bind them to the
training op" pattern needs this layer.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from devplace.adapter._tf import tf
from devplace.core.errors import ArgumentValueError

__all__ = ["UPDATE_OPS", "batch_norm", "bn", "with_updates"]

#: The graph collection holding batch-norm moving-average updates (`tf.GraphKeys.UPDATE_OPS`).
UPDATE_OPS: str = tf.GraphKeys.UPDATE_OPS


def _channels(x: Any, axis: int) -> tuple[int, int]:
    """The channel axis of `x` (non-negative) and its size; errors name what is missing."""
    rank = x.shape.rank
    if rank is None or rank < 2:
        raise ArgumentValueError(
            "batch_norm",
            "x",
            x,
            "a tensor with a batch axis and a channel axis (known rank >= 2)",
            "reshape a vector of samples to [batch, 1]",
        )
    if not -rank <= axis < rank:
        raise ArgumentValueError(
            "batch_norm",
            "axis",
            axis,
            f"from {-rank} to {rank - 1} for x of rank {rank}",
            "axis=-1 normalises per last-axis channel",
        )
    channels = x.shape.as_list()[axis]
    if channels is None:
        raise ArgumentValueError(
            "batch_norm",
            "x",
            x,
            f"a tensor with a known size along axis {axis}",
            "give the placeholder a static channel count, e.g. shape [None, 4]",
        )
    return axis % rank, channels


def _register_update(variable: Any, value: Any, decay: Any) -> None:
    """Add `variable -= (variable - value) * decay` to `UPDATE_OPS`."""
    short_name = variable.op.name.rsplit("/", 1)[-1]
    update = tf.assign_sub(variable, (variable - value) * decay, name=f"update_{short_name}")
    tf.add_to_collection(UPDATE_OPS, update.op)


def _statistics(training: Any, batch: tuple[Any, Any], moving: tuple[Any, Any]) -> Any:
    """Batch statistics in training, moving ones otherwise; `training` may be a bool tensor."""
    if isinstance(training, bool):
        return batch if training else moving
    return tf.cond(
        training, lambda: batch, lambda: (tf.identity(moving[0]), tf.identity(moving[1]))
    )


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
    channel_axis, channels = _channels(x, axis)
    if not 0.0 <= momentum < 1.0:
        raise ArgumentValueError(
            "batch_norm", "momentum", momentum, "in [0, 1)", "momentum=0.99 is the usual choice"
        )
    dtype = x.dtype.base_dtype
    with tf.variable_scope(name, default_name="batch_norm"):

        def variable(var_name: str, initializer: Any, trainable: bool = True) -> Any:
            return tf.get_variable(var_name, [channels], dtype, initializer, trainable=trainable)

        beta = variable("beta", tf.zeros_initializer()) if center else None
        gamma = variable("gamma", tf.ones_initializer()) if scale else None
        moving = (
            variable("moving_mean", tf.zeros_initializer(), trainable=False),
            variable("moving_variance", tf.ones_initializer(), trainable=False),
        )
        batch = tf.nn.moments(x, [i for i in range(x.shape.rank) if i != channel_axis])
        decay = tf.constant(1.0 - momentum, dtype, name="decay")
        for moving_value, batch_value in zip(moving, batch, strict=True):
            _register_update(moving_value, batch_value, decay)
        mean, variance = _statistics(training, batch, moving)
        shape = [1] * x.shape.rank
        shape[channel_axis] = channels

        def channel_wise(t: Any) -> Any:
            return None if t is None else tf.reshape(t, shape)

        return tf.nn.batch_normalization(
            x,
            channel_wise(mean),
            channel_wise(variance),
            channel_wise(beta),
            channel_wise(gamma),
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
