"""Julia's and ADCME's rules for operators, indexing, math and display, applied to Python objects.

Used by DevPlace.jl, one function per rule. Julia indexes from 1 and includes a range's end;
Python counts from 0 and excludes it; an index out of range is an error, never clamped. `*` of
two matrices is a matrix product, elementwise `.*` is broadcasting, and broadcasting lines up
*leading* dimensions (a vector is a column), where numpy lines up trailing ones (those hold where
only they fit, as in ADCME's `tf.add`: a 10-vector plus a 20×30×10 array). Where ADCME
(the library DevPlace.jl's users come from) differs from Base Julia, ADCME's rule holds:
reductions with `dims` drop those dimensions (`sum(A; dims=1)` of a 2×3 is a 3-vector),
`reshape(x, (a, b))` is TensorFlow's row-major reshape while `reshape(x, a, b)` and `vec` are
column-major, `x * y` of two vectors is elementwise, `A \\ b` is a linear solve. Julia arrays
arrive with Julia's indices (`A[i, j]` is `a[i-1, j-1]`), so shapes read the same in both
languages. These functions take that meaning and call the TensorFlow operations that have it.
"""

from __future__ import annotations

import functools
import operator
import re
import types
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

import devplace as dp
from devplace.adapter._tf import tf
from devplace.bridge import graph_ops
from devplace.bridge.callbacks import JuliaFunction
from devplace.core.errors import ArgumentTypeError, ArgumentValueError
from devplace.core.printed import Printed, short
from devplace.facts.trace import Trace

__all__ = [
    "BINARY",
    "REDUCTIONS",
    "adjoint",
    "array_summary",
    "axes",
    "broadcast",
    "call_with_dims",
    "check_bounds",
    "checked_device_function",
    "device",
    "display",
    "elementwise",
    "get_collection",
    "getindex",
    "hcat",
    "inv",
    "items",
    "lastindex",
    "length",
    "mul",
    "ndims",
    "reduce",
    "reshape",
    "reshape_rows",
    "run",
    "run_profile",
    "setindex",
    "size",
    "solve",
    "summary",
    "tensor_getindex",
    "tf_for_julia",
    "transpose",
    "vcat",
    "zero_based",
]

#: Julia binary operators applied elementwise (broadcast) as Python operators.
BINARY: dict[str, Any] = {
    "+": graph_ops.binary("+", operator.add),
    "-": graph_ops.binary("-", operator.sub),
    "*": graph_ops.binary("*", operator.mul),
    "/": graph_ops.binary("/", operator.truediv),
    "^": operator.pow,
    "%": operator.mod,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "max": tf.maximum,
    "min": tf.minimum,
    "==": tf.equal,
    "!=": tf.not_equal,
}

#: DevPlace.jl's elementwise functions of tensors (`sin`, `exp`, `-x`, ...): `tf.<name>`.
elementwise = types.SimpleNamespace(**graph_ops.UNARY)

#: Julia's reductions (`sum(x; dims)`, ...) as TF ops.
REDUCTIONS: dict[str, Any] = {
    "sum": tf.reduce_sum,
    "prod": tf.reduce_prod,
    "maximum": tf.reduce_max,
    "minimum": tf.reduce_min,
    "mean": tf.reduce_mean,
}


def _rank(x: Any) -> int | None:
    shape = getattr(x, "shape", None)
    if shape is None:
        return 0
    try:
        return len(shape)
    except (TypeError, ValueError):  # TensorShape of unknown rank
        return None


def _is_tensor(x: Any) -> bool:
    return isinstance(x, (tf.Tensor, tf.Variable))


# --- Julia's positions and dimensions as TensorFlow's: the one home of both rules ----------


def zero_based(index: Any) -> Any:
    """Julia's positions (from 1) as TensorFlow's (from 0): an int or an int array one less, a
    Bool mask (array or tensor) the positions it selects, an integer tensor one less in the
    graph. Every Julia index DevPlace.jl sends reaches TensorFlow through here; the caller, who
    knows the size, checks bounds (`check_bounds`)."""
    if _is_tensor(index):
        if index.dtype.is_bool:
            return tf.reshape(tf.where(index), [-1])
        if not index.dtype.is_integer:
            raise TypeError(
                f"a tensor index must hold integers or Bools, got {array_summary(index)}; "
                "hint: cast(Int64, i)"
            )
        if index.dtype not in (tf.int32, tf.int64):
            index = tf.cast(index, tf.int64)
        return index - 1
    if isinstance(index, (int, np.integer)) and not isinstance(index, (bool, np.bool_)):
        return int(index) - 1
    array = np.asarray(index)
    if array.dtype == bool:
        return np.flatnonzero(array)
    if array.dtype.kind not in "iu":
        raise TypeError(
            f"Julia indices must be integers or Bools, got {short(index)}; hint: x[1], x[[1, 3]]"
        )
    return array.astype(np.int64) - 1


