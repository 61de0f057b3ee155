"""ADCME's operators that take several TF ops (`julia/DevPlace/src/adcme/ops.jl`): scatter
updates, `vector`, `tril`/`triu`, `solve_batch`, `repeat`, `diff`, `findall`, rolling
statistics, `[x -x]` activations, `map`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from devplace.adapter._tf import tf
from devplace.bridge.adcme.calls import F64, index_vector
from devplace.bridge.julia_semantics import axes
from devplace.core.errors import ArgumentValueError

__all__ = [
    "concat_activation",
    "diff",
    "findall",
    "map_fn",
    "repeat",
    "roll",
    "scatter",
    "scatter2",
    "solve_batch",
    "tril",
    "triu",
    "vector",
]


_SCATTER = {
    "add": tf.tensor_scatter_nd_add,
    "sub": tf.tensor_scatter_nd_sub,
    "update": tf.tensor_scatter_nd_update,
}


def _updates(ref: Any, updates: Any) -> Any:
    return tf.reshape(tf.cast(tf.convert_to_tensor(updates), ref.dtype.base_dtype), [-1])


def scatter(kind: str, ref: Any, index: Any, updates: Any) -> Any:
    """`ref` (a vector) with `ref[index]` added to, subtracted from or replaced by `updates`."""
    ref = tf.convert_to_tensor(ref)
    rows = index_vector(index, ref.shape[0], ref)
    return _SCATTER[kind](ref, tf.reshape(rows, [-1, 1]), _updates(ref, updates))


def scatter2(kind: str, ref: Any, rows: Any, cols: Any, updates: Any) -> Any:
    """As `scatter`, for `ref[rows, cols]` of a matrix; `updates` in row-major order."""
    ref = tf.convert_to_tensor(ref)
    i, j = tf.meshgrid(
        index_vector(rows, ref.shape[0], ref),
        index_vector(cols, ref.shape[1], ref, 2),
        indexing="ij",
    )
    index = tf.stack([tf.reshape(i, [-1]), tf.reshape(j, [-1])], axis=1)
    return _SCATTER[kind](ref, index, _updates(ref, updates))


def tril(x: Any, k: int) -> Any:
    """Julia's `tril(x, k)` on the last two dimensions: entries with `j - i <= k`."""
    x = tf.convert_to_tensor(x)
    if k >= 0:
        return tf.linalg.band_part(x, -1, k)
    return x - tf.linalg.band_part(x, -k - 1, -1)


def triu(x: Any, k: int) -> Any:
    """Julia's `triu(x, k)` on the last two dimensions: entries with `j - i >= k`."""
    x = tf.convert_to_tensor(x)
    if k <= 0:
        return tf.linalg.band_part(x, -k, -1)
    return x - tf.linalg.band_part(x, -1, k - 1)


def solve_batch(a: Any, rhs: Any) -> Any:
    """ADCME's `solve_batch`: row `i` of the result solves `a x = rhs[i, :]` (least squares
    when `a` is tall)."""
    a = tf.cast(tf.convert_to_tensor(a), F64)
    rhs = tf.cast(tf.convert_to_tensor(rhs), F64)
    square = a.shape[0] is not None and a.shape[0] == a.shape[1]
    solve = tf.linalg.solve if square else tf.linalg.lstsq
    return tf.transpose(solve(a, tf.transpose(rhs)))


def repeat(x: Any, i: int, j: int | None) -> Any:
    """ADCME's `repeat(x, i)` and `repeat(x, i, j)` (tiling, as Julia's `repeat`)."""
    x = tf.convert_to_tensor(x)
    rank = x.shape.rank
    if rank not in (0, 1, 2):
        raise ArgumentValueError(
            "repeat", "x", x, "a tensor of rank 0, 1 or 2", "reshape it to a matrix first"
        )
    if rank == 0:
        return tf.fill([i] if j is None else [i, j], x)
    if j is None:
        return tf.tile(x, [i] if rank == 1 else [i, 1])
    return tf.tile(tf.reshape(x, [-1, 1]) if rank == 1 else x, [i, j])


def vector(index: Any, values: Any, n: Any) -> Any:
    """ADCME's `vector(i, v, n)`: a vector of length `n`, zero except `V[i] = v`."""
    rows = index_vector(index)
    return tf.scatter_nd(tf.reshape(rows, [-1, 1]), values, tf.reshape(tf.cast(n, tf.int64), [1]))


def diff(x: Any, dims: Any) -> Any:
    """Julia's `diff`: differences of neighbours along `dims` (a vector's only one if None)."""
    x = tf.convert_to_tensor(x)
    if dims is None and x.shape.rank != 1:
        raise ArgumentValueError("diff", "dims", None, "given for a matrix", "diff(A; dims=1)")
    axis = 0 if dims is None else axes("diff", dims, x.shape.rank)
    n = tf.shape(x)[axis]
    return tf.gather(x, tf.range(1, n), axis=axis) - tf.gather(x, tf.range(0, n - 1), axis=axis)


def findall(x: Any) -> Any:
    """ADCME's `findall` of a boolean vector (indices) or matrix (rows of index pairs), from 1."""
    where = tf.where(x) + 1
    return where[:, 0] if x.shape.rank == 1 else where


def roll(u: Any, window: int, how: str) -> Any:
    """Rolling `sum`, `mean`, `var` or `std` of a vector over `window` consecutive entries."""
    frames = tf.signal.frame(tf.cast(tf.convert_to_tensor(u), F64), window, 1)
    if how == "sum":
        return tf.reduce_sum(frames, axis=1)
    mean = tf.reduce_mean(frames, axis=1)
    if how == "mean":
        return mean
    var = tf.reduce_sum((frames - mean[:, None]) ** 2, axis=1) / (window - 1)
    return var if how == "var" else tf.sqrt(var)


def concat_activation(x: Any) -> Any:
    """`[x -x]` as Julia's `hcat` (a vector becomes two columns)."""
    x = tf.convert_to_tensor(x)
    if x.shape.rank == 1:
        return tf.stack([x, -x], axis=1)
    return tf.concat([x, -x], axis=1)


def map_fn(fn: Callable[..., Any], elems: Any, **kwargs: Any) -> Any:
    """ADCME's `map`: `tf.map_fn` over the first dimension of tensors, else a plain map."""
    tensors = elems if isinstance(elems, list) else [elems]
    if not all(isinstance(e, (tf.Tensor, tf.Variable)) for e in tensors):
        return [fn(e) for e in elems]
    return tf.map_fn(fn, elems, **kwargs)
