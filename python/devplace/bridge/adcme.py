"""ADCME's functions that take more than one TensorFlow call, for DevPlace.jl (one request each).

DevPlace.jl gives ADCME's core API (`julia/DevPlace/src/adcme/`); where ADCME's meaning needs
several TF ops (1-based indices, shapes, loops), the rule is one function here, so a Julia call
is one request to the host. Indices arrive from Julia already 0-based when they are Julia
values, 1-based when they are tensors (subtracted here). Random variables are sampled with
TensorFlow's own random ops (ADCME used tensorflow_probability, which devplace does not need).
"""

from __future__ import annotations

import math
import os
import shutil
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from devplace._tf import tf
from devplace.errors import ArgumentValueError

__all__ = [
    "DISTRIBUTIONS",
    "LOG_PROBS",
    "categorical",
    "choice",
    "concat_activation",
    "diff",
    "dtype",
    "findall",
    "gpu_facts",
    "gradient_magnitude",
    "hessian",
    "hessian_vector",
    "if_else",
    "is_variable",
    "jacobian",
    "log_prob",
    "map_fn",
    "repeat",
    "roll",
    "sample",
    "scatter",
    "scatter2",
    "solve_batch",
    "tensor_by_name",
    "tensor_from",
    "tensor_array_read",
    "tensor_array_write",
    "tril",
    "triu",
    "variable",
    "vector",
    "while_loop",
]

F64 = tf.float64


def dtype(x: Any) -> Any:
    """The numpy type of a tensor's elements (a Julia type in DevPlace.jl), None if not numeric."""
    try:
        numpy_type = tf.as_dtype(x.dtype).base_dtype.as_numpy_dtype
    except (AttributeError, TypeError):
        return None
    return numpy_type if np.dtype(numpy_type).kind in "biufc" else None


def tensor_by_name(name: str) -> Any:
    """ADCME's `tensor(name)`: the tensor of that name in the default graph."""
    return tf.get_default_graph().get_tensor_by_name(name)


def is_variable(x: Any) -> bool:
    """ADCME's `is_variable`: a trainable variable."""
    return bool(getattr(x, "trainable", False)) and isinstance(x, tf.Variable)


def variable(name: str | None, scope: str, **kwargs: Any) -> Any:
    """`tf.get_variable` inside `variable_scope(scope, reuse=AUTO_REUSE)`, as ADCME does."""
    initializer = kwargs.get("initializer")
    if isinstance(initializer, (tf.Tensor, tf.Variable)) and kwargs.get("dtype") is None:
        kwargs["dtype"] = initializer.dtype.base_dtype
    # An empty scope is the current one (its name unchanged), reusing as ADCME does.
    with tf.variable_scope(scope or tf.get_variable_scope(), reuse=tf.AUTO_REUSE):
        return tf.get_variable(name, **kwargs)


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


def tensor_from(values: Sequence[Any], dims: Sequence[int], numpy_type: Any) -> Any:
    """A tensor of Julia shape `dims` from a column-major list of numbers and scalar tensors."""
    elements = [tf.cast(tf.convert_to_tensor(v), numpy_type) for v in values]
    flat = tf.stack(elements) if elements else tf.zeros([0], numpy_type)
    # Column-major order: the reversed shape in row-major, transposed back.
    return tf.transpose(tf.reshape(flat, list(reversed(dims))))


def tensor_array_read(ta: Any, i: Any) -> Any:
    """`read(ta, i)`: element `i` (from 1) of a TensorArray."""
    return ta.read(i - 1)


def tensor_array_write(ta: Any, i: Any, value: Any) -> Any:
    """`write(ta, i, value)`: the TensorArray with element `i` (from 1) written."""
    if not isinstance(value, (tf.Tensor, tf.Variable)):
        value = tf.convert_to_tensor(value, dtype=ta.dtype)
    return ta.write(i - 1, value)


def hessian(ys: Any, xs: Any, **kwargs: Any) -> Any:
    """ADCME's `hessian` of a scalar `ys` with respect to a vector `xs`."""
    if ys.shape.rank != 0 or xs.shape.rank != 1:
        raise ArgumentValueError(
            "hessian",
            "ys, xs",
            (ys, xs),
            "a scalar and a vector",
            "hessian(sum(x^2), x) with x a vector; reduce ys to a scalar first",
        )
    return tf.hessians(ys, xs, **kwargs)[0]


def hessian_vector(f: Any, xs: Any, v: Any, **kwargs: Any) -> Any:
    """The Hessian of `f` with respect to `xs`, times `v` (without forming the Hessian)."""
    from tensorflow.python.ops import gradients_impl

    v = tf.convert_to_tensor(v, dtype=xs.dtype.base_dtype)
    return gradients_impl._hessian_vector_product(f, [xs], [v], **kwargs)[0]


