# ADCME's src/layers.jl: fully connected networks (`ae`/`fc` with variables in a scope or with
# all weights as one vector θ, `ae_init`, `ae_num`, `fcx`, `ae_to_code`), `dense`, `dropout`,
# and ADCME's activation names. The host's side is python/devplace/bridge/adcme/layers.py.

"ADCME's activation names (`activation=\"tanh\"`) and their functions."
const ACTIVATIONS = Dict{String,Function}(
    "relu" => relu, "tanh" => tanh, "sigmoid" => sigmoid, "leakyrelu" => leaky_relu,
    "leaky_relu" => leaky_relu, "relu6" => relu6, "softmax" => softmax, "softplus" => softplus,
    "selu" => selu, "elu" => elu, "concat_elu" => concat_elu, "concat_relu" => concat_relu,
    "hard_sigmoid" => hard_sigmoid, "swish" => swish, "hard_swish" => hard_swish,
    "concat_hard_swish" => concat_hard_swish, "sin" => sin, "fourier" => fourier)

"""
    get_activation_function(a) -> Function

The activation `a` names (one of `keys(DevPlace.ACTIVATIONS)`, any case), `a` itself if it is a
function, the identity for `nothing`.
"""
get_activation_function(::Nothing) = identity
get_activation_function(a::Function) = a
function get_activation_function(a::AbstractString)
    f = get(ACTIVATIONS, lowercase(a), nothing)
    f === nothing && throw(ArgumentError(string("Activation function $a is not supported, ",
        "available activation functions: ", join(sort!(collect(keys(ACTIVATIONS))), ", "))))
    return f
end

"""
    dense(inputs, units; activation=nothing, scope=nothing) -> PyObject

A fully connected layer `activation(inputs * W + b)` with new variables `fully_connected/weights`
(Glorot-uniform) and `fully_connected/biases` (zeros), or those of the current variable scope
when it reuses (`_1`, `_2`, ... for the next layers, as TF1's `fully_connected`).
"""
function dense(inputs::Union{PyObject,AbstractArray{<:Real}}, units::Integer;
               activation::Union{AbstractString,Function,Nothing} = nothing,
               scope::Union{AbstractString,Nothing} = nothing)
    f = get_activation_function(activation)
    return f(bridge_rule("adcme.layers", "fully_connected", constant(inputs), Int(units), scope))
end

as_matrix(x) = length(size(x)) == 1 ? (reshape(x, length(x), 1), true) : (x, false)

"""
    ae(x, output_dims, scope="default"; activation="tanh") -> PyObject
    ae(x, output_dims, θ; activation="tanh") -> PyObject

Alias: `fc`. A fully connected network from the columns of `x` (a vector is one column) through
layers of `output_dims` neurons, `activation` after each but the last; a vector out when `x` is
a vector and the last layer has one neuron. The first form keeps its variables in the variable
scope `scope` (the same scope again reuses them); the second takes all weights and biases as
one vector `θ` (`ae_init`, `ae_num`): per layer the m×n weights row by row, then the n biases.
`θ` may also be the layers' weight matrices and bias vectors in that order.
"""
function ae(x::Union{AbstractArray{<:Real},PyObject}, output_dims::AbstractVector{<:Integer},
            scope::AbstractString = "default"; activation::Union{Function,AbstractString,Nothing} = "tanh")
    net, flat = as_matrix(constant(x))
    variable_scope(scope; reuse = AUTO_REUSE) do
        for d in output_dims[1:end-1]
            net = dense(net, d; activation = activation)
        end
        net = dense(net, output_dims[end])
    end
    return flat && size(net, 2) == 1 ? squeeze(net) : net
end

function ae(x::Union{AbstractArray{<:Real},PyObject}, output_dims::AbstractVector{<:Integer},
            θ::Union{AbstractVector{<:Real},PyObject}; activation::Union{Function,AbstractString,Nothing} = "tanh")
    f = get_activation_function(activation)
    net, flat = as_matrix(convert_to_tensor(x))
    θ = convert_to_tensor(θ)
    dims = [size(net, 2); output_dims]
    offset = 0
    for i in 1:length(dims)-1
        m, n = dims[i], dims[i+1]
        bias = reshape(θ[offset+m*n+1:offset+m*n+n], (1, n))  # a row: added to each sample
        net = net * reshape(θ[offset+1:offset+m*n], (m, n)) + bias
        i < length(dims) - 1 && (net = f(net))
        offset += m * n + n
    end
    offset == length(θ) || throw(ArgumentError(string("ae: the weights and configuration do ",
        "not match. Required $offset but given $(length(θ)). Hint: θ = ae_init([",
        join(dims, ", "), "])")))
    return flat && size(net, 2) == 1 ? squeeze(net) : net
end

function ae(x::Union{AbstractArray{<:Real},PyObject}, output_dims::AbstractVector{<:Integer},
            θ::AbstractVector{<:Union{AbstractArray{<:Real},PyObject}}; kwargs...)
    flat = [t isa PyObject ? reshape(t, (-1,)) : convert_to_tensor(Float64.(vec(permutedims(t))))
            for t in θ]
    return ae(x, output_dims, concat(flat); kwargs...)
