"""ADCME's sparse matrices (`julia/DevPlace/src/adcme/sparse.jl`), built from TensorFlow ops.

A sparse matrix is a `tf.SparseTensor` of float64 values with row-major sorted indices.
Products, sums, concatenation, indexing and block updates are gathers, sorts and segment sums,
so they run on any device and TensorFlow differentiates them. Solving needs a sparse
factorization, which TensorFlow lacks: it runs scipy's SuperLU in this (the host) process
through `py_func`, on a CPU, with its gradient (`A x = b` gives `db = A^-T g` and
`dA[i, j] = -(A^-T g)[i] x[j]`); the factors wait in `factorizations`, the rows of
`SparseAssembler`s in `assemblers`. Indices arrive as `calls.index_vector` takes them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from devplace.adapter._tf import tf
from devplace.bridge.adcme import factorizations
from devplace.bridge.adcme.assemblers import ASSEMBLERS
from devplace.bridge.adcme.calls import F64, I64, index_vector
from devplace.bridge.adcme.factorizations import DEFAULT_CACHE, FACTORIZATIONS
from devplace.bridge.julia_semantics import axes
from devplace.core.errors import ArgumentValueError

__all__ = [
    "METHODS",
    "add",
    "add_dense",
    "assembler",
    "assembler_add",
    "assembler_take",
    "compress",
    "concat",
    "dense_matmul",
    "diagonals",
    "dims",
    "factorize",
    "factorized_solve",
    "find",
    "from_dense",
    "from_ijv",
    "from_indices",
    "matmul",
    "matmul_dense",
    "parts",
    "reduce_sum",
    "reshape",
    "scale",
    "scatter",
    "select",
    "solve",
    "static_dims",
    "to_dense",
    "transpose",
    "trisolve",
    "zero_out_row",
]

#: ADCME's names of sparse solvers; each is scipy's SuperLU here (one answer for a regular A).
METHODS = ("auto", "SparseLU", "SparseQR", "SimplicialLDLT", "SimplicialLLT")

# The host's CPU, its index (and job, task) left to the enclosing device scope: scipy runs in
# this process, and TensorFlow's py_func has CPU kernels only.
HOST_CPU = "/device:CPU:*"


def _host_op(fn: Any, inputs: list[Any], out: Any, stateful: bool = True) -> Any:
    """`fn` of numpy values run by this process when the graph runs, on a CPU."""
    with tf.device(HOST_CPU):
        return tf.py_func(fn, inputs, out, stateful=stateful)


def _size(x: Any) -> Any:
    """A size as an int (static) or an int64 scalar tensor."""
    if isinstance(x, (tf.Tensor, tf.Variable)):
        return tf.cast(x, I64)
    return int(x)


def _sparse(indices: Any, values: Any, m: Any, n: Any) -> Any:
    if isinstance(m, int) and isinstance(n, int):
        shape = tf.constant([m, n], I64)
    else:
        shape = tf.stack([tf.cast(m, I64), tf.cast(n, I64)])
    values = tf.cast(tf.convert_to_tensor(values), F64)
    return tf.SparseTensor(tf.reshape(tf.cast(indices, I64), [-1, 2]), values, shape)


def dims(sp: Any) -> tuple[Any, Any]:
    """The matrix's size: ints where known when the graph is built, else int64 scalars."""
    static = sp.shape.as_list() if sp.shape.rank == 2 else [None, None]
    m = static[0] if static[0] is not None else sp.dense_shape[0]
    n = static[1] if static[1] is not None else sp.dense_shape[1]
    return m, n


def static_dims(sp: Any) -> tuple[int | None, int | None]:
    """The size known when the graph is built (None where it is not)."""
    m, n = dims(sp)
    return (m if isinstance(m, int) else None, n if isinstance(n, int) else None)