def jacobian(y: Any, x: Any) -> Any:
    """The Jacobian `J[i, j] = dy[i]/dx[j]` of vectors (TF's parallel-for Jacobian)."""
    from tensorflow.python.ops.parallel_for import gradients as pfor_gradients

    if y.shape.rank != 1 or x.shape.rank != 1:
        raise ArgumentValueError(
            "jacobian",
            "y, x",
            (y, x),
            "two vectors",
            "reshape them to vectors first, or use gradients(y, x) for other shapes",
        )
    return pfor_gradients.jacobian(y, x)


def gradient_magnitude(loss: Any, xs: list[Any]) -> Any:
    """`sqrt(sum of squared gradient norms)` of `loss` over `xs`."""
    return tf.global_norm(tf.gradients(loss, xs))


def _indices(index: Any, length: int | None) -> Any:
    """Julia indices as 0-based int64: a Julia vector arrives 0-based, a tensor 1-based, None
    means all."""
    if index is None:
        if length is None:
            raise ArgumentValueError(
                "scatter", "index", ":", "used on a dimension of known size", "set_shape first"
            )
        return tf.range(length, dtype=tf.int64)
    if isinstance(index, (tf.Tensor, tf.Variable)):
        return tf.reshape(tf.cast(index, tf.int64) - 1, [-1])
    return tf.constant(np.asarray(index, dtype=np.int64).reshape(-1))


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
    rows = _indices(index, ref.shape[0])
    return _SCATTER[kind](ref, tf.reshape(rows, [-1, 1]), _updates(ref, updates))


def scatter2(kind: str, ref: Any, rows: Any, cols: Any, updates: Any) -> Any:
    """As `scatter`, for `ref[rows, cols]` of a matrix; `updates` in row-major order."""
    ref = tf.convert_to_tensor(ref)
    i, j = tf.meshgrid(_indices(rows, ref.shape[0]), _indices(cols, ref.shape[1]), indexing="ij")
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
    rows = _indices(index, None)
    return tf.scatter_nd(tf.reshape(rows, [-1, 1]), values, tf.reshape(tf.cast(n, tf.int64), [1]))


def diff(x: Any, axis: int | None) -> Any:
    """Julia's `diff`: differences of neighbours along `axis` (a vector's only one if None)."""
    x = tf.convert_to_tensor(x)
    if axis is None and x.shape.rank != 1:
        raise ArgumentValueError("diff", "dims", None, "given for a matrix", "diff(A; dims=1)")
    axis = 0 if axis is None else axis
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


def gpu_facts() -> dict[str, Any]:
    """What the host knows about GPUs: TF's CUDA build, the GPUs it sees, nvcc, and why none."""
    from devplace._tf import GPU_MESSAGES, driver_present
    from devplace.cli.devices import why_no_gpu

    build = tf.sysconfig.get_build_info()
    gpus = [d.name for d in tf.config.list_physical_devices("GPU")]
    nvcc = shutil.which("nvcc")
    facts: dict[str, Any] = {
        "gpus": gpus,
        "built_with_cuda": bool(tf.test.is_built_with_cuda()),
        "cuda_version": build.get("cuda_version"),
        "cudnn_version": build.get("cudnn_version"),
        "nvcc": nvcc,
        "why_none": "",
    }
    if not gpus:
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        facts["why_none"] = why_no_gpu(
            None, facts["built_with_cuda"], driver_present(), visible, list(GPU_MESSAGES)
        )
    return facts


# --- random variables (ADCME's names and keywords, tensorflow_probability's meanings) ----------


def _f64(x: Any) -> Any:
    return tf.cast(tf.convert_to_tensor(x), F64)


def _uniform(shape: list[int]) -> Any:
    """Uniform on the open interval (0, 1)."""
    tiny = np.finfo(np.float64).tiny
    return tf.random.uniform(shape, minval=tiny, maxval=1.0, dtype=F64)


def _normal(shape: list[int]) -> Any:
    return tf.random.normal(shape, dtype=F64)


def _full(shape: list[int], *params: Any) -> tuple[list[int], list[Any]]:
    """The sample shape followed by the parameters' broadcast shape, and the parameters."""
    values = [_f64(p) for p in params]
    batch = tf.TensorShape([])
    for v in values:
        batch = tf.broadcast_static_shape(batch, v.shape)
    return shape + batch.as_list(), values


