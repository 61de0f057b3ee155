"""ADCME's src/extra.jl for DevPlace.jl: functions with their own gradients, and a sleeping op.

`register(forward, backward)` is ADCME's `tf.custom_gradient` over two Julia functions (called
back while the graph is built and while its gradients are); `sleep_for` stands in for ADCME's
compiled `sleep_for` operator.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from devplace.adapter._tf import tf

__all__ = ["register", "sleep_for"]

F64 = tf.float64
FLOATS = (tf.float32, tf.float64)


def register(forward: Callable[..., Any], backward: Callable[..., Any], multiple: bool) -> Any:
    """A function of tensors: `forward(*args)`, whose gradients are `backward(dy, y, *args)`
    (one gradient per argument, `None` for an input that takes none); with `multiple`, forward
    gives several outputs and backward takes the top gradients of the float ones, then every
    output, then the arguments."""

    @tf.custom_gradient
    def function(*args: Any) -> Any:
        outputs = forward(*args)

        def gradient(*dys: Any) -> Any:
            if not multiple:
                return backward(dys[0], outputs, *args)
            floats = [dy for dy in dys if dy is not None and dy.dtype in FLOATS]
            return backward(*floats, *outputs, *args)

        return outputs, gradient

    return function


def sleep_for(seconds: Any) -> Any:
    """An op that sleeps `seconds` (a float64 scalar tensor) when run, and gives them back."""

    def sleep(t: Any) -> Any:
        time.sleep(max(0.0, float(t)))
        return t

    with tf.device("/device:CPU:*"):  # py_func has CPU kernels only
        out = tf.py_func(sleep, [tf.cast(seconds, F64)], F64, stateful=True)
    out.set_shape([])
    return out
