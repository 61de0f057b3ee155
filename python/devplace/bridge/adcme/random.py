"""ADCME's random variables (`julia/DevPlace/src/adcme/random.jl`): samples by ADCME's names and
tensorflow_probability's parameters and meanings, drawn with TensorFlow's own random ops;
`categorical`, `choice`, and log densities for `logpdf`. None of them imports
tensorflow_probability: devplace requires it (pyproject.toml) for `BFGS!(f, x0)` alone
(`optim.bfgs_minimize`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from devplace.adapter._tf import tf
from devplace.bridge.adcme.calls import F64, as_f64
from devplace.core.errors import ArgumentValueError

__all__ = [
    "DISTRIBUTIONS",
    "LOG_PROBS",
    "categorical",
    "choice",
    "log_prob",
    "sample",
]


def _uniform(shape: list[int]) -> Any:
    """Uniform on the open interval (0, 1)."""
    tiny = np.finfo(np.float64).tiny
    return tf.random.uniform(shape, minval=tiny, maxval=1.0, dtype=F64)


def _normal(shape: list[int]) -> Any:
    return tf.random.normal(shape, dtype=F64)


def _full(shape: list[int], *params: Any) -> tuple[list[int], list[Any]]:
    """The sample shape followed by the parameters' broadcast shape, and the parameters."""
    values = [as_f64(p) for p in params]
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
    return loc + scale * f * (2.0 / tf.sinh(tf.asinh(as_f64(2.0)) * tail))


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
    p = tf.sigmoid(as_f64(logits)) if probs is None else as_f64(probs)
    full, (n, p) = _full(shape, total_count, p)
    seed = tf.random.uniform([2], maxval=2**31 - 1, dtype=tf.int64)
    return tf.random.stateless_binomial(full, seed, counts=n, probs=p, output_dtype=F64)


def _bernoulli(shape: list[int], probs: Any = None, logits: Any = None) -> Any:
    p = tf.sigmoid(as_f64(logits)) if probs is None else as_f64(probs)
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


# A sample of MultivariateNormalDiag (shape + the event shape of loc) is one of normal's.
_SAMPLERS["multivariatenormaldiag"] = lambda s, loc, scale_diag=1.0: _SAMPLERS["normal"](
    s, loc, scale_diag
)


def _ratio(a: Any, b: Any) -> Any:
    return a / (a + b)


#: The random variables ADCME names (lowercase), each with the parameters it takes.
DISTRIBUTIONS = tuple(_SAMPLERS)


def sample(kind: str, shape: Sequence[int], numpy_type: Any, **params: Any) -> Any:
    """Samples of ADCME's random variable `kind` (e.g. `"gamma"`), of shape `shape` followed by
    the parameters' shape, cast to `numpy_type`."""
    if kind not in DISTRIBUTIONS:
        raise ArgumentValueError(
            "sample", "kind", kind, f"one of {', '.join(DISTRIBUTIONS)}", "e.g. 'normal'"
        )
    try:
        out = _SAMPLERS[kind](list(shape), **params)
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
        _normal_lp(x, loc, as_f64(scale_diag)), axis=-1
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
    return LOG_PROBS[kind](as_f64(x), **{k: as_f64(v) for k, v in params.items()})
