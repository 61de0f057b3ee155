"""Julia's rules for operators, indexing, math and display, applied to Python objects.

Used by DevPlace.jl. Julia indexes from 1 and includes a range's end; Python counts from 0 and
excludes it. `*` of two matrices is a matrix product in Julia, elementwise `.*` is broadcasting,
and broadcasting lines up *leading* dimensions (a vector is a column), where numpy lines up
trailing ones. Reductions keep the reduced dimensions (`sum(A; dims=1)` is 1×n), `reshape` and
`vec` read elements in column-major order, `transpose` of a vector is a 1×n matrix. Julia arrays
arrive with Julia's indices (`A[i, j]` is `a[i-1, j-1]`), so shapes read the same in both
languages. These functions take Julia's meaning and call the TensorFlow operation that has it.
"""

from __future__ import annotations

import operator
import types
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

import devplace as dp
from devplace._tf import tf
from devplace.profile import Profile
from devplace.report import PlacementReport

__all__ = [
    "BINARY",
    "REDUCTIONS",
    "adjoint",
    "broadcast",
    "checked_device_function",
    "device",
    "display",
    "getindex",
    "hcat",
    "lastindex",
    "length",
    "mul",
    "ndims",
    "reduce",
    "reshape",
    "run",
    "run_profile",
    "setindex",
    "size",
    "summary",
    "tf_for_julia",
    "transpose",
    "vcat",
]

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
    "==": tf.equal,
    "!=": tf.not_equal,
}

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


