"""Julia's rules for operators and indexing, applied to Python objects (used by DevPlace.jl).

Julia indexes from 1 and includes a range's end; Python counts from 0 and excludes it. `*` of
two matrices is a matrix product in Julia, elementwise `.*` is broadcasting. These functions take
Julia's meaning and call the Python/TensorFlow operation that has it.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from typing import Any

from devplace._tf import tf

__all__ = ["BINARY", "broadcast", "getindex", "lastindex", "mul", "setindex"]

#: Julia binary operators applied elementwise (broadcast) as Python operators.
BINARY: dict[str, Any] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "^": operator.pow,
    "%": operator.mod,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "max": tf.maximum,
    "min": tf.minimum,
}


def _rank(x: Any) -> int | None:
    shape = getattr(x, "shape", None)
    if shape is None:
        return 0
    try:
        return len(shape)
    except (TypeError, ValueError):  # TensorShape of unknown rank
        return None


def mul(a: Any, b: Any) -> Any:
    """Julia's `a * b`: a matrix product when both sides are matrices (or matrix times vector)."""
    ra, rb = _rank(a), _rank(b)
    if ra == 2 and rb == 2:
        return tf.matmul(a, b)
    if ra == 2 and rb == 1:
        return tf.linalg.matvec(a, b)
    return a * b


def broadcast(op: str, *args: Any) -> Any:
    """Julia's `a .op b` (elementwise)."""
    try:
        fn = BINARY[op]
    except KeyError:
        raise ValueError(f"no elementwise Python operation for Julia's .{op}") from None
    return fn(*args)


def _index(spec: tuple[Any, ...], position: int) -> Any:
    kind = spec[0]
    if kind == "i":
        i = spec[1]
        if i < 1:
            raise IndexError(f"index {i} at position {position}: Julia indices start at 1")
        return i - 1
    if kind == "r":
        start, stop, step = spec[1:]
        if step == 0:
            raise ValueError("range step cannot be zero")
        if start < 1 or stop < 0:
            raise IndexError(f"range {start}:{step}:{stop} at position {position} starts below 1")
        if step > 0:
            return slice(start - 1, stop, step)
        return slice(start - 1, stop - 2 if stop >= 2 else None, step)
    if kind == "c":
        return slice(None)
    if kind == "k":
        return spec[1]
    raise ValueError(f"unknown index kind {kind!r}")


def _key(obj: Any, specs: tuple[tuple[Any, ...], ...]) -> Any:
    if isinstance(obj, Mapping):
        keys = tuple(s[1] if s[0] in ("i", "k") else slice(None) for s in specs)
    else:
        keys = tuple(_index(s, n + 1) for n, s in enumerate(specs))
    return keys[0] if len(keys) == 1 else keys


def getindex(obj: Any, specs: tuple[tuple[Any, ...], ...]) -> Any:
    """Julia's `obj[i, j, ...]`; indices come as ("i", n), ("r", a, b, s), ("c",), ("k", key)."""
    return obj[_key(obj, specs)]


def setindex(obj: Any, value: Any, specs: tuple[tuple[Any, ...], ...]) -> None:
    """Julia's `obj[i...] = value` (for mutable Python containers)."""
    obj[_key(obj, specs)] = value


def lastindex(obj: Any, dim: int, ndims: int) -> int:
    """Julia's `end` inside `obj[...]`: the length of dimension `dim` (1-based) of `ndims`."""
    shape = getattr(obj, "shape", None)
    if shape is not None and not isinstance(obj, Mapping):
        dims = list(shape)
        if ndims == 1 and len(dims) > 1:
            raise IndexError("`end` with one index into a multi-dimensional tensor is ambiguous")
        d = dims[dim - 1]
        d = getattr(d, "value", d)
        if d is None:
            raise ValueError(f"`end` needs a static size, but dimension {dim} of {obj} is unknown")
        return int(d)
    return len(obj)