def from_ijv(rows: Any, cols: Any, values: Any, m: Any, n: Any) -> Any:
    """ADCME's `SparseTensor(ii, jj, vv, m, n)`: entries in row-major order, duplicates kept."""
    indices = tf.stack([index_vector(rows), index_vector(cols)], axis=1)
    return tf.sparse.reorder(_sparse(indices, values, _size(m), _size(n)))


def from_indices(indices: Any, values: Any, m: Any, n: Any, base: int) -> Any:
    """A sparse matrix from an nnz×2 index matrix counted from `base` (0 or 1)."""
    indices = tf.reshape(tf.cast(tf.convert_to_tensor(indices), I64), [-1, 2]) - base
    return tf.sparse.reorder(_sparse(indices, values, _size(m), _size(n)))


def from_dense(x: Any) -> Any:
    """ADCME's `dense_to_sparse` of a tensor: its nonzero entries."""
    x = tf.cast(tf.convert_to_tensor(x), F64)
    if x.shape.rank != 2:
        raise ArgumentValueError(
            "dense_to_sparse", "o", x, "a matrix", "reshape it to a matrix first"
        )
    idx = tf.where(tf.not_equal(x, 0))
    m, n = (
        d if d is not None else tf.shape(x, out_type=I64)[i]
        for i, d in enumerate(x.shape.as_list())
    )
    return _sparse(idx, tf.gather_nd(x, idx), m, n)


def diagonals(n: int, offsets: Sequence[int], values: Sequence[Any]) -> Any:
    """ADCME's `spdiag(n, k1 => v1, ...)`: an n×n matrix with vector `v` on diagonal `k`."""
    rows, cols = [], []
    for k, v in zip(offsets, values, strict=True):
        length = n - abs(k)
        if length <= 0:
            raise ArgumentValueError(
                "spdiag", "offset", k, f"between {1 - n} and {n - 1}", f"spdiag({n}, 0 => v)"
            )
        static = tf.convert_to_tensor(v).shape
        if static.rank != 1 or static.as_list()[0] not in (None, length):
            raise ArgumentValueError(
                "spdiag", f"the vector for offset {k}", v, f"a vector of length {length}", ""
            )
        first = np.arange(length, dtype=np.int64)
        rows.append(first - min(k, 0))
        cols.append(first + max(k, 0))
    if not rows:
        return _sparse(tf.zeros([0, 2], I64), tf.zeros([0], F64), n, n)
    indices = np.stack([np.concatenate(rows), np.concatenate(cols)], axis=1)
    flat = tf.concat([tf.cast(tf.convert_to_tensor(v), F64) for v in values], axis=0)
    return tf.sparse.reorder(_sparse(indices, flat, n, n))


def parts(sp: Any) -> list[Any]:
    """The indices (0-based), values and size to fetch, from which Julia makes a SparseMatrixCSC."""
    return [sp.indices, sp.values, sp.dense_shape]


def find(sp: Any) -> list[Any]:
    """ADCME's `find`: rows and columns (from 1) and values, in row-major order."""
    return [sp.indices[:, 0] + 1, sp.indices[:, 1] + 1, sp.values]


def to_dense(sp: Any) -> Any:
    """The dense matrix (duplicate entries added)."""
    out = tf.scatter_nd(sp.indices, sp.values, sp.dense_shape)
    out.set_shape(static_dims(sp))
    return out