def _half_cauchy(shape: list[int]) -> Any:
    return tf.abs(tf.tan(math.pi * (_uniform(shape) - 0.5)))


def _von_mises(shape: list[int], loc: Any, concentration: Any) -> Any:
    """Best and Fisher's rejection sampler, all entries at once until each is accepted."""
    full, (loc, k) = _full(shape, loc, concentration)
    k = tf.broadcast_to(k, full)
    tau = 1.0 + tf.sqrt(1.0 + 4.0 * k * k)
    rho = (tau - tf.sqrt(2.0 * tau)) / (2.0 * k)
    r = (1.0 + rho * rho) / (2.0 * rho)

    def body(done: Any, x: Any) -> tuple[Any, Any]:
        z = tf.cos(math.pi * _uniform(full))
        f = (1.0 + r * z) / (r + z)
        c = k * (r - f)
        u2 = _uniform(full)
        accept = (c * (2.0 - c) - u2 > 0) | (tf.math.log(c / u2) + 1.0 - c >= 0)
        theta = tf.sign(_uniform(full) - 0.5) * tf.acos(tf.clip_by_value(f, -1.0, 1.0))
        return done | accept, tf.where(done, x, theta)

    start = (tf.zeros(full, tf.bool), tf.zeros(full, F64))
    _, theta = tf.while_loop(lambda done, _: ~tf.reduce_all(done), body, start)
    return tf.math.floormod(theta + loc + math.pi, 2 * math.pi) - math.pi


def _sinh_arcsinh(shape: list[int], loc: Any, scale: Any, skewness: Any, tailweight: Any) -> Any:
    full, (loc, scale, skew, tail) = _full(shape, loc, scale, skewness, tailweight)
    f = tf.sinh((tf.asinh(_normal(full)) + skew) * tail)
    return loc + scale * f * (2.0 / tf.sinh(tf.asinh(_f64(2.0)) * tail))


def _inverse_gaussian(shape: list[int], loc: Any, concentration: Any) -> Any:
    """Michael, Schucany and Haas's transformation of a normal variable."""
    full, (mu, lam) = _full(shape, loc, concentration)
    y = _normal(full) ** 2
    x = mu + mu * mu * y / (2 * lam) - mu / (2 * lam) * tf.sqrt(4 * mu * lam * y + (mu * y) ** 2)
    return tf.where(_uniform(full) <= mu / (mu + x), x, mu * mu / x)


def _ndtr(x: Any) -> Any:
    """The standard normal distribution function."""
    return 0.5 * (1.0 + tf.math.erf(x / math.sqrt(2.0)))


def _truncated_normal(shape: list[int], loc: Any, scale: Any, low: Any, high: Any) -> Any:
    full, (loc, scale, low, high) = _full(shape, loc, scale, low, high)
    a, b = _ndtr((low - loc) / scale), _ndtr((high - loc) / scale)
    return loc + scale * tf.math.ndtri(a + _uniform(full) * (b - a))


def _binomial(shape: list[int], total_count: Any, probs: Any = None, logits: Any = None) -> Any:
    p = tf.sigmoid(_f64(logits)) if probs is None else _f64(probs)
    full, (n, p) = _full(shape, total_count, p)
    seed = tf.random.uniform([2], maxval=2**31 - 1, dtype=tf.int64)
    return tf.random.stateless_binomial(full, seed, counts=n, probs=p, output_dtype=F64)


def _bernoulli(shape: list[int], probs: Any = None, logits: Any = None) -> Any:
    p = tf.sigmoid(_f64(logits)) if probs is None else _f64(probs)
    full, (p,) = _full(shape, p)
    return tf.cast(_uniform(full) < p, F64)