end

"""
    ae_init(output_dims; T=Float64, method="xavier") -> Vector

Initial weights and biases, as one vector, for a network with layers `output_dims` (the first
the number of inputs): biases zero, weights normal with standard deviation `sqrt(1/m)`
(`"xavier"`), `sqrt(2/(m+n))` (`"xavier_normal"`), `sqrt(2/m)` (`"he"`), or uniform in
`[0, sqrt(6/(m+n)))` (`"xavier_uniform"`), m inputs and n outputs of a layer. Alias: `fc_init`.
"""
function ae_init(output_dims::AbstractVector{<:Integer}; T::Type = Float64, method::String = "xavier")
    scales = Dict("xavier" => (m, n) -> randn(T, m * n) * T(sqrt(1 / m)),
                  "xavier_normal" => (m, n) -> randn(T, m * n) * T(sqrt(2 / (n + m))),
                  "xavier_uniform" => (m, n) -> rand(T, m * n) * T(sqrt(6 / (n + m))),
                  "he" => (m, n) -> randn(T, m * n) * T(sqrt(2 / m)))
    haskey(scales, method) || throw(ArgumentError(string("ae_init: method $method not ",
        "understood. Hint: one of ", join(sort!(collect(keys(scales))), ", "))))
    W = zeros(T, ae_num(output_dims))
    offset = 0
    for i in 1:length(output_dims)-1
        m, n = output_dims[i], output_dims[i+1]
        W[offset+1:offset+m*n] = scales[method](m, n)
        offset += m * n + n
    end
    return W
end

"""
    ae_num(output_dims) -> Int

The number of weights and biases of a network with layers `output_dims` (the first the number
of inputs, the last of outputs). Alias: `fc_num`.
"""
ae_num(output_dims::AbstractVector{<:Integer}) =
    sum(output_dims[i] * output_dims[i+1] + output_dims[i+1] for i in 1:length(output_dims)-1)

"""
    fcx(x, output_dims, θ; activation="tanh") -> (u, du)

The network `ae(x, output_dims, θ)` for the m×n matrix `x` (`u`, m × o) and its sensitivity per
sample, `du[i, k, j] = ∂u[i, k] / ∂x[i, j]` (m × o × n).
"""
function fcx(x::Union{AbstractMatrix{Float64},PyObject}, output_dims::AbstractVector{<:Integer},
             θ::Union{AbstractVector{Float64},PyObject}; activation::AbstractString = "tanh")
    x = convert_to_tensor(x)
    length(size(x)) == 2 || throw(ArgumentError("fcx: x must be a matrix (one sample per row)"))
    u = ae(x, output_dims, θ; activation = activation)
    return u, bridge_rule("adcme.layers", "sample_jacobian", u, x)
end

"The Julia code of `nn<scope>(net)` for the layers in `d` (`ae_to_code`)."
function ae_code(d::AbstractDict, file::String, scope::String, activation::String)
    layers = String[]
    for i in 0:typemax(Int)
        si = i == 0 ? "" : "_$i"
        W = "$(scope)backslashfully_connected$(si)backslashweightscolon0"
        b = "$(scope)backslashfully_connected$(si)backslashbiasescolon0"
        haskey(d, W) || break
        push!(layers, string(
            i == 0 ? "" : "    isa(net, Array) ? (net = $activation.(net)) : (net=$activation(net))\n",
            "    W$i = aedict$scope[\"$W\"]\n    b$i = aedict$scope[\"$b\"];\n",
            "    isa(net, Array) ? (net = net * W$i .+ b$i') : (net = net *W$i + b$i)\n"))
    end
    return string("let aedict$scope = DevPlace.matread(\"$file\")\n  global nn$scope\n",
                  "  function nn$scope(net)\n", join(layers), "    return net\n  end \nend\n")
end

"""
    ae_to_code(file, scope="default"; activation="tanh") -> String

Julia code defining `nn<scope>(x)`, the network `ae(x, dims, scope)` whose variables `save`
wrote to `file`, for plain arrays (or tensors) without a session: `eval(Meta.parse(s))`.
Alias: `fc_to_code`.
"""
ae_to_code(file::AbstractString, scope::AbstractString = "default"; activation::AbstractString = "tanh") =
    ae_code(matread(file), String(file), String(scope), String(activation))

"Alias of `ae`."
const fc = ae
"Alias of `ae_num`."
const fc_num = ae_num
"Alias of `ae_init`."
const fc_init = ae_init
"Alias of `ae_to_code`."
const fc_to_code = ae_to_code

"""
    dropout(x, rate, training=DevPlace.options.training.training; kwargs...) -> PyObject

`x` with each entry zeroed with probability `rate` (and the rest scaled by `1/(1-rate)`) when
`training` (a `Bool` or a boolean tensor), else `x` unchanged.
"""
function dropout(x::Union{PyObject,Real,AbstractArray{<:Real}}, rate::Union{Real,PyObject},
                 training::Union{PyObject,Bool,Nothing} = nothing)
    t = training === nothing ? options.training.training : training
    return bridge_rule("adcme.layers", "dropout", constant(x), rate, t)
end
