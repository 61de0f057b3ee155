"""ADCME's control flow and graph look-ups (`julia/DevPlace/src/adcme/core.jl`): `while_loop`,
`if_else`, `tensor(name)`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from devplace.adapter._tf import tf

__all__ = [
    "if_else",
    "tensor_by_name",
    "while_loop",
]


def tensor_by_name(name: str) -> Any:
    """ADCME's `tensor(name)`: the tensor of that name in the default graph."""
    return tf.get_default_graph().get_tensor_by_name(name)


def while_loop(
    condition: Callable[..., Any], body: Callable[..., Any], loop_vars: list[Any], **kwargs: Any
) -> Any:
    """`tf.while_loop` whose body may return a tuple, or one value, where the loop variables
    are a list; the final values are a list too, even of one."""

    def as_list(*loop_values: Any) -> list[Any]:
        out = body(*loop_values)
        return list(out) if isinstance(out, (list, tuple)) else [out]

    return tf.while_loop(
        condition, as_list, loop_vars=loop_vars, return_same_structure=True, **kwargs
    )


def if_else(condition: Any, fn1: Any, fn2: Any, **kwargs: Any) -> Any:
    """ADCME's `if_else`: `tf.cond` for a scalar boolean, `tf.where` for a boolean array."""
    condition = tf.convert_to_tensor(condition)
    if condition.shape.rank == 0:
        return tf.cond(
            condition,
            fn1 if callable(fn1) else lambda: fn1,
            fn2 if callable(fn2) else lambda: fn2,
            **kwargs,
        )
    return tf.compat.v2.where(condition, tf.convert_to_tensor(fn1), tf.convert_to_tensor(fn2))
