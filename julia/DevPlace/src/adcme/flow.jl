# ADCME's src/flow.jl: normalizing flows. Each flow (a `FlowOp`) maps data x to a latent z with
# `forward(flow, x) -> (z, log|det ∂z/∂x|)` and back with `backward(flow, z) -> (x, log|det ∂x/∂z|)`
# (one log-determinant per row of x, or a number for all); a `NormalizingFlowModel` chains flows
# onto a prior. Flows are built from DevPlace's tensor functions; the autoregressive network,
# the rational-quadratic spline and the wrapped bijectors are tensorflow_probability's, as in ADCME.

using LinearAlgebra: lu

"""
    FlowOp

The supertype of normalizing-flow operators (`LinearFlow`, `MAF`, ...). A flow of your own is a
subtype with methods `DevPlace.forward(fo, x) -> (z, logdet)` and `DevPlace.backward(fo, z) ->
(x, logdet)` (or, as in ADCME, `forward` and `backward` defined in `Main`).
"""
abstract type FlowOp end

const TFP = lazy_pyobject(() -> request(OP_IMPORT | BY_HANDLE, ("tensorflow_probability",)))
const FLOW_NAMES = Ref(0)

"A new name for a flow's variables (ADCME draws a random string)."
flow_name(prefix) = string(prefix, "_", FLOW_NAMES[] += 1)

const FlowInput = Union{Array{<:Real},PyObject}

"""
    forward(fo, x) -> (z, logdet)

The flow `fo` (a `FlowOp`, `NormalizingFlow` or `NormalizingFlowModel`) applied to the data `x`
(one sample a row). Not exported, as in ADCME: `DevPlace.forward`.
"""
function forward(fo::FlowOp, x::FlowInput)
    isdefined(Main, :forward) && Main.forward !== forward || throw(ArgumentError(string(
        "forward: no method for the flow ", typeof(fo), ". Hint: define DevPlace.forward(fo::",
        typeof(fo), ", x) (or forward in Main, as ADCME allows)")))
    return Main.forward(fo, x)
end

"""
    backward(fo, z) -> (x, logdet)

The inverse of `forward`: the data of the latent `z`. Not exported, as in ADCME:
`DevPlace.backward`.
"""
function backward(fo::FlowOp, z::FlowInput)
    isdefined(Main, :backward) && Main.backward !== backward || throw(ArgumentError(string(
        "backward: no method for the flow ", typeof(fo), ". Hint: define DevPlace.backward(fo::",
        typeof(fo), ", z) (or backward in Main, as ADCME allows)")))
    return Main.backward(fo, z)
end

# ----------------------------------------------------------------------------------------------
"""
    LinearFlow(dim)
    LinearFlow(indim, outdim, A=missing, b=missing; name=missing)
    LinearFlow(A, b=missing; name=missing)

The linear flow `x = Az + b` (`A` is `outdim×indim`, `b` a length-`outdim` vector; variables
when missing: `A` the identity if square, else random). `A` need not be square: then the
log-determinant is `-log det(AᵀA)/2` and `backward`'s is `nothing`.
"""
mutable struct LinearFlow <: FlowOp
    dim::Int64
    indim::Int64
    outdim::Int64
    A::PyObject
    b::PyObject
end

function LinearFlow(indim::Int64, outdim::Int64, A::Union{PyObject,Array{<:Real,2},Missing} = missing,
                    b::Union{PyObject,Array{<:Real,1},Missing} = missing; name::Union{String,Missing} = missing)
    name = coalesce(name, flow_name("LinearFlow"))
    if A === missing
        A = indim == outdim ? get_variable(Matrix{Float64}(I, indim, indim); name = name * "_A") :
            get_variable(Float64; shape = [outdim, indim], name = name * "_A")
    end
    b = reshape(constant(coalesce(b, get_variable(zeros(1, outdim); name = name * "_b"))), (1, -1))
    A = constant(A)
    size(A) == (outdim, indim) || throw(DimensionMismatch(string("LinearFlow: A must be ",
        (outdim, indim), " (outdim×indim), got ", size(A))))
    size(b) == (1, outdim) || throw(DimensionMismatch(string("LinearFlow: b must have ", outdim,
        " entries (outdim), got ", size(b))))
    return LinearFlow(outdim, indim, outdim, A, b)
end

LinearFlow(dim::Int64) = LinearFlow(dim, dim)