def _dims_list(who: str, dims: Any) -> list[Any]:
    """`dims` as a list of dimensions, each checked to be an integer (not a Bool)."""
    values = list(dims) if isinstance(dims, (list, tuple, np.ndarray)) else [dims]
    if not all(
        isinstance(d, (int, np.integer)) and not isinstance(d, (bool, np.bool_)) for d in values
    ):
        raise ArgumentTypeError(
            who,
            "dims",
            dims,
            "a dimension or a tuple of dimensions (integers from 1)",
            f"{who}(x; dims=1) or {who}(x; dims=(1, 2))",
        )
    return values


def axes(who: str, dims: Any, rank: int | None = None) -> int | list[int]:
    """Julia's `dims` (a dimension counted from 1, or a tuple or vector of them) as TensorFlow's
    `axis` (from 0), checked alike for every function: integers (not Bools) from 1 to `rank`
    (the number of dimensions `dims` may name, where known). One int in, one int out."""
    values = _dims_list(who, dims)
    if any(d < 1 or (rank is not None and d > rank) for d in values):
        span = "counted from 1" if rank is None else f"from 1 to {rank} (the tensor has {rank})"
        raise ArgumentValueError(who, "dims", dims, f"dimensions {span}", f"{who}(x; dims=1)")
    zero = [zero_based(d) for d in values]
    return zero if isinstance(dims, (list, tuple, np.ndarray)) else zero[0]


def _axis_keywords(who: str, kwargs: dict[str, Any], rank: int | None) -> dict[str, Any]:
    """ADCME's keywords of a function with dimensions: `dims` (from 1) as TensorFlow's `axis`;
    `axis` itself refused, as in ADCME."""
    if "axis" in kwargs:
        raise ArgumentValueError(
            who,
            "the keyword",
            "axis",
            "`dims`, counted from 1 (as in ADCME), not TensorFlow's `axis`",
            f"{who}(x; dims=1)",
        )
    if "dims" not in kwargs:
        return kwargs
    out = dict(kwargs)
    out["axis"] = axes(who, out.pop("dims"), rank)
    return out


#: ADCME functions whose `dims` may name one dimension past their first argument's (a new one).
_NEW_DIMENSION = frozenset({"stack"})


