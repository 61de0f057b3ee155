# ADCME's src/random.jl: random tensors (uniform, normal, and ADCME's tensorflow_probability
# distributions by their lowercase names: gamma, beta, poisson, ...), categorical, choice, seed!,
# and distribution objects for rand and logpdf. `binomial` is not exported (Base has one):
# `DevPlace.binomial(10; total_count=5, probs=0.3)`. Sampled by TensorFlow's own random ops in
# python/devplace/bridge/adcme/random.py; float64 unless `dtype` says otherwise.

const DISTRIBUTION_NAMES = (:uniform, :normal, :beta, :bernoulli, :gamma, :truncatednormal,
    :binomial, :cauchy, :chi, :chi2, :exponential, :gumbel, :halfcauchy, :halfnormal, :horseshoe,
    :inversegamma, :inversegaussian, :kumaraswamy, :pareto, :sinharcsinh, :studentt, :vonmises,
    :poisson)

"Dimensions as a vector of Ints: `(10, 5)`, `([10, 5],)` or `((10, 5),)`."
sample_shape(shape::Tuple{Vararg{Integer}}) = Int[shape...]
sample_shape(shape::Tuple{Union{AbstractVector{<:Integer},Tuple}}) = Int[shape[1]...]

for name in DISTRIBUTION_NAMES
    kind = string(name)
    @eval begin
        @doc $("""
            $name(shape...; dtype=Float64, parameters...) -> PyObject
            $name(; parameters...) -> PyObject

        A tensor of `shape` (dimensions, or one vector or tuple of them) with independent
        `$name` samples, followed by the parameters' own shape when they are arrays; without a
        shape, one scalar sample. Parameters by tensorflow_probability's names, as in ADCME
        (`uniform`: `low`, `high`; `normal`: `loc`, `scale`; `gamma`: `concentration`, `rate`;
        `beta`: `concentration1`, `concentration0`; `poisson`: `rate`; ...).
        """)
        function $name(shape...; dtype::Type = Float64, kwargs...)
            bridge_rule("adcme.random", "sample", $kind, sample_shape(shape), dtype; kwargs...)
        end
    end
end

"""
    seed!(k::Integer)

Set the graph-level random seed (`tf.random.set_random_seed`): random ops made after it give
the same sequence in each new session. Call it after `reset_default_graph()`.
"""
seed!(k::Integer) = tfcall("random.set_random_seed", Int(k))

"""
    categorical(n; logits, dtype=Float64) -> PyObject

`n` samples of class indices (from 1) with unnormalised log-probabilities `logits` (a vector,
or a matrix with one row per batch entry: then `n` per row); equal ones when not given. int64.
"""
function categorical(n::Union{PyObject,Integer}; dtype::Type = Float64, logits = nothing)
    logits === nothing && (logits = ones(dtype, n isa Integer ? n : 1))
    bridge_rule("adcme.random", "categorical", n, logits, dtype)
end

"""
    choice(inputs, n_samples; replace=false) -> PyObject

`n_samples` rows (entries, for a vector) of `inputs` chosen at random, with or without
replacement.
"""
choice(inputs::Union{PyObject,AbstractArray}, n_samples::Union{PyObject,Integer}; replace::Bool = false) =
    bridge_rule("adcme.random", "choice", inputs, n_samples isa Integer ? Int(n_samples) : n_samples, replace)

"""
    ADCMEDistribution

A distribution of ADCME's (`DevPlace.Normal(0.0, 1.0)`, `DevPlace.Gamma(2.0, 1.0)`, ... with
tensorflow_probability's parameter names and order): `rand(d, shape...)` samples it and
`logpdf(d, x)` gives the log density at `x`.
"""
struct ADCMEDistribution
    kind::String
    params::Dict{Symbol,Any}
end

# Each type: its sampler's name, then its parameters in order.
const ADCME_DISTRIBUTIONS = (
    :Normal => ("normal", (:loc, :scale)), :Uniform => ("uniform", (:low, :high)),
    :Beta => ("beta", (:concentration1, :concentration0)), :Bernoulli => ("bernoulli", (:logits, :probs)),
    :Gamma => ("gamma", (:concentration, :rate)),
    :TruncatedNormal => ("truncatednormal", (:loc, :scale, :low, :high)),
    :Binomial => ("binomial", (:total_count, :logits, :probs)), :Cauchy => ("cauchy", (:loc, :scale)),
    :Chi => ("chi", (:df,)), :Chi2 => ("chi2", (:df,)), :Exponential => ("exponential", (:rate,)),
    :Gumbel => ("gumbel", (:loc, :scale)), :HalfCauchy => ("halfcauchy", (:loc, :scale)),
    :HalfNormal => ("halfnormal", (:scale,)), :Horseshoe => ("horseshoe", (:scale,)),
    :InverseGamma => ("inversegamma", (:concentration, :scale)),
    :InverseGaussian => ("inversegaussian", (:loc, :concentration)),
    :Kumaraswamy => ("kumaraswamy", (:concentration1, :concentration0)),
    :Pareto => ("pareto", (:concentration, :scale)),
    :SinhArcsinh => ("sinharcsinh", (:loc, :scale, :skewness, :tailweight)),
    :StudentT => ("studentt", (:df, :loc, :scale)), :VonMises => ("vonmises", (:loc, :concentration)),
    :Poisson => ("poisson", (:rate,)), :MultivariateNormalDiag => ("multivariatenormaldiag", (:loc, :scale_diag)))

for (T, (sampler, names)) in ADCME_DISTRIBUTIONS
    @eval begin
        @doc $("""
            DevPlace.$T($(join(names, ", ")); ...) -> ADCMEDistribution

        ADCME's `$T` distribution (tensorflow_probability's parameters, by position or
        keyword), for `rand` and `logpdf`.
        """)
        function $T(args...; kwargs...)
            length(args) <= $(length(names)) || wrong_argument($(string(T)), "arguments", args,
                $(string("at most ", length(names), ": ", join(names, ", "))),
                $(string("DevPlace.", T, "(", join(names, "=..., "), "=...)")))
            params = Dict{Symbol,Any}(zip($names, args))
            merge!(params, Dict{Symbol,Any}(kwargs))
            ADCMEDistribution($(string(T)), params)
        end
    end
end

const SAMPLERS = Dict(string(T) => s for (T, (s, _)) in ADCME_DISTRIBUTIONS)

"""
    rand(d::ADCMEDistribution, shape...) -> PyObject

Samples of `d`: one without a shape, else a tensor of that shape (an integer, several, a tuple
or a vector) followed by the parameters' shape (`rand(DevPlace.MultivariateNormalDiag(loc =
zeros(2)), n)` is n×2). TensorFlow's random ops draw them, so `seed!` makes them repeat.
"""
sample_of(d::ADCMEDistribution, dims::Vector{Int}) =
    bridge_rule("adcme.random", "sample", SAMPLERS[d.kind], dims, Float64; d.params...)
Base.rand(d::ADCMEDistribution) = sample_of(d, Int[])
Base.rand(d::ADCMEDistribution, dims::Dims) = sample_of(d, Int[dims...])
Base.rand(d::ADCMEDistribution, dims::AbstractVector{<:Integer}) = sample_of(d, Int[dims...])
Base.rand(d::ADCMEDistribution, d1::Integer, dims::Integer...) = sample_of(d, Int[d1, dims...])

"""
    logpdf(dist::ADCMEDistribution, x) -> PyObject

The log density (log probability for discrete ones) of `dist` at `x`, float64.
"""
logpdf(dist::ADCMEDistribution, x) = bridge_rule("adcme.random", "log_prob", dist.kind, x; dist.params...)