function LinearFlow(A::Union{PyObject,Array{<:Real,2}}, b::Union{PyObject,Array{<:Real},Missing} = missing;
                    name::Union{String,Missing} = missing)
    outdim, indim = size(A)
    b = reshape(constant(coalesce(b, zeros(outdim))), (1, -1))
    return LinearFlow(outdim, indim, outdim, constant(A), b)
end

function forward(fo::LinearFlow, x::FlowInput)
    logdet = fo.indim == fo.outdim ? -log(abs(det(fo.A))) : -log(abs(det(fo.A' * fo.A))) / 2
    return solve_batch(fo.A, x - fo.b), logdet * ones(size(x, 1))
end

backward(fo::LinearFlow, z::FlowInput) =
    (z * fo.A' + fo.b, fo.indim == fo.outdim ? log(abs(det(fo.A))) : nothing)

# ----------------------------------------------------------------------------------------------
"""
    AffineConstantFlow(dim, name=missing; scale=true, shift=true)

The flow `z = x .* exp(s) + t` with variables `s` and `t` (1×dim rows; zero when `scale` or
`shift` is false).
"""
mutable struct AffineConstantFlow <: FlowOp
    dim::Int64
    s::Union{Missing,PyObject}
    t::Union{Missing,PyObject}
end

function AffineConstantFlow(dim::Int64, name::Union{String,Missing} = missing; scale::Bool = true,
                            shift::Bool = true)
    name = coalesce(name, flow_name("AffineConstantFlow"))
    s = scale ? get_variable(Float64; shape = [1, dim], name = name * "_s") : missing
    t = shift ? get_variable(Float64; shape = [1, dim], name = name * "_t") : missing
    return AffineConstantFlow(dim, s, t)
end

function forward(fo::AffineConstantFlow, x::FlowInput)
    s = coalesce(fo.s, zeros_like(x))
    t = coalesce(fo.t, zeros_like(x))
    return x .* exp(s) + t, sum(s; dims = 2)
end

function backward(fo::AffineConstantFlow, z::FlowInput)
    s = coalesce(fo.s, zeros_like(z))
    t = coalesce(fo.t, zeros_like(z))
    return (z - t) .* exp(-s), sum(-s; dims = 2)
end

# ----------------------------------------------------------------------------------------------
"""
    ActNorm(dim, name=missing)

An `AffineConstantFlow` whose `s` and `t` are set, on the first run of `forward`, from that
run's data so that its output has mean 0 and standard deviation 1 per column (printing
"ActNorm: initializing s and t..."); afterwards they are trained as variables.
"""
mutable struct ActNorm <: FlowOp
    dim::Int64
    fo::AffineConstantFlow
    initialized::PyObject
end

function ActNorm(dim::Int64, name::Union{String,Missing} = missing)
    name = coalesce(name, flow_name("ActNorm"))
    return ActNorm(dim, AffineConstantFlow(dim), get_variable(1; name = name))
end

function forward(actnorm::ActNorm, x::FlowInput)
    x = constant(x)
    fo = actnorm.fo
    st = tf.cond(tf.equal(actnorm.initialized, constant(0)), () -> (fo.s, fo.t), function ()
        s0 = reshape(-log(std(x; dims = 1)), 1, :)
        t0 = reshape(mean(-x .* exp(s0); dims = 1), 1, :)
        s, t = assign([fo.s, fo.t], [s0, t0])
        message = tfcall("print", "ActNorm: initializing s and t...")
        return bind(s, assign(actnorm.initialized, 0), message), t
    end)
    fo.s, fo.t = st[1], st[2]
    return forward(fo, x)
end

backward(actnorm::ActNorm, z::FlowInput) = backward(actnorm.fo, z)

# ----------------------------------------------------------------------------------------------
"""
    SlowMAF(dim, parity, nns)

A masked autoregressive flow computed one coordinate at a time: `z[order[i]] = x[i] exp(sᵢ) + tᵢ`
where `(sᵢ, tᵢ)` are the two columns of `nns[i-1](x[:, 1:i-1])` (`dim - 1` functions; for the
first coordinate a variable pair). `order` is `1:dim`, reversed when `parity` is false.
"""
mutable struct SlowMAF <: FlowOp
    dim::Int64
    layers::Array{Function}
    order::Array{Int64}
    p::PyObject
end

function SlowMAF(dim::Int64, parity::Bool, nns::Array)
    length(nns) == dim - 1 || throw(ArgumentError(string("SlowMAF: nns must hold dim - 1 = ",
        dim - 1, " functions, got ", length(nns), ". Hint: one per coordinate after the first")))
    return SlowMAF(dim, nns, parity ? collect(1:dim) : collect(dim:-1:1), Variable(zeros(2)))
end

"The shift and log-scale of coordinate `i` of a SlowMAF, from the coordinates before it."
function slowmaf_st(fo::SlowMAF, x, i)
    st = i == 1 ? repeat(fo.p', size(x, 1), 1) : fo.layers[i-1](x[:, 1:i-1])
    size(st, 2) == 2 || throw(DimensionMismatch(string("SlowMAF: network ", i - 1, " must give ",
        "2 columns (s and t), got ", size(st))))
    return st[:, 1], st[:, 2]
end

function forward(fo::SlowMAF, x::FlowInput)
    z = tf.zeros_like(x)
    log_det = zeros(size(x, 1))
    for i in 1:fo.dim
        s, t = slowmaf_st(fo, x, i)
        z = scatter_update(z, :, fo.order[i], x[:, i] * exp(s) + t)
        log_det += s
    end
    return z, log_det
end

function backward(fo::SlowMAF, z::FlowInput)
    x = tf.zeros_like(z)
    log_det = zeros(size(z, 1))
    for i in 1:fo.dim
        s, t = slowmaf_st(fo, x, i)
        x = scatter_update(x, :, i, (z[:, fo.order[i]] - t) * exp(-s))
        log_det += -s
    end
    return x, log_det
end

# ----------------------------------------------------------------------------------------------
"""
    MAF(dim, parity, config; name=missing, activation="relu")

A masked autoregressive flow: `z = x .* exp(s) + t` (columns reversed if `parity`) where `s` and
`t` come from one `autoregressive_network` with hidden layers of `config` units (so `s[:, i]`,
`t[:, i]` depend on `x[:, 1:i-1]` only). `backward` inverts it one coordinate at a time.
"""
mutable struct MAF <: FlowOp
    dim::Int64
    net::Function
    parity::Bool
end

function MAF(dim::Int64, parity::Bool, config::Array{Int64}; name::Union{String,Missing} = missing,
             activation::Union{Nothing,String} = "relu", kwargs...)
    push!(config, 2)  # as ADCME: the network's output, s and t per coordinate
    name = coalesce(name, flow_name("MAF"))
    return MAF(dim, x -> autoregressive_network(x, config, name; activation = activation, kwargs...), parity)
end

"The log-scale and shift columns of a MAF's network at `x`."
maf_st(fo::MAF, x) = [squeeze(st; dims = 3) for st in split(fo.net(x), 2; dims = 3)]

function forward(fo::MAF, x::FlowInput)
    s, t = maf_st(fo, x)
    z = x .* exp(s) + t
    fo.parity && (z = reverse(z; dims = 2))
    return z, sum(s; dims = 2)
end

function backward(fo::MAF, z::FlowInput)
    x = zeros_like(z)
    log_det = zeros(size(z, 1))
    fo.parity && (z = reverse(z; dims = 2))
    for i in 1:fo.dim
        s, t = maf_st(fo, copy(x))
        x = scatter_update(x, :, i, (z[:, i] - t[:, i]) * exp(-s[:, i]))
        log_det += -s[:, i]
    end
    return x, log_det
end

const AUTOREGRESSIVE_NETWORKS = Dict{String,PyObject}()

"""
    autoregressive_network(x, config, scope="default"; activation="tanh", kwargs...) -> PyObject

A masked autoencoder for distribution estimation (tensorflow_probability's
`AutoregressiveNetwork`) at `x` (n×d): hidden layers of `config[1:end-1]` units, `config[end]`
outputs per coordinate (an n×d×`config[end]` tensor), output `[:, i, :]` depending only on
`x[:, 1:i-1]`. Calls with the same `scope` share one network and its weights.
"""
function autoregressive_network(x::Union{Array{Float64},PyObject}, config::Array{<:Integer},
                                scope::String = "default"; activation::Union{Nothing,String} = "tanh", kwargs...)
    x = constant(x)
    key = scope * "/autoregressive_network/"
    made = get!(AUTOREGRESSIVE_NETWORKS, key) do
        TFP.bijectors.AutoregressiveNetwork(; params = Int(config[end]),
            hidden_units = Any[Int(u) for u in config[1:end-1]], event_shape = [size(x, 2)],
            activation = activation, kwargs...)
    end
    return made(x)
end

# ----------------------------------------------------------------------------------------------
"""
    IAF(dim, parity, config; name=missing, activation="relu")

An inverse autoregressive flow: a `MAF` with `forward` and `backward` exchanged (sampling is
one pass, density evaluation one coordinate at a time). ADCME's constructor returned the `MAF`
itself; this one returns the flow its documentation describes.
"""
mutable struct IAF <: FlowOp
    maf::MAF
end

function IAF(dim::Int64, parity::Bool, config::Array{Int64}; name::Union{String,Missing} = missing,
             activation::Union{Nothing,String} = "relu", kwargs...)
    return IAF(MAF(dim, parity, config; name = name, activation = activation, kwargs...))
end

forward(fo::IAF, x::FlowInput) = backward(fo.maf, x)
backward(fo::IAF, z::FlowInput) = forward(fo.maf, z)

# ----------------------------------------------------------------------------------------------
"""
    Invertible1x1Conv(dim, name=missing)

The flow `z = xW` with `W = P L (U + diagm(S))` in LU form (P a fixed random permutation, L
unit lower triangular, U strictly upper triangular and S variables), so `log|det W| =
Σ log|Sᵢ|`.
"""
mutable struct Invertible1x1Conv <: FlowOp
    dim::Int64
    P::Array{Float64}
    L::PyObject
    S::PyObject
    U::PyObject
end

function Invertible1x1Conv(dim::Int64, name::Union{Missing,String} = missing)
    name = coalesce(name, flow_name("Invertible1x1Conv"))
    Q = lu(randn(dim, dim))
    return Invertible1x1Conv(dim, Matrix{Float64}(Q.P), get_variable(Matrix(Q.L); name = name * "_L"),
                             get_variable(diag(Q.U); name = name * "_S"),
                             get_variable(triu(Q.U, 1); name = name * "_U"))
end

invertible_W(fo::Invertible1x1Conv) =
    fo.P * (tril(fo.L, -1) + Matrix{Float64}(I, fo.dim, fo.dim)) * (triu(fo.U, 1) + diagm(fo.S))

forward(fo::Invertible1x1Conv, x::FlowInput) = (x * invertible_W(fo), sum(log(abs(fo.S))))
backward(fo::Invertible1x1Conv, z::FlowInput) = (z * inv(invertible_W(fo)), -sum(log(abs(fo.S))))

# ----------------------------------------------------------------------------------------------
"""
    AffineHalfFlow(dim, parity, s_cond=missing, t_cond=missing)

A RealNVP coupling layer: the odd columns of x (the even ones if `parity`) pass unchanged and
condition the others, `x₁ ↦ exp(s_cond(x₀)) .* x₁ + t_cond(x₀)`; `z` holds the columns from the
odd ones first, then those from the even ones. Missing `s_cond`/`t_cond` are zero.
"""
mutable struct AffineHalfFlow <: FlowOp
    dim::Int64
    parity::Bool
    s_cond::Function
    t_cond::Function
end

function AffineHalfFlow(dim::Int64, parity::Bool, s_cond::Union{Function,Missing} = missing,
                        t_cond::Union{Function,Missing} = missing)
    transformed = parity ? (dim + 1) ÷ 2 : dim ÷ 2  # the number of columns s and t act on
    s_cond = coalesce(s_cond, x -> constant(zeros(size(x, 1), transformed)))
    t_cond = coalesce(t_cond, x -> constant(zeros(size(x, 1), transformed)))
    return AffineHalfFlow(dim, parity, s_cond, t_cond)
end

function forward(fo::AffineHalfFlow, x::FlowInput)
    x = constant(x)
    odd, even = x[:, 1:2:end], x[:, 2:2:end]
    x0, x1 = fo.parity ? (even, odd) : (odd, even)
    s, t = fo.s_cond(x0), fo.t_cond(x0)
    z1 = exp(s) .* x1 + t
    return fo.parity ? [z1 x0] : [x0 z1], sum(s; dims = 2)
end

function backward(fo::AffineHalfFlow, z::FlowInput)
    z = constant(z)
    nodd = (fo.dim + 1) ÷ 2
    odd, even = z[:, 1:nodd], z[:, nodd+1:end]
    z0, z1 = fo.parity ? (even, odd) : (odd, even)
    s, t = fo.s_cond(z0), fo.t_cond(z0)
    x1 = (z1 - t) .* exp(-s)
    # The columns back in their places: odd ones first in [odd even], interleaved in x.
    columns = invperm([1:2:fo.dim; 2:2:fo.dim]) .- 1
    x = tfcall("gather", fo.parity ? [x1 z0] : [z0 x1], columns; axis = 1)
    return x, sum(-s; dims = 2)
end

# ----------------------------------------------------------------------------------------------
"""
    NeuralCouplingFlow(dim, f1, f2, K=8, B=3)

A neural spline flow coupling layer (Durkan et al. 2019): each half of the columns goes through
a rational-quadratic spline (tensorflow_probability's, `K` bins on `[-B, B]`) whose widths,
heights and derivatives are `f1`/`f2` (n×`(dim÷2)(3K-1)`) of the other half. `dim` is even.
"""
mutable struct NeuralCouplingFlow <: FlowOp
    dim::Int64
    K::Int64
    B::Int64
    f1::Function
    f2::Function
end

function NeuralCouplingFlow(dim::Int64, f1::Function, f2::Function, K::Int64 = 8, B::Int64 = 3)
    iseven(dim) || throw(ArgumentError("NeuralCouplingFlow: dim must be even, got $dim"))
    return NeuralCouplingFlow(dim, K, B, f1, f2)
end

"The rational-quadratic spline whose parameters are `f(x)`."
function coupling_spline(fo::NeuralCouplingFlow, f, x)
    K, B = fo.K, fo.B
    out = f(x)
    size(out, 2) == (3K - 1) * size(x, 2) || throw(DimensionMismatch(string("NeuralCouplingFlow: ",
        "the network must give (3K-1)·", size(x, 2), " = ", (3K - 1) * size(x, 2), " columns, got ",
        size(out, 2))))
    W, H, D = split(reshape(out, (-1, size(x, 2), 3K - 1)), [K, K, K - 1]; dims = 3)
    return TFP.bijectors.RationalQuadraticSpline(2B * softmax(W; dims = 3), 2B * softmax(H; dims = 3),
                                                 softplus(D); range_min = -B)
end

"`y` through the spline that `f(cond)` parametrizes (its inverse if `inverse`), with the log-determinant."
function spline_pass(fo::NeuralCouplingFlow, f, cond, y, inverse::Bool)
    rqs = coupling_spline(fo, f, cond)
    inverse && return rqs.inverse(y), rqs.inverse_log_det_jacobian(y, 1)
    return rqs.forward(y), rqs.forward_log_det_jacobian(y, 1)
end

"The first and second halves of the columns of `x`."
coupling_halves(fo::NeuralCouplingFlow, x) = (x = constant(x); (x[:, 1:fo.dim÷2], x[:, fo.dim÷2+1:end]))

function forward(fo::NeuralCouplingFlow, x::FlowInput)
    lower, upper = coupling_halves(fo, x)
    upper, ld1 = spline_pass(fo, fo.f1, lower, upper, false)
    lower, ld2 = spline_pass(fo, fo.f2, upper, lower, false)
    return [lower upper], ld1 + ld2
end

function backward(fo::NeuralCouplingFlow, z::FlowInput)
    lower, upper = coupling_halves(fo, z)
    lower, ld1 = spline_pass(fo, fo.f2, upper, lower, true)
    upper, ld2 = spline_pass(fo, fo.f1, lower, upper, true)
    return [lower upper], ld1 + ld2
end

# ----------------------------------------------------------------------------------------------
"""
    InvertFlow(fo::FlowOp)

The flow whose `forward` is `fo`'s `backward` and the other way round.
"""
mutable struct InvertFlow <: FlowOp
    dim::Int64
    o::FlowOp
end

InvertFlow(fo::FlowOp) = InvertFlow(fo.dim, fo)
forward(fo::InvertFlow, x::FlowInput) = backward(fo.o, x)
backward(fo::InvertFlow, z::FlowInput) = forward(fo.o, z)

"""
    AffineFlow(args...; kwargs...)

The linear flow `z = Ax + b`: `InvertFlow(LinearFlow(args...; kwargs...))`.
"""
AffineFlow(args...; kwargs...) = InvertFlow(LinearFlow(args...; kwargs...))

# Flows that are one of tensorflow_probability's bijectors, as ADCME wraps them: the name here,
# the bijector's. `Permute(dim, permutation)` takes the permutation from 0, as tfp does.
const TFP_FLOWS = ((:TanhFlow, :Tanh), (:Abs, :AbsoluteValue), (:Exp, :Exp), (:Log, :Log),
                   (:MaskedAutoregressiveFlow, :MaskedAutoregressiveFlow), (:Permute, :Permute),
                   (:PowerTransform, :PowerTransform), (:Sigmoid, :Sigmoid), (:Softplus, :Softplus),
                   (:Square, :Square))

for (name, bijector) in TFP_FLOWS
    @eval begin
        @doc $("""
            $name(dim, args...; kwargs...)

        The flow of tensorflow_probability's `bijectors.$bijector(args...; kwargs...)` on rows of
        `dim` columns.
        """)
        mutable struct $name <: FlowOp
            dim::Int64
            fo::PyObject
        end
        $name(dim::Int64, args...; kwargs...) =
            $name(dim, getproperty(TFP.bijectors, $(QuoteNode(bijector)))(args...; kwargs...))
    end
end

"""
    AffineScalarFlow(dim, shift=0.0, scale=1.0)

The flow `z = scale * x + shift` (every entry).
"""
mutable struct AffineScalarFlow <: FlowOp
    dim::Int64
    fo::PyObject
end

AffineScalarFlow(dim::Int64, shift::Float64 = 0.0, scale::Float64 = 1.0) =
    AffineScalarFlow(dim, TFP.bijectors.Chain([TFP.bijectors.Shift(constant(shift)),
                                               TFP.bijectors.Scale(constant(scale))]))

const BijectorFlow = Union{AffineScalarFlow,(getfield(@__MODULE__, n) for (n, _) in TFP_FLOWS)...}
forward(o::BijectorFlow, x::FlowInput) = (o.fo.forward(x), o.fo.forward_log_det_jacobian(x, 1))
backward(o::BijectorFlow, z::FlowInput) = (o.fo.inverse(z), o.fo.inverse_log_det_jacobian(z, 1))

# ----------------------------------------------------------------------------------------------
"""
    NormalizingFlow(flows)

Flows applied one after another: `forward` gives every intermediate `z` (the data first) and the
summed log-determinant; `backward` runs them in reverse.
"""
mutable struct NormalizingFlow
    flows::Array
    NormalizingFlow(flows::Array) = new(flows)
end

function forward(fo::NormalizingFlow, x::Union{PyObject,Array{<:Real,2}})
    x = constant(x)
    log_det = constant(zeros(size(x, 1)))
    zs = PyObject[x]
    for flow in fo.flows
        x, ld = forward(flow, x)
        log_det += ld
        push!(zs, x)
    end
    return zs, log_det
end

function backward(fo::NormalizingFlow, z::Union{PyObject,Array{<:Real,2}})
    z = constant(z)
    log_det = constant(zeros(size(z, 1)))
    xs = PyObject[z]
    for flow in reverse(fo.flows)
        z, ld = backward(flow, z)
        log_det = ld === nothing || log_det === nothing ? nothing : log_det + ld
        push!(xs, z)
    end
    return xs, log_det
end

"""
    NormalizingFlowModel(prior, flows)

A density model: data x is `backward` of the flows applied to a sample of `prior` (an ADCME
distribution, e.g. `DevPlace.MultivariateNormalDiag(loc=zeros(d))`). `model(x)` gives `(zs,
prior_logpdf, logdet)` (the log-density of x is `prior_logpdf + logdet`), `rand(model, n)` the
intermediate samples of n draws, `DevPlace.backward(model, z)` the data of latents `z`.
"""
mutable struct NormalizingFlowModel
    prior::ADCMEDistribution
    flow::NormalizingFlow
end

NormalizingFlowModel(prior::ADCMEDistribution, flows::Array{<:FlowOp}) =
    NormalizingFlowModel(prior, NormalizingFlow(flows))

function Base.show(io::IO, model::NormalizingFlowModel)
    println(io, "( ", model.prior.kind, " )")
    println(io, "\t↓")
    for flow in reverse(model.flow.flows)
        println(io, typeof(flow), " (dim = ", flow.dim, ")")
        println(io, "\t↓")
    end
    print(io, "(    Data    )")
end

function forward(nf::NormalizingFlowModel, x::Union{PyObject,Array{<:Real,2}})
    zs, log_det = forward(nf.flow, constant(x))
    return zs, logpdf(nf.prior, zs[end]), log_det
end

backward(nf::NormalizingFlowModel, z::Union{PyObject,Array{<:Real,2}}) = backward(nf.flow, constant(z))

Base.rand(nf::NormalizingFlowModel, num_samples::Int64) = first(backward(nf.flow, rand(nf.prior, num_samples)))

(o::NormalizingFlowModel)(x::Union{PyObject,Array{<:Real,2}}) = forward(o, x)