def _student_t(shape: list[int], df: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    full, (df, loc, scale) = _full(shape, df, loc, scale)
    chi2 = tf.random.gamma([], alpha=tf.broadcast_to(df / 2, full), beta=0.5, dtype=F64)
    return loc + scale * _normal(full) / tf.sqrt(chi2 / df)


def _broadcast(f: Callable[..., Any]) -> Callable[..., Any]:
    """`f(full_shape, *params)` as `(shape, *params)`: the parameters broadcast against the
    sample shape, giving shape + batch shape."""

    def sample_full(shape: list[int], *params: Any) -> Any:
        full, values = _full(shape, *params)
        return f(full, *values)

    return sample_full


# Sampling functions `(shape, **parameters) -> float64 tensor`, by ADCME's name.
_SAMPLERS: dict[str, Callable[..., Any]] = {
    "uniform": lambda s, low=0.0, high=1.0: _broadcast(lambda f, a, b: a + (b - a) * _uniform(f))(
        s, low, high
    ),
    "normal": lambda s, loc=0.0, scale=1.0: _broadcast(lambda f, m, d: m + d * _normal(f))(
        s, loc, scale
    ),
    "beta": lambda s, concentration1, concentration0: _broadcast(
        lambda f, a, b: _ratio(
            tf.random.gamma([], alpha=tf.broadcast_to(a, f), dtype=F64),
            tf.random.gamma([], alpha=tf.broadcast_to(b, f), dtype=F64),
        )
    )(s, concentration1, concentration0),
    "bernoulli": _bernoulli,
    "gamma": lambda s, concentration, rate=1.0: _broadcast(
        lambda f, a, b: tf.random.gamma([], alpha=tf.broadcast_to(a, f), beta=b, dtype=F64)
    )(s, concentration, rate),
    "truncatednormal": _truncated_normal,
    "binomial": _binomial,
    "cauchy": lambda s, loc=0.0, scale=1.0: _broadcast(
        lambda f, m, d: m + d * tf.tan(math.pi * (_uniform(f) - 0.5))
    )(s, loc, scale),
    "chi": lambda s, df: _broadcast(
        lambda f, k: tf.sqrt(
            tf.random.gamma([], alpha=tf.broadcast_to(k / 2, f), beta=0.5, dtype=F64)
        )
    )(s, df),
    "chi2": lambda s, df: _broadcast(
        lambda f, k: tf.random.gamma([], alpha=tf.broadcast_to(k / 2, f), beta=0.5, dtype=F64)
    )(s, df),
    "exponential": lambda s, rate=1.0: _broadcast(lambda f, r: -tf.math.log(_uniform(f)) / r)(
        s, rate
    ),
    "gumbel": lambda s, loc=0.0, scale=1.0: _broadcast(
        lambda f, m, d: m - d * tf.math.log(-tf.math.log(_uniform(f)))
    )(s, loc, scale),
    "halfcauchy": lambda s, loc=0.0, scale=1.0: _broadcast(lambda f, m, d: m + d * _half_cauchy(f))(
        s, loc, scale
    ),
    "halfnormal": lambda s, scale=1.0: _broadcast(lambda f, d: d * tf.abs(_normal(f)))(s, scale),
    "horseshoe": lambda s, scale=1.0: _broadcast(lambda f, d: d * _half_cauchy(f) * _normal(f))(
        s, scale
    ),
    "inversegamma": lambda s, concentration, scale=1.0: _broadcast(
        lambda f, a, b: 1.0 / tf.random.gamma([], alpha=tf.broadcast_to(a, f), beta=b, dtype=F64)
    )(s, concentration, scale),
    "inversegaussian": _inverse_gaussian,
    "kumaraswamy": lambda s, concentration1=1.0, concentration0=1.0: _broadcast(
        lambda f, a, b: (1.0 - (1.0 - _uniform(f)) ** (1.0 / b)) ** (1.0 / a)
    )(s, concentration1, concentration0),
    "pareto": lambda s, concentration, scale=1.0: _broadcast(
        lambda f, a, m: m * _uniform(f) ** (-1.0 / a)
    )(s, concentration, scale),
    "sinharcsinh": lambda s, loc=0.0, scale=1.0, skewness=0.0, tailweight=1.0: _sinh_arcsinh(
        s, loc, scale, skewness, tailweight
    ),
    "studentt": _student_t,
    "vonmises": lambda s, loc=0.0, concentration=1.0: _von_mises(s, loc, concentration),
    "poisson": lambda s, rate: _broadcast(
        lambda f, r: tf.random.poisson(lam=tf.broadcast_to(r, f), shape=[], dtype=F64)
    )(s, rate),
}


def _sampler(kind: str) -> Callable[..., Any]:
    """The sampling function `(shape, **parameters) -> float64 tensor` of ADCME's `kind`."""
    return _SAMPLERS[kind]


def _ratio(a: Any, b: Any) -> Any:
    return a / (a + b)


#: The random variables ADCME names (lowercase), each with the parameters it takes.
DISTRIBUTIONS = (
    "uniform normal beta bernoulli gamma truncatednormal binomial cauchy chi chi2 exponential "
    "gumbel halfcauchy halfnormal horseshoe inversegamma inversegaussian kumaraswamy pareto "
    "sinharcsinh studentt vonmises poisson"
).split()


def sample(kind: str, shape: Sequence[int], numpy_type: Any, **params: Any) -> Any:
    """Samples of ADCME's random variable `kind` (e.g. `"gamma"`), of shape `shape` followed by
    the parameters' shape, cast to `numpy_type`."""
    if kind not in DISTRIBUTIONS:
        raise ArgumentValueError(
            "sample", "kind", kind, f"one of {', '.join(DISTRIBUTIONS)}", "e.g. 'normal'"
        )
    try:
        out = _sampler(kind)(list(shape), **params)
    except TypeError as err:
        raise ArgumentValueError(
            kind, "keywords", params, "the distribution's parameters", str(err)
        ) from err
    return tf.cast(out, numpy_type)


def categorical(n: Any, logits: Any, numpy_type: Any) -> Any:
    """ADCME's `categorical`: `n` class indices (from 1) per row of `logits`."""
    logits = tf.cast(tf.convert_to_tensor(logits), numpy_type)
    vector = logits.shape.rank == 1
    if vector:
        logits = tf.reshape(logits, [1, -1])
    out = tf.random.categorical(logits, n)
    return (tf.reshape(out, [-1]) if vector else out) + 1


def choice(inputs: Any, n: Any, replace: bool) -> Any:
    """ADCME's `choice`: `n` rows of `inputs`, with or without replacement."""
    inputs = tf.convert_to_tensor(inputs)
    rows = tf.shape(inputs, out_type=tf.int64)[0]
    if replace:
        index = tf.random.categorical(tf.zeros(tf.stack([1, rows]), F64), n)[0]
    else:
        index = tf.nn.top_k(tf.random.uniform(tf.reshape(rows, [1]), dtype=F64), n).indices
    return tf.gather(inputs, index)


def _normal_lp(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    z = (x - loc) / scale
    return -0.5 * z * z - tf.math.log(scale) - 0.5 * math.log(2 * math.pi)


def _gamma_lp(x: Any, concentration: Any, rate: Any = 1.0) -> Any:
    a, b = concentration, rate
    return a * tf.math.log(b) + (a - 1) * tf.math.log(x) - b * x - tf.math.lgamma(a)


#: log densities (log mass functions) by ADCME's distribution type name.
LOG_PROBS: dict[str, Callable[..., Any]] = {
    "Normal": _normal_lp,
    "Uniform": lambda x, low=0.0, high=1.0: tf.where(
        (x >= low) & (x < high), -tf.math.log(high - low) + 0 * x, -np.inf + 0 * x
    ),
    "Exponential": lambda x, rate=1.0: tf.math.log(rate) - rate * x,
    "Gamma": _gamma_lp,
    "Chi2": lambda x, df: _gamma_lp(x, df / 2, 0.5 + 0 * df),
    "Beta": lambda x, concentration1, concentration0: (
        (concentration1 - 1) * tf.math.log(x)
        + (concentration0 - 1) * tf.math.log1p(-x)
        - tf.math.lbeta(tf.stack([concentration1 + 0 * x, concentration0 + 0 * x], axis=-1))
    ),
    "Bernoulli": lambda x, probs: x * tf.math.log(probs) + (1 - x) * tf.math.log1p(-probs),
    "Poisson": lambda x, rate: x * tf.math.log(rate) - rate - tf.math.lgamma(x + 1),
    "Cauchy": lambda x, loc=0.0, scale=1.0: (
        -tf.math.log(math.pi * scale * (1 + ((x - loc) / scale) ** 2))
    ),
    "HalfNormal": lambda x, scale=1.0: _normal_lp(x, 0 * x, scale) + math.log(2.0),
    "Gumbel": lambda x, loc=0.0, scale=1.0: (
        -(x - loc) / scale - tf.exp(-(x - loc) / scale) - tf.math.log(scale)
    ),
    "StudentT": lambda x, df, loc=0.0, scale=1.0: (
        tf.math.lgamma((df + 1) / 2)
        - tf.math.lgamma(df / 2)
        - 0.5 * tf.math.log(df * math.pi)
        - tf.math.log(scale)
        - (df + 1) / 2 * tf.math.log1p(((x - loc) / scale) ** 2 / df)
    ),
    "MultivariateNormalDiag": lambda x, loc, scale_diag=1.0: tf.reduce_sum(
        _normal_lp(x, loc, _f64(scale_diag)), axis=-1
    ),
}


def log_prob(kind: str, x: Any, **params: Any) -> Any:
    """`logpdf(dist, x)`: the log density of ADCME distribution `kind` at `x` (float64)."""
    if kind not in LOG_PROBS:
        raise ArgumentValueError(
            "logpdf",
            "dist",
            kind,
            f"one of {', '.join(LOG_PROBS)}",
            "devplace computes log densities of these without tensorflow_probability",
        )
    return LOG_PROBS[kind](_f64(x), **{k: _f64(v) for k, v in params.items()})