def call_with_dims(who: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """ADCME's `who(args...; dims, kwargs...)` as TensorFlow's `fn(args..., axis=...)`: `dims`
    counted from 1 and checked against the first argument's dimensions (of a list of tensors,
    its first element's)."""
    first = args[0] if args else None
    if isinstance(first, (list, tuple)) and first:
        first = first[0]
    rank = None if first is None else _rank(first)
    if rank is not None and who in _NEW_DIMENSION:
        rank += 1
    return fn(*args, **_axis_keywords(who, kwargs, rank))


def _in_tensors_graph(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` building in the graph of its first tensor argument, as TensorFlow's own operators do
    (`x * 2.0` with `x` from a graph that is no longer the default one)."""

    @functools.wraps(fn)
    def in_graph(*args: Any) -> Any:
        g = next((a.graph for a in args if _is_tensor(a)), None)
        if g is None or g is tf.get_default_graph():
            return fn(*args)
        with g.as_default():
            return fn(*args)

    return in_graph


def _tensor_dtype_wins(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """Julia numbers and arrays beside a tensor take the tensor's dtype (as in ADCME)."""
    dtype = next((a.dtype.base_dtype for a in args if _is_tensor(a)), None)
    if dtype is None:
        return args
    return tuple(
        graph_ops.constant(a, dtype)
        if isinstance(a, (bool, int, float, complex, np.generic, np.ndarray))
        else a
        for a in args
    )


@_in_tensors_graph
def mul(a: Any, b: Any) -> Any:
    """`a * b` as in ADCME: a matrix product for matrices (batched for more dimensions), matrix
    times vector, elementwise with a scalar and between two vectors (ADCME's rule); a vector
    times a 1×n matrix is Julia's outer product (`y * y'`)."""
    a, b = _tensor_dtype_wins((a, b))
    ra, rb = _rank(a), _rank(b)
    if ra is None or rb is None:
        raise ValueError(
            "`*` needs the ranks of both sides (matrix product or elementwise?), got "
            f"{short(a)} and {short(b)}; hint: give the placeholder a shape, or use .*"
        )
    if ra == 0 or rb == 0 or ra == rb == 1:
        return BINARY["*"](a, b)
    if ra == 2 and rb == 1:
        return tf.linalg.matvec(a, b)
    if ra == 1 and rb == 2:
        rows = _known_shape(b)[0]
        if rows not in (1, None):
            raise ValueError(
                f"vector * matrix needs a matrix with one row (Julia's outer product y * y'), "
                f"got {array_summary(b)}; hint: transpose the vector (y' * A)"
            )
        return tf.matmul(tf.expand_dims(a, 1), b)
    if ra == 1 or rb == 1:
        raise ValueError(
            f"`*` of a vector and a {max(ra, rb)}-dimensional tensor is not defined; "
            "hint: use .* for elementwise products, or batch_matmul"
        )
    return tf.matmul(a, b)


def inv(x: Any) -> Any:
    """ADCME's `inv(x)`: the inverse of a matrix (of each in a batch); of a scalar, `1/x`."""
    x = tf.convert_to_tensor(x)
    return tf.math.reciprocal(x) if x.shape.ndims == 0 else tf.linalg.inv(x)


@_in_tensors_graph
def solve(a: Any, b: Any) -> Any:
    """`a \\ b` as in ADCME: the solution of `a x = b` for a square matrix `a` (least squares
    otherwise), `b` a vector or a matrix of right-hand sides; a batch of matrices solves each
    against its own right-hand sides. A scalar `a` divides."""
    a, b = (tf.convert_to_tensor(t) for t in _tensor_dtype_wins((a, b)))
    ra, rb = a.shape.ndims, b.shape.ndims
    if ra == 0:
        return b / a
    if ra is None or rb is None or ra < 2 or rb not in (ra - 1, ra):
        raise ValueError(
            f"a \\ b needs a matrix (or a batch of them) and a vector or matrix of right-hand "
            f"sides, got {array_summary(a)} and {array_summary(b)}"
        )
    vector = rb == ra - 1
    if vector:
        b = tf.expand_dims(b, -1)
    rows, cols = a.shape.as_list()[-2:]
    x = tf.linalg.solve(a, b) if rows == cols and rows is not None else tf.linalg.lstsq(a, b)
    return tf.squeeze(x, -1) if vector else x


def _with_trailing_ones(x: Any, rank: int) -> Any:
    """`x` with size-1 dimensions appended up to `rank`: Julia broadcasts a vector as a column."""
    own = _rank(x)
    if own is None or own == 0 or own >= rank:
        return x
    if _is_tensor(x):
        return tf.reshape(x, tf.concat([tf.shape(x), tf.ones([rank - own], tf.int32)], 0))
    a = np.asarray(x)
    return a.reshape(a.shape + (1,) * (rank - own))


@_in_tensors_graph
def broadcast(op: str, *args: Any) -> Any:
    """Julia's `a .op b` (elementwise, leading dimensions lined up)."""
    try:
        fn = BINARY[op]
    except KeyError:
        raise ValueError(f"no elementwise Python operation for Julia's .{op}") from None
    args = _tensor_dtype_wins(args)
    ranks = [_rank(a) for a in args]
    if None not in ranks and len(set(ranks) - {0}) > 1 and not _only_trailing_fits(args):
        top = max(r for r in ranks if r is not None)
        args = tuple(_with_trailing_ones(a, top) for a in args)
    return fn(*args)


def _sizes_agree(shapes: list[list[int | None]]) -> bool:
    """Whether shapes of one rank broadcast dimension by dimension (None fits anything)."""
    for sizes in zip(*shapes, strict=True):
        known = {n for n in sizes if n is not None and n != 1}
        if len(known) > 1:
            return False
    return True


def _only_trailing_fits(args: tuple[Any, ...]) -> bool:
    """Whether Julia's leading alignment cannot fit but TensorFlow's trailing one (ADCME's `+`,
    `tf.add`) can, e.g. a 10-vector and a 20×30×10 array: then ADCME's rule holds."""
    shapes = [list(np.shape(a)) if not _is_tensor(a) else a.shape.as_list() for a in args]
    top = max(len(s) for s in shapes)
    leading = [s + [1] * (top - len(s)) for s in shapes]
    trailing = [[1] * (top - len(s)) + s for s in shapes]
    return not _sizes_agree(leading) and _sizes_agree(trailing)


def _known_shape(x: Any) -> list[int | None]:
    shape = getattr(x, "shape", None)
    if not isinstance(shape, tf.TensorShape):
        return list(np.shape(x))
    if shape.ndims is None:
        raise ValueError(f"the rank of {x} is unknown; hint: give the placeholder a shape")
    return shape.as_list()


def size(x: Any) -> tuple[int | None, ...]:
    """Julia's `size(x)`: the static shape, `nothing` for sizes known only at run time."""
    return tuple(_known_shape(x))


def ndims(x: Any) -> int:
    """Julia's `ndims(x)`: the rank."""
    return len(_known_shape(x))


def length(x: Any) -> int:
    """Julia's `length(x)`: the element count of a tensor, `len` of anything else."""
    if not _is_tensor(x):
        return len(x)
    shape = _known_shape(x)
    if None in shape:
        raise ValueError(
            f"length of {x.name} needs its static shape, but it is {size(x)}; "
            "hint: use tf.size(x) for the run-time count"
        )
    return int(np.prod(shape, dtype=np.int64))


def reduce(reduction: str, x: Any, dims: Any = None, **kwargs: Any) -> Any:
    """ADCME's `sum(x; dims, kwargs...)` (`prod`, `maximum`, `minimum`, `mean`): over all
    elements, or over `dims` (counted from 1), which are dropped (`sum(A; dims=1)` of a 2×3 is
    a 3-vector); other keywords (`keepdims`, `name`) go to TensorFlow. As in Julia, the mean of
    integers is a float64, and sums and products of Bools count them."""
    fn = REDUCTIONS[reduction]
    x = tf.convert_to_tensor(x)
    if reduction == "mean" and (x.dtype.is_integer or x.dtype.is_bool):
        x = tf.cast(x, tf.float64)
    elif reduction in ("sum", "prod") and x.dtype.is_bool:
        x = tf.cast(x, tf.int64)
    if dims is not None:
        kwargs = {**kwargs, "dims": dims}
    return fn(x, **_axis_keywords(reduction, kwargs, ndims(x)))


def transpose(x: Any) -> Any:
    """Julia's `transpose(x)`: a vector becomes a 1×n matrix, a matrix is transposed."""
    rank = ndims(x)
    if rank == 0:
        return x
    if rank == 1:
        return tf.reshape(x, [1, -1])
    if rank == 2:
        return tf.transpose(x)
    raise ValueError(
        f"transpose is defined for vectors and matrices, got a rank-{rank} tensor; "
        "hint: use permutedims-like tf.transpose(x, perm=[...]) for more dimensions"
    )


def adjoint(x: Any) -> Any:
    """ADCME's `x'`: a scalar stays, a vector becomes a 1×n matrix, a matrix (or each of a batch
    of them: the last two dimensions) is transposed and complex-conjugated."""
    if ndims(x) <= 1:
        t = transpose(x)
        return tf.math.conj(t) if t.dtype.is_complex else t
    return tf.linalg.adjoint(x)


def reshape(x: Any, dims: Sequence[int | None]) -> Any:
    """Julia's `reshape(x, dims...)`: column-major order, `nothing` (Julia's `:`) inferred."""
    reverse = [-1 if d is None else d for d in reversed(dims)]
    return tf.transpose(tf.reshape(tf.transpose(x), reverse))


def reshape_rows(x: Any, dims: Sequence[int]) -> Any:
    """ADCME's `reshape(x, (a, b, c))` and `reshape(x, [a, b, c])`: `tf.reshape`, row-major
    (-1 is inferred)."""
    return tf.reshape(x, list(dims))


def _as_tensors(xs: tuple[Any, ...]) -> list[Any]:
    dtype = next((x.dtype.base_dtype for x in xs if _is_tensor(x)), None)
    return [tf.convert_to_tensor(x, dtype=dtype) for x in xs]


def _as_matrix(x: Any) -> Any:
    rank = x.shape.ndims
    if rank == 0:
        return tf.reshape(x, [1, 1])
    if rank == 1:
        return tf.expand_dims(x, 1)
    return x


def vcat(*xs: Any) -> Any:
    """Julia's `vcat(a, b, ...)` (`[a; b]`): stack along the first dimension."""
    ts = _as_tensors(xs)
    if all(t.shape.ndims in (0, 1) for t in ts):
        return tf.concat([tf.reshape(t, [-1]) for t in ts], 0)
    return tf.concat([_as_matrix(t) for t in ts], 0)


def hcat(*xs: Any) -> Any:
    """Julia's `hcat(a, b, ...)` (`[a b]`): vectors become columns, stacked side by side."""
    return tf.concat([_as_matrix(t) for t in _as_tensors(xs)], 1)


def get_collection(name: str | None = None) -> list[Any]:
    """ADCME's `get_collection(name)`: a collection of the graph by its key (`UPDATE_OPS`,
    `TRAINABLE_VARIABLES`, or any key in use); any other name is a regular expression, and the
    result the trainable variables whose names it matches (`"my_collect"` finds
    `my_collect1:0`); no name: every trainable variable."""
    graph = tf.get_default_graph()
    if name is not None and name in graph.get_all_collection_keys():
        return graph.get_collection(name)
    variables = graph.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES)
    if name is None:
        return variables
    pattern = re.compile(name)
    return list({id(v): v for v in variables if pattern.search(v.name)}.values())


def typed(fetches: Any, values: Any) -> Any:
    """Scalars fetched back as the tensor's own type (float32 stays float32 in Julia)."""
    if isinstance(values, (list, tuple)) and isinstance(fetches, (list, tuple)):
        return type(values)(typed(f, v) for f, v in zip(fetches, values, strict=True))
    if isinstance(values, dict) and isinstance(fetches, Mapping):
        return {k: typed(fetches[k], v) for k, v in values.items()}
    dtype = getattr(fetches, "dtype", None)
    if isinstance(values, (bool, int, float, complex)) and isinstance(dtype, tf.DType):
        return dtype.base_dtype.as_numpy_dtype(values)
    return values


def run(sess: Any, fetches: Any, feed: Any = None) -> Any:
    """`dp.run` with each fetched scalar of its tensor's type."""
    return typed(fetches, dp.run(sess, fetches, feed))


def run_profile(sess: Any, fetches: Any, feed: Any = None, **kwargs: Any) -> Any:
    """`dp.run_profile`, returning the fetched values (as ADCME); the profile is `last_profile`."""
    return typed(fetches, dp.run_profile(sess, fetches, feed, **kwargs).values)


def summary(obj: Any) -> str:
    """One line for Julia's `show(io, x)` (and `repr`): Python's `repr` (one line for every
    devplace result), never a dump of a trace or a table."""
    if isinstance(obj, dp.Device):
        return f"Device({str(obj)!r})"
    return repr(obj)


def display(obj: Any) -> str:
    """What Julia's REPL shows (`text/plain`): a devplace result's one line, then what Python's
    `print` shows (its bounded table); else `summary`."""
    if isinstance(obj, (Printed, Trace)):  # Trace: a plain dataclass with the same two
        return f"{summary(obj)}\n{obj}"
    return summary(obj)


# --- indexing: Julia's `x[i, j, ...]` ---------------------------------------------------------
# DevPlace.jl sends each index as a spec: ("i", n) an integer, ("r", first, last, step) a range
# (its end included), ("c",) a colon, ("v", array) integer positions, ("m", array) a Bool mask,
# ("o", object) a Python object (for a tensor: a tensor of positions or a Bool mask; for a
# container: a key), ("k", key) a string key. Julia counts from 1 and never clamps: an index out
# of range is an IndexError (DevPlace.jl throws Julia's BoundsError for it).


def array_summary(obj: Any) -> str:
    """Julia's `summary(x)` of a tensor, as in a BoundsError: `2×3 tensor 'Const:0' (float64)`."""
    if not _is_tensor(obj):
        return f"Python {type(obj).__name__}"
    dims = obj.shape.as_list() if obj.shape.ndims is not None else None
    if dims is None:
        shape = "tensor of unknown rank"
    elif len(dims) == 1:
        shape = f"{'?' if dims[0] is None else dims[0]}-element tensor"
    elif not dims:
        shape = "0-dimensional tensor"
    else:
        shape = "×".join("?" if d is None else str(d) for d in dims) + " tensor"
    return f"{shape} {obj.name!r} ({obj.dtype.base_dtype.name})"


def _out_of_bounds(x: Any, dim: int, size: int | None, index: Any) -> IndexError:
    """Julia's BoundsError, said in Python."""
    has = "whose size is known when the graph runs" if size is None else f"which has size {size}"
    return IndexError(
        f"attempt to access {array_summary(x)} at index {index} in dimension {dim}, "
        f"{has} (Julia indices run from 1 to the size)"
    )


def _checked_at_run_time(x: Any, axis: int, positions: Any, index: str) -> Any:
    """`positions` (counted from 0) with an assertion, run before any use, that they lie in
    dimension `axis` of `x`: for sizes known only at run time and for tensor indices (a gather
    on a GPU gives 0 for a position out of range instead of failing)."""
    positions = tf.convert_to_tensor(positions)
    size = tf.shape(x, out_type=positions.dtype)[axis]
    inside = tf.reduce_all(tf.logical_and(positions >= 0, positions < size))
    check = tf.debugging.Assert(
        inside,
        [
            f"attempt to access {array_summary(x)} at index {index} in dimension {axis + 1}: "
            "positions (from 1)",
            positions + 1,
            "size",
            size,
        ],
    )
    with tf.control_dependencies([check]):
        return tf.identity(positions)


def _range_positions(spec: tuple[Any, ...]) -> range:
    """Julia's `first:step:last` as the 0-based positions it selects."""
    first, last, step = spec[1:]
    if step == 0:
        raise ValueError(f"range step cannot be zero: {first}:{step}:{last}")
    return range(zero_based(first), zero_based(last) + (1 if step > 0 else -1), step)


def _static_positions(spec: tuple[Any, ...]) -> Any:
    """The 0-based positions an integer, range, integer vector or Bool mask selects: an int (the
    dimension is dropped), a range, or an int64 array (unchecked)."""
    if spec[0] == "r":
        return _range_positions(spec)
    return zero_based(spec[1] if spec[0] != "m" else np.asarray(spec[1], dtype=bool))


def check_bounds(
    x: Any, dim: int, size: int | None, positions: Any, spec: tuple[Any, ...] = ("v",)
) -> None:
    """Julia's bounds check of `positions` (from 0, as `zero_based` gives them) in dimension
    `dim` of `x`: none before the first, none past `size` where it is known; a Bool mask
    (`spec`, the index as sent) as long as the dimension. An IndexError, Julia's BoundsError."""
    if spec[0] == "m" and size is not None and len(spec[1]) != size:
        raise _out_of_bounds(x, dim, size, f"(a Bool mask of length {len(spec[1])})")
    top = np.inf if size is None else size
    if isinstance(positions, range):
        ends = [positions[0], positions[-1]] if positions else []
        bad = [p for p in ends if not 0 <= p < top]
    else:
        flat = np.atleast_1d(positions)
        bad = flat[(flat < 0) | (flat >= top)].tolist()
    if bad:
        raise _out_of_bounds(x, dim, size, bad[0] + 1)


def _index_text(spec: tuple[Any, ...]) -> str:
    """One index as Julia writes it, for messages."""
    kind, *value = spec
    if kind == "r":
        first, last, step = value
        return f"{first}:{last}" if step == 1 else f"{first}:{step}:{last}"
    if kind == "v":
        return "[" + ", ".join(str(int(i)) for i in value[0]) + "]"
    if kind == "m":
        return f"a Bool mask of length {len(value[0])}"
    if kind == "o" and _is_tensor(value[0]):
        return repr(value[0].name)
    return ":" if kind == "c" else str(value[0])


def _tensor_positions(x: Any, axis: int, index: Any, text: str) -> Any:
    """A tensor index, 1-based as in Julia and ADCME: integer positions (a scalar drops the
    dimension) or a Bool mask, as 0-based positions checked when the graph runs."""
    index = tf.convert_to_tensor(index)
    positions = zero_based(index)
    if index.dtype.is_bool:
        size = tf.shape(x, out_type=tf.int64)[axis]
        check = tf.debugging.assert_equal(
            tf.size(index, out_type=tf.int64),
            size,
            message=f"{text}: a Bool mask must be as long as dimension {axis + 1} of "
            f"{array_summary(x)}",
        )
        with tf.control_dependencies([check]):
            return tf.identity(positions)
    return _checked_at_run_time(x, axis, positions, text)


def _per_dimension(x: Any, specs: Sequence[tuple[Any, ...]]) -> Any:
    """Julia's `x[i1, ..., in]` with one index per dimension: integers drop their dimension,
    ranges, colons, vectors and masks keep it, vectors select in their own order."""
    shape = _known_shape(x)
    key: list[Any] = []
    gathers: list[tuple[int, Any]] = []  # (axis in the sliced tensor, 0-based positions)
    axis = 0
    for dim, (spec, size) in enumerate(zip(specs, shape, strict=True), start=1):
        kind = spec[0]
        if kind == "c":
            key.append(slice(None))
            axis += 1
            continue
        if kind == "o":
            key.append(slice(None))
            gathers.append((axis, _tensor_positions(x, dim - 1, spec[1], _index_text(spec))))
            axis += 1
            continue
        if kind not in ("i", "r", "v", "m"):
            raise TypeError(f"a tensor cannot be indexed by {spec[1]!r} (dimension {dim})")
        if size is None:  # known when the graph runs: checked then
            key.append(slice(None))
            index = spec[1] if kind == "m" else np.asarray(_static_positions(spec)) + 1
            gathers.append((axis, _tensor_positions(x, dim - 1, index, _index_text(spec))))
            axis += 1
            continue
        positions = _static_positions(spec)
        check_bounds(x, dim, size, positions, spec)
        if isinstance(positions, range):
            stop = positions.stop if positions.stop >= 0 else None
            key.append(slice(positions.start, stop, positions.step))
            axis += 1
        elif isinstance(positions, int):
            key.append(positions)
        else:
            key.append(slice(None))
            gathers.append((axis, positions))
            axis += 1
    y = x[tuple(key)] if any(k != slice(None) for k in key) else x
    for axis, positions in reversed(gathers):  # a scalar position drops its axis: last first
        y = tf.gather(y, positions, axis=axis)
    return y


def tensor_getindex(x: Any, specs: Sequence[tuple[Any, ...]]) -> Any:
    """Julia's and ADCME's `x[...]` on a tensor: one index per dimension (trailing ones may be
    added, as in Julia); one index into a tensor of two or more dimensions selects along the
    first (as ADCME; `x[:]` is `vec(x)`, column-major)."""
    rank = ndims(x)
    if len(specs) == 1 and rank != 1:
        if specs[0][0] == "c":
            return reshape(x, [None])
        if rank == 0:
            raise IndexError(f"a 0-dimensional tensor {x.name!r} is indexed by x[] only")
        specs = (specs[0],) + (("c",),) * (rank - 1)
    elif len(specs) < rank:
        raise IndexError(
            f"{len(specs)} indices into {array_summary(x)}: give one index per dimension "
            "(or one index, which selects along the first)"
        )
    elif len(specs) > rank:
        for _ in range(len(specs) - rank):  # Julia's trailing dimensions of size 1
            x = tf.expand_dims(x, -1)
    return _per_dimension(x, specs)


def _container_key(obj: Any, spec: tuple[Any, ...]) -> Any:
    """One Julia index into a Python container: a key for a mapping; for a sequence a 1-based
    integer or an inclusive range, checked against its length (never wrapped or clamped)."""
    kind = spec[0]
    if kind in ("k", "o") or isinstance(obj, Mapping):
        return spec[1] if kind in ("i", "k", "o") else slice(None)
    if kind == "c":
        return slice(None)
    if kind not in ("i", "r"):
        raise TypeError(f"a Python {type(obj).__name__} is indexed by integers and ranges")
    positions = _static_positions(spec)
    # a ragged tensor (ADCME's `cell`) has rows, not a len()
    size = obj.shape[0] if isinstance(obj, tf.RaggedTensor) else len(obj)
    if kind == "i":
        if not 0 <= positions < size:
            raise _out_of_bounds(obj, 1, size, spec[1])
        return positions
    check_bounds(obj, 1, size, positions, spec)
    return slice(positions.start, positions.stop if positions.stop >= 0 else None, positions.step)


def _key(obj: Any, specs: Sequence[tuple[Any, ...]]) -> Any:
    keys = tuple(_container_key(obj, s) for s in specs)
    return keys[0] if len(keys) == 1 else keys


def getindex(obj: Any, specs: Sequence[tuple[Any, ...]]) -> Any:
    """Julia's `obj[i, j, ...]` (index specs as above): on tensors `tensor_getindex`, on
    mappings a key, on sequences 1-based positions."""
    if _is_tensor(obj):
        return tensor_getindex(obj, specs)
    return obj[_key(obj, specs)]


def setindex(obj: Any, value: Any, specs: Sequence[tuple[Any, ...]]) -> None:
    """Julia's `obj[i...] = value` (for mutable Python containers; a tensor is not one)."""
    if _is_tensor(obj):
        raise TypeError(
            f"setindex!: {array_summary(obj)} cannot be changed in place; hint: "
            "y = scatter_update(x, i, v) (as in ADCME) makes a new tensor"
        )
    obj[_key(obj, specs)] = value


def lastindex(obj: Any, dim: int, ndims: int) -> int:
    """Julia's `end` inside `obj[...]`: the size of dimension `dim` (1-based) of a tensor, or of
    its first dimension when it has one index (as ADCME); the length of anything else."""
    if not _is_tensor(obj):
        return len(obj)
    shape = _known_shape(obj)
    if dim > len(shape):
        return 1
    size = shape[0 if ndims == 1 else zero_based(dim)]
    if size is None:
        raise ValueError(
            f"`end` needs a static size, but dimension {dim} of {array_summary(obj)} is unknown; "
            "hint: give the placeholder a shape, or index with a tensor"
        )
    return size


def items(obj: Any) -> list[Any]:
    """The elements Julia's `iterate` walks (a Python list of them). A tensor has none before a
    session runs it: a clear error instead of TensorFlow's "Iterating over a symbolic
    tf.Tensor"."""
    if _is_tensor(obj):
        raise TypeError(
            f"iterate: {array_summary(obj)} has no elements to loop over while the graph is "
            "built, so Julia functions that iterate (for loops, collect, splatting x..., "
            "first, foreach, generic map/filter/reduce) do not work on it. Hint: use "
            "TensorFlow operations (x[i], sum, map, ...), or loop over run(sess, x)"
        )
    return list(obj)


def _julia_value(value: Any) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, str):
        return f'"{value}"'
    return f"{value!r} (a Python {type(value).__name__})"