def _tensor_dtype_wins(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """Julia numbers and arrays beside a tensor take the tensor's dtype (as in ADCME)."""
    dtype = next((a.dtype.base_dtype for a in args if _is_tensor(a)), None)
    if dtype is None:
        return args
    return tuple(
        tf.convert_to_tensor(a, dtype=dtype)
        if isinstance(a, (bool, int, float, complex, np.generic, np.ndarray))
        else a
        for a in args
    )


def mul(a: Any, b: Any) -> Any:
    """Julia's `a * b`: a matrix product when both sides are matrices (or matrix times vector)."""
    a, b = _tensor_dtype_wins((a, b))
    ra, rb = _rank(a), _rank(b)
    if ra == 2 and rb == 2:
        return tf.matmul(a, b)
    if ra == 2 and rb == 1:
        return tf.linalg.matvec(a, b)
    return a * b


def _with_trailing_ones(x: Any, rank: int) -> Any:
    """`x` with size-1 dimensions appended up to `rank`: Julia broadcasts a vector as a column."""
    own = _rank(x)
    if own is None or own == 0 or own >= rank:
        return x
    if _is_tensor(x):
        return tf.reshape(x, tf.concat([tf.shape(x), tf.ones([rank - own], tf.int32)], 0))
    a = np.asarray(x)
    return a.reshape(a.shape + (1,) * (rank - own))


def broadcast(op: str, *args: Any) -> Any:
    """Julia's `a .op b` (elementwise, leading dimensions lined up)."""
    try:
        fn = BINARY[op]
    except KeyError:
        raise ValueError(f"no elementwise Python operation for Julia's .{op}") from None
    args = _tensor_dtype_wins(args)
    ranks = [_rank(a) for a in args]
    if None not in ranks and len(set(ranks) - {0}) > 1:
        top = max(r for r in ranks if r is not None)
        args = tuple(_with_trailing_ones(a, top) for a in args)
    return fn(*args)


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


def _axes(x: Any, dims: Any) -> list[int]:
    """Julia's 1-based `dims` (checked on the Julia side) as TF axes; those past the rank are
    length-1 dimensions in Julia, so reducing over them changes nothing."""
    rank = ndims(x)
    return [int(d) - 1 for d in np.atleast_1d(dims) if d <= rank]


def reduce(name: str, x: Any, dims: Any = None) -> Any:
    """Julia's `sum(x)` (all elements) or `sum(x; dims)` (those dims kept with size 1)."""
    fn = REDUCTIONS[name]
    x = tf.convert_to_tensor(x)
    if name == "mean" and (x.dtype.is_integer or x.dtype.is_bool):
        x = tf.cast(x, tf.float64)  # Julia's mean of integers is a Float64
    elif name in ("sum", "prod") and x.dtype.is_bool:
        x = tf.cast(x, tf.int64)  # Julia counts Bools as Ints
    if dims is None:
        return fn(x)
    return fn(x, axis=_axes(x, dims), keepdims=True)


def transpose(x: Any) -> Any:
    """Julia's `transpose(x)`: a vector becomes a 1×n matrix, a matrix is transposed."""
    rank = ndims(x)
    if rank == 1:
        return tf.reshape(x, [1, -1])
    if rank == 2:
        return tf.transpose(x)
    raise ValueError(
        f"transpose is defined for vectors and matrices, got a rank-{rank} tensor; "
        "hint: use permutedims-like tf.transpose(x, perm=[...]) for more dimensions"
    )


def adjoint(x: Any) -> Any:
    """Julia's `x'`: the transpose, complex-conjugated for complex tensors."""
    t = transpose(x)
    return tf.math.conj(t) if t.dtype.is_complex else t


def reshape(x: Any, dims: Sequence[int | None]) -> Any:
    """Julia's `reshape(x, dims...)`: column-major order, `nothing` (Julia's `:`) inferred."""
    reverse = [-1 if d is None else d for d in reversed(dims)]
    return tf.transpose(tf.reshape(tf.transpose(x), reverse))


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


def _typed(fetches: Any, values: Any) -> Any:
    """Scalars fetched back as the tensor's own type (float32 stays float32 in Julia)."""
    if isinstance(values, (list, tuple)) and isinstance(fetches, (list, tuple)):
        return type(values)(_typed(f, v) for f, v in zip(fetches, values, strict=True))
    if isinstance(values, dict) and isinstance(fetches, Mapping):
        return {k: _typed(fetches[k], v) for k, v in values.items()}
    dtype = getattr(fetches, "dtype", None)
    if isinstance(values, (bool, int, float, complex)) and isinstance(dtype, tf.DType):
        return dtype.base_dtype.as_numpy_dtype(values)
    return values


def run(sess: Any, fetches: Any, feed: Any = None) -> Any:
    """`dp.run` with each fetched scalar of its tensor's type."""
    return _typed(fetches, dp.run(sess, fetches, feed))


def run_profile(sess: Any, fetches: Any, feed: Any = None, **kwargs: Any) -> Any:
    """`dp.run_profile`, returning the fetched values (as ADCME); the profile is `last_profile`."""
    return _typed(fetches, dp.run_profile(sess, fetches, feed, **kwargs).values)


def _short(x: Any, limit: int = 60) -> str:
    text = " ".join(repr(x).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _devices(devices: Sequence[str]) -> str:
    return ", ".join(sorted(set(devices))) or "no device"


def summary(obj: Any) -> str:
    """One line for Julia's `show(io, x)` (and `repr`): never a dump of a trace or a table."""
    if isinstance(obj, PlacementReport):
        return (
            f"PlacementReport({len(obj.ops)} ops on {_devices(obj.devices)}, "
            f"{obj.transfer_count} transfers, {obj.transfer_bytes} bytes)"
        )
    if isinstance(obj, Profile):
        return (
            f"Profile({len(obj.op_stats)} ops, step {obj.step_time_us:.1f} µs, "
            f"{obj.runs} run{'s' if obj.runs != 1 else ''}, values {_short(obj.values)})"
        )
    if isinstance(obj, dp.Device):
        return f"Device({str(obj)!r})"
    if type(obj).__name__ == "AutoPlacement" and hasattr(obj, "predicted_step_time"):
        return (
            f"AutoPlacement({len(obj)} ops on {_devices(obj.devices.values())}, "
            f"predicted step {obj.predicted_step_time:.1f} µs, strategy {obj.strategy!r})"
        )
    return repr(obj)


def display(obj: Any) -> str:
    """What Julia's REPL shows (`text/plain`): a placement report's table, else `summary`."""
    if isinstance(obj, PlacementReport):
        return f"{summary(obj)}\n{obj.table()}"
    return summary(obj)


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


def _julia_value(value: Any) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, str):
        return f'"{value}"'
    return f"{value!r} (a Python {type(value).__name__})"


def checked_device_function(fn: Callable[[Any], Any]) -> Callable[[Any], str]:
    """`fn` as a TF device function whose result is checked: a device string (`""` for none)."""
    name = getattr(fn, "__name__", repr(fn))

    def checked(op: Any) -> str:
        result = fn(op)
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