def compress(sp: Any) -> Any:
    """ADCME's `compress`: entries at one place added together; indices sorted row-major."""
    m, n = dims(sp)
    key = sp.indices[:, 0] * tf.cast(n, I64) + sp.indices[:, 1]
    order = tf.argsort(key, stable=True)
    unique, position = tf.unique(tf.gather(key, order), out_idx=I64)
    values = tf.math.unsorted_segment_sum(
        tf.gather(sp.values, order), position, tf.shape(unique, out_type=I64)[0]
    )
    n64 = tf.cast(n, I64)
    return _sparse(tf.stack([unique // n64, unique % n64], axis=1), values, m, n)


def _check_same_size(fname: str, a: Any, b: tuple[Any, ...]) -> None:
    known_a, known_b = static_dims(a), tuple(b)
    pairs = zip(known_a, known_b, strict=True)
    if any(x is not None and y is not None and x != y for x, y in pairs):
        raise ArgumentValueError(
            fname, "sizes", (known_a, known_b), "equal sizes", "both operands must be m×n"
        )


def add(a: Any, b: Any) -> Any:
    """The sum of two sparse matrices of one size (a sparse matrix)."""
    _check_same_size("+", a, static_dims(b))
    m, n = dims(a)
    indices = tf.concat([a.indices, b.indices], axis=0)
    values = tf.concat([a.values, tf.cast(b.values, F64)], axis=0)
    return compress(_sparse(indices, values, m, n))


def add_dense(sp: Any, x: Any) -> Any:
    """The sum of a sparse and a dense matrix of one size (a dense matrix)."""
    x = tf.cast(tf.convert_to_tensor(x), F64)
    _check_same_size("+", sp, tuple(x.shape.as_list()) if x.shape.rank == 2 else (0, 0))
    return tf.tensor_scatter_nd_add(x, sp.indices, sp.values)


def scale(sp: Any, c: Any) -> Any:
    """`c * sp` for a scalar `c` (a number or a scalar tensor)."""
    m, n = dims(sp)
    return _sparse(sp.indices, tf.cast(c, F64) * sp.values, m, n)


def transpose(sp: Any) -> Any:
    """The transpose, indices in row-major order."""
    return tf.sparse.transpose(sp)


def matmul_dense(sp: Any, x: Any) -> Any:
    """`sp * x` for a dense matrix or vector `x` (a dense result)."""
    x = tf.cast(tf.convert_to_tensor(x), F64)
    if x.shape.rank == 1:
        return tf.sparse.sparse_dense_matmul(sp, x[:, None])[:, 0]
    return tf.sparse.sparse_dense_matmul(sp, x)


def dense_matmul(x: Any, sp: Any) -> Any:
    """`x * sp` for a dense matrix `x`: `(sp' x')'`."""
    x = tf.cast(tf.convert_to_tensor(x), F64)
    return tf.transpose(tf.sparse.sparse_dense_matmul(sp, x, adjoint_a=True, adjoint_b=True))


def matmul(a: Any, b: Any) -> Any:
    """The product of two sparse matrices, a sparse matrix: every entry `a[i, k]` meets every
    entry `b[k, j]` of its row `k` (b's entries grouped by row), products at one place added."""
    (m, k1), (k2, n) = dims(a), dims(b)
    if isinstance(k1, int) and isinstance(k2, int) and k1 != k2:
        raise ArgumentValueError(
            "*", "sizes", ((m, k1), (k2, n)), "a's columns equal to b's rows", "check the sizes"
        )
    order = tf.argsort(b.indices[:, 0], stable=True)
    b_rows, b_cols = tf.gather(b.indices[:, 0], order), tf.gather(b.indices[:, 1], order)
    b_values = tf.gather(b.values, order)
    per_row = tf.math.unsorted_segment_sum(tf.ones_like(b_rows), b_rows, tf.cast(k2, I64))
    first = tf.cumsum(per_row, exclusive=True)
    a_cols = a.indices[:, 1]
    meets = tf.gather(per_row, a_cols)
    which_a = tf.repeat(tf.range(tf.shape(a_cols, out_type=I64)[0]), meets)
    within = tf.range(tf.reduce_sum(meets)) - tf.gather(tf.cumsum(meets, exclusive=True), which_a)
    which_b = tf.gather(tf.gather(first, a_cols), which_a) + within
    indices = tf.stack([tf.gather(a.indices[:, 0], which_a), tf.gather(b_cols, which_b)], axis=1)
    values = tf.gather(a.values, which_a) * tf.gather(b_values, which_b)
    return compress(_sparse(indices, values, m, n))


def concat(axis: int, sps: Sequence[Any]) -> Any:
    """ADCME's `vcat` (axis 0) and `hcat` (axis 1) of sparse matrices."""
    return tf.sparse.reorder(tf.sparse.concat(axis, list(sps)))


def _selector(index: Any, size: Any, rows: bool) -> Any:
    """The 0/1 matrix picking `index` as rows (p×size) or as columns (size×p) by product."""
    picked = index_vector(index)
    p = picked.shape.as_list()[0]
    p = tf.shape(picked, out_type=I64)[0] if p is None else p
    pos = tf.range(tf.cast(p, I64))
    pairs = tf.stack([pos, picked] if rows else [picked, pos], axis=1)
    ones = tf.ones_like(picked, dtype=F64)
    return tf.sparse.reorder(_sparse(pairs, ones, *((p, size) if rows else (size, p))))


def select(sp: Any, rows: Any, cols: Any) -> Any:
    """ADCME's `A[rows, cols]` (None for `:`), a sparse matrix: rows and columns picked in the
    order given, repeats included, as products with 0/1 matrices."""
    m, n = dims(sp)
    out = sp
    if rows is not None:
        out = matmul(_selector(rows, m, True), out)
    if cols is not None:
        out = matmul(out, _selector(cols, n, False))
    return out


def _member(index: Any, size: Any, of: Any) -> Any:
    """Whether each of `of` (0-based) is among `index`."""
    hits = tf.scatter_nd(index[:, None], tf.ones_like(index), tf.reshape(tf.cast(size, I64), [1]))
    return tf.gather(hits, of) > 0


def scatter(kind: str, a: Any, rows: Any, cols: Any, b: Any) -> Any:
    """ADCME's `scatter_update(A, rows, cols, B)` (`A[rows, cols] = B`) and `scatter_add`
    (`A[rows, cols] += B`) of sparse matrices, sparse results."""
    m, n = dims(a)
    rows = index_vector(rows, m, a)
    cols = index_vector(cols, n, a, 2)
    placed = tf.stack([tf.gather(rows, b.indices[:, 0]), tf.gather(cols, b.indices[:, 1])], axis=1)
    kept_indices, kept_values = a.indices, a.values
    if kind == "update":
        inside = _member(rows, m, a.indices[:, 0]) & _member(cols, n, a.indices[:, 1])
        kept_indices = tf.boolean_mask(a.indices, ~inside)
        kept_values = tf.boolean_mask(a.values, ~inside)
    indices = tf.concat([kept_indices, placed], axis=0)
    values = tf.concat([kept_values, tf.cast(b.values, F64)], axis=0)
    return compress(_sparse(indices, values, m, n))


def zero_out_row(sp: Any, rows: Any) -> Any:
    """ADCME's `zero_out_row`: the matrix without its entries in `rows`."""
    m, n = dims(sp)
    drop = _member(index_vector(rows), m, sp.indices[:, 0])
    return _sparse(tf.boolean_mask(sp.indices, ~drop), tf.boolean_mask(sp.values, ~drop), m, n)


def reduce_sum(sp: Any, dims_: Any) -> Any:
    """ADCME's `sum(A)` (a scalar), `sum(A; dims=1)` (column sums), `sum(A; dims=2)` (row sums)."""
    if dims_ is None:
        return tf.reduce_sum(sp.values)
    axis = axes("sum", dims_, 2)
    if not isinstance(axis, int):
        raise ArgumentValueError("sum", "dims", dims_, "1 or 2", "sum(A; dims=1)")
    size = dims(sp)[1 - axis]
    return tf.math.unsorted_segment_sum(sp.values, sp.indices[:, 1 - axis], size)


def reshape(sp: Any, shape: Sequence[int]) -> Any:
    """`tf.sparse.reshape` (row-major)."""
    return tf.sparse.reshape(sp, list(shape))


# --- solving: scipy's SuperLU in the host, with gradients --------------------------------


def _values_gradient(indices: Any, lam: Any, x: Any) -> Any:
    """`-(A^-T g)[rows] .* x[cols]`, added over rows of right-hand sides."""
    rows, cols = indices[:, 0], indices[:, 1]
    if x.shape.rank == 1:
        return -tf.gather(lam, rows) * tf.gather(x, cols)
    return -tf.reduce_sum(tf.gather(lam, rows, axis=1) * tf.gather(x, cols, axis=1), axis=0)


def _check_rhs(fname: str, sp: Any, rhs: Any) -> Any:
    rhs = tf.cast(tf.convert_to_tensor(rhs), F64)
    rank = rhs.shape.rank
    m = static_dims(sp)[0]
    length = None if rank not in (1, 2) else rhs.shape.as_list()[rank - 1]
    if rank not in (1, 2) or (m is not None and length is not None and length != m):
        raise ArgumentValueError(
            fname,
            "rhs",
            rhs,
            f"a vector of length {m} or a matrix with {m} columns (rows of right-hand sides)",
            "A \\ b with b = A * x",
        )
    return rhs


def solve(sp: Any, rhs: Any, method: str) -> Any:
    """ADCME's `A \\ b`: `x` with `A x = b` for a square `A`, the least squares solution for a
    tall one (minimum norm for a wide one); `b` a vector, or a matrix whose rows are
    right-hand sides (the rows of the result solve each)."""
    if method not in METHODS:
        raise ArgumentValueError("\\", "method", method, f"one of {', '.join(METHODS)}", "A \\ b")
    rhs = _check_rhs("\\", sp, rhs)
    m, n = static_dims(sp)
    if m is not None and n is not None and m != n:
        return _least_squares(sp, rhs, tall=m > n)
    return _square_solve(sp, rhs)


def _square_solve(sp: Any, rhs: Any) -> Any:
    """`A \\ b` through A's LU factors, which its gradient's adjoint solve uses again."""
    return factorized_solve(sp, factorize(sp), rhs)


def _least_squares(sp: Any, rhs: Any, tall: bool) -> Any:
    """Normal equations: `(A'A) \\ (A'b)` for a tall `A`, `A' ((A A') \\ b)` for a wide one."""
    at = transpose(sp)
    columns = tf.transpose(rhs) if rhs.shape.rank == 2 else rhs

    def rows_of(x: Any) -> Any:
        return tf.transpose(x) if rhs.shape.rank == 2 else x

    if tall:
        return _square_solve(matmul(at, sp), rows_of(matmul_dense(at, columns)))
    y = _square_solve(matmul(sp, at), rhs)
    return rows_of(matmul_dense(at, rows_of(y)))


def factorize(sp: Any, max_cache_size: int | None = None) -> Any:
    """ADCME's `factorize`: an int64 handle to `sp`'s LU factors, made each time it runs; at most
    `max_cache_size` factorize ops keep theirs (ADCME's `DEFAULT_CACHE` when None)."""
    op = FACTORIZATIONS.number()
    limit = DEFAULT_CACHE if max_cache_size is None else max_cache_size

    def run(indices: np.ndarray, values: np.ndarray, shape: np.ndarray) -> np.int64:
        return np.int64(FACTORIZATIONS.put(op, factorizations.lu(indices, values, shape), limit))

    handle = _host_op(run, [sp.indices, sp.values, sp.dense_shape], I64)
    handle.set_shape([])
    return handle  # an integer: no gradient flows through it


def _factored_solve(handle: Any, rhs: Any, trans: bool) -> Any:
    def run(key: np.int64, b: np.ndarray) -> np.ndarray:
        return factorizations.solve(FACTORIZATIONS.get(int(key)), b, trans)

    out = _host_op(run, [handle, rhs], F64, stateful=False)
    out.set_shape(rhs.shape)
    return out


def factorized_solve(sp: Any, handle: Any, rhs: Any) -> Any:
    """ADCME's `solve(factorize(A), b)`: `A \\ b` with `A`'s factors, with gradients."""
    rhs = _check_rhs("solve", sp, rhs)
    indices = sp.indices

    @tf.custom_gradient
    def solved(values: Any, b: Any) -> Any:
        x = _factored_solve(handle, b, trans=False)

        def grad(g: Any) -> tuple[Any, Any]:
            # With colocated gradients, TensorFlow would put this host op with the solve's
            # identity (on a GPU under a GPU scope): it goes with the factorization instead.
            with tf.get_default_graph().colocate_with(handle.op, ignore_existing=True):
                lam = _factored_solve(handle, g, trans=True)
            return _values_gradient(indices, lam, x), lam

        return x, grad

    return solved(sp.values, rhs)


def trisolve(a: Any, b: Any, c: Any, d: Any) -> Any:
    """ADCME's `trisolve`: `x` with `a[i] x[i-1] + b[i] x[i] + c[i] x[i+1] = d[i]` (`a` and `c`
    one shorter than `b`), TensorFlow's tridiagonal solver with partial pivoting."""
    a, b, c, d = (tf.cast(tf.convert_to_tensor(v), F64) for v in (a, b, c, d))
    lengths = [v.shape.as_list()[0] if v.shape.rank == 1 else -1 for v in (a, b, c, d)]
    na, nb, nc, nd = lengths
    if -1 in lengths or (None not in lengths and not (nb == nd == na + 1 == nc + 1)):
        raise ArgumentValueError(
            "trisolve",
            "a, b, c, d",
            tuple(lengths),
            "vectors with length(b) == length(d) == length(a) + 1 == length(c) + 1",
            "a and c are the sub- and superdiagonal",
        )
    zero = tf.zeros([1], F64)
    diagonals_ = [tf.concat([c, zero], 0), b, tf.concat([zero, a], 0)]
    return tf.linalg.tridiagonal_solve(diagonals_, d, diagonals_format="sequence")


# --- ADCME's SparseAssembler: rows accumulated in the host while the graph runs ----------


def assembler(handle: Any, nrows: Any, tol: Any) -> Any:
    """ADCME's `SparseAssembler(handle, n, tol)`: opens assembler `handle` for `n` rows when
    run (an open one is kept); values of magnitude at most `tol` are left out."""
    out = _host_op(
        lambda h, n, t: np.int32(ASSEMBLERS.create(int(h), int(n), float(t))),
        [tf.cast(handle, tf.int32), tf.cast(nrows, tf.int32), tf.cast(tol, F64)],
        tf.int32,
    )
    out.set_shape([])
    return out


def assembler_add(handle: Any, row: Any, cols: Any, vals: Any) -> Any:
    """ADCME's `accumulate(handle, row, cols, vals)`: `A[row, cols[k]] += vals[k]` when run."""
    out = _host_op(
        lambda h, r, c, v: np.int32(ASSEMBLERS.add(int(h), int(r), c, v)),
        [handle, tf.cast(row, tf.int32), tf.cast(cols, tf.int32), tf.cast(vals, F64)],
        tf.int32,
    )
    out.set_shape([])
    return out


def assembler_take(ops: Any, m: Any, n: Any) -> Any:
    """ADCME's `assemble(m, n, ops)`: the m×n matrix of what the `ops` accumulated."""
    ops = tf.reshape(tf.convert_to_tensor(ops), [-1])
    ii, jj, vv = _host_op(lambda h: ASSEMBLERS.take(int(h[0])), [ops], [I64, I64, F64])
    for x in (ii, jj, vv):
        x.set_shape([None])
    return from_ijv(ii, jj, vv, m, n)