def checked_device_function(fn: Callable[[Any], Any]) -> Callable[[Any], str]:
    """`fn` as a TF device function whose result is checked: a device string (`""` for none)."""
    name = getattr(fn, "__name__", repr(fn))
    valid: set[str] = set()  # results already checked: a device function repeats a few strings
    to_julia = isinstance(fn, JuliaFunction)

    def checked(op: Any) -> str:
        if to_julia and isinstance(op, tf.Operation):  # `op.name` etc. without a request
            result = fn.call_on_op(op)
        else:
            result = fn(op)
        if type(result) is str and result in valid:
            return result
        if hasattr(result, "to_string"):  # a tf.DeviceSpec
            result = result.to_string()
        where = f"device function {name} returned {_julia_value(result)} for op {op.name!r}"
        if not isinstance(result, str):
            raise dp.DeviceSpecError(
                result,
                f'{where}, not a device string; return e.g. "/cpu:0" or "/gpu:0", '
                'or "" for no device',
            )
        try:
            dp.canonical_device(result)
        except dp.DeviceSpecError as err:
            raise dp.DeviceSpecError(result, f"{where} ({err.problem})") from None
        valid.add(result)
        return result  # as given: TF shows a device function's string unchanged in op.device

    return checked


def device(spec: Any) -> Any:
    """Julia's `tf.device(spec)` and `DevPlace.device(spec)`: a device string, a `DeviceSpec`,
    `nothing` (no device), or a device function whose results are checked."""
    if callable(spec) and not hasattr(spec, "to_string"):
        return tf.get_default_graph().device(checked_device_function(spec))
    return dp.device(spec)


class _TFForJulia(types.ModuleType):
    """`devplace.tf` as DevPlace.jl's `tf`: every name is TF's, but `device` is `device` above."""

    def __getattr__(self, name: str) -> Any:
        return getattr(tf, name)

    def __dir__(self) -> list[str]:
        return dir(tf)


#: DevPlace.jl's `tf`: `tf.device(f)` checks what a Julia device function returns.
tf_for_julia = _TFForJulia("tensorflow.compat.v1", tf.__doc__)
tf_for_julia.device = device  # type: ignore[attr-defined]
