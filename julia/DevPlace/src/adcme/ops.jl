# ADCME's src/ops.jl, less the operators, reductions and reshapes of operators.jl: activations,
# linear algebra (det, diag, svd, tril, solve_batch, ...), sorting and searching (argmax, topk,
# sort), stacking (stack, concat, unstack), scatter updates, assignments, maps and the
# LinearAlgebra, Statistics and Base functions ADCME extends to tensors (norm, dot, std, repeat,
# diff, reverse, split, findall, map). Indices and `dims` count from 1, as in ADCME.

using LinearAlgebra: LinearAlgebra, I, UniformScaling
import LinearAlgebra: det, diag, diagm, dot, norm, svd, tr, tril, triu
import Statistics: std
@static if isdefined(Base, :stack)  # Julia 1.9 and later have Base.stack: extend it
    import Base: stack
end

# --- activations: a Julia number gives a number, a tensor a tensor ------------------------

"""
    sigmoid(x) -> PyObject or number

`1 / (1 + exp(-x))`, elementwise for a tensor.
"""
sigmoid(x::Real) = 1 / (1 + exp(-x))
sigmoid(o::PyObject; kwargs...) = tfcall("math.sigmoid", o; kwargs...)

"""
    relu(x) -> PyObject or number

`max(0, x)`, elementwise for a tensor.
"""
relu(x::Real) = max(zero(x), x)
relu(o::PyObject; kwargs...) = tfcall("nn.relu", o; kwargs...)

"""
    relu6(x) -> PyObject or number

`min(max(0, x), 6)`, elementwise for a tensor.
"""
relu6(x::Real) = min(relu(x), oftype(x, 6))
relu6(o::PyObject; kwargs...) = tfcall("nn.relu6", o; kwargs...)

"""
    leaky_relu(x, a=0.2) -> PyObject or number

`max(a x, x)`, elementwise for a tensor (`alpha` keyword, 0.2 by default).
"""
leaky_relu(x::Real, a = oftype(x / 1, 0.2)) = max(a * x, x / one(x))
leaky_relu(o::PyObject; kwargs...) = tfcall("nn.leaky_relu", o; kwargs...)

"""
    selu(x) -> PyObject or number

The scaled exponential linear unit, elementwise for a tensor.
"""
function selu(x::Real)
    λ = oftype(x / 1, 1.0507009873554804934193349852946)
    α = oftype(x / 1, 1.6732632423543772848170429916717)
    λ * ifelse(x > 0, x / one(x), α * (exp(x) - one(x)))
end
selu(o::PyObject; kwargs...) = tfcall("nn.selu", o; kwargs...)

"""
    elu(x, α=1) -> PyObject or number

`x` for `x ≥ 0`, else `α (exp(x) - 1)`; elementwise for a tensor.
"""
elu(x::Real, α = one(x)) = ifelse(x ≥ 0, x / one(x), α * (exp(x) - one(x)))
elu(o::PyObject; kwargs...) = tfcall("nn.elu", o; kwargs...)

"""
    softsign(x) -> PyObject or number

`x / (1 + |x|)`, elementwise for a tensor.
"""
softsign(x::Real) = x / (one(x) + abs(x))
softsign(o::PyObject; kwargs...) = tfcall("nn.softsign", o; kwargs...)

"""
    softplus(x) -> PyObject or number

`log(1 + exp(x))`, elementwise for a tensor or Julia array (a tensor results).
"""
softplus(x::Real) = ifelse(x > 0, x + log1p(exp(-x)), log1p(exp(x)))
softplus(x; kwargs...) = tfcall("math.softplus", x; kwargs...)

"""
    softmax(o; dims) -> PyObject

`exp.(o) ./ sum(exp.(o))` along dimension `dims` (the last by default).
"""
softmax(o::PyObject; kwargs...) = tfcall_dims("softmax", "math.softmax", o; kwargs...)

"""
    swish(x) -> PyObject or number

`x * sigmoid(x)`, elementwise.
"""
swish(x::Real) = x * sigmoid(x)
swish(x::PyObject) = tfcall("nn.swish", x)

"""
    hard_swish(x) -> PyObject or number

`x * sigmoid(100 x)`, elementwise.
"""
hard_swish(x::Real) = x * sigmoid(100x)
hard_swish(x::PyObject) = x .* sigmoid(100 * x)

"""
    hard_sigmoid(x) -> PyObject or number

`min(1, max(0, x + 0.5))`, elementwise.
"""
hard_sigmoid(x::Real) = min(one(x), max(zero(x), x + oftype(x / 1, 0.5)))
hard_sigmoid(x::PyObject) = clip(x + 0.5, 0, 1)

"""
    concat_relu(x) -> PyObject

`relu([x -x])`: a vector gives two columns, a matrix twice its columns.
"""
concat_relu(x::PyObject) = relu(bridge_rule("adcme.ops", "concat_activation", x))

"""
    concat_elu(x) -> PyObject

`elu([x -x])`, as `concat_relu`.
"""
concat_elu(x::PyObject) = elu(bridge_rule("adcme.ops", "concat_activation", x))

"""
    concat_hard_swish(x) -> PyObject

`hard_swish([x -x])`, as `concat_relu`.
"""
concat_hard_swish(x::PyObject) = hard_swish(bridge_rule("adcme.ops", "concat_activation", x))

"""
    fourier(x, terms=10) -> PyObject

`[sin(x) cos(x) sin(x) cos(x) ...]`, `terms` pairs of columns (as ADCME).
"""
fourier(x::PyObject, terms::Integer = 10) = hcat(Any[f(x) for _ in 1:terms for f in (sin, cos)]...)

# --- types, shapes, stacking --------------------------------------------------------------

"""
    cast(x::PyObject, dtype::Type) -> PyObject
    cast(dtype::Type, x::PyObject) -> PyObject

`x` converted to elements of type `dtype` (e.g. `cast(x, Float32)`).
"""
cast(x::PyObject, dtype::Type; kwargs...) = tfcall("cast", x, dtype; kwargs...)
cast(dtype::Type, x::PyObject; kwargs...) = cast(x, dtype; kwargs...)

"""
    squeeze(o; dims) -> PyObject

`o` without its dimensions of size 1 (only `dims`, counted from 1, if given).
"""
squeeze(o::PyObject; kwargs...) = tfcall_dims("squeeze", "squeeze", o; kwargs...)

"""
    stack(os::Vector; dims=1) -> PyObject
    stack(ta::PyObject) -> PyObject

Tensors of one shape stacked along a new dimension `dims` (the first by default: two vectors
of length n give a 2×n matrix). Of a TensorArray: its elements stacked along the first.
"""
stack(os::AbstractVector, args...; kwargs...) =
    tfcall_dims("stack", "stack", collect(os), args...; kwargs...)
stack(ta::PyObject) = ta.stack()

"""
    unstack(o::PyObject; dims=1) -> Vector

The slices of `o` along dimension `dims`.
"""
unstack(o::PyObject, args...; kwargs...) = tfcall_dims("unstack", "unstack", o, args...; kwargs...)

"""
    concat(os::Vector; dims) -> PyObject

Tensors joined along an existing dimension `dims` (`tf.concat`; scalars are stacked into a
vector). A positional second argument is TensorFlow's axis, from 0.
"""
function concat(os::Union{PyObject,AbstractVector}, args...; kwargs...)
    os isa PyObject && return os
    ndims(os[1]) == 0 && return tfcall("stack", collect(os))
    tfcall_dims("concat", "concat", collect(os), args...; kwargs...)
end

"""
    pad(o, paddings::Matrix{Int}, args...; kwargs...) -> PyObject

`o` padded (with zeros unless `constant_values`/`mode` say otherwise): row `d` of `paddings` is
how many entries go before and after dimension `d`.
"""
pad(o::Union{AbstractArray{<:Real},PyObject}, paddings::AbstractMatrix{<:Integer}, args...; kwargs...) =
    tfcall("pad", constant(o), Matrix{Int}(paddings), args...; kwargs...)

"""
    rvec(o::PyObject) -> PyObject

`o` as a row vector (1×n), elements in column-major order.
"""
rvec(o::PyObject; kwargs...) = reshape(o, 1, :)

"""
    cvec(o::PyObject) -> PyObject

`o` as a column vector (n×1), elements in column-major order.
"""
cvec(o::PyObject; kwargs...) = reshape(o, :, 1)

"""
    split(o::PyObject, num_or_size_splits; dims=1) -> Vector

`o` split along `dims` into that many equal parts, or parts of the sizes given.
"""
Base.split(o::PyObject, num_or_size_splits::Union{Integer,AbstractVector{<:Integer},PyObject};
           kwargs...) = tfcall_dims("split", "split", o, num_or_size_splits; kwargs...)

"""
    reverse(o::PyObject; dims=-1) -> PyObject

`o` reversed along dimension `dims` (-1: the last).
"""
Base.reverse(o::PyObject; dims::Integer = -1) =
    dims == -1 ? tfcall("reverse", o, Int32[-1]) : tfcall_dims("reverse", "reverse", o; dims = [dims])

# --- assignment and grouping --------------------------------------------------------------

"""
    assign(o::PyObject, value, args...; kwargs...) -> PyObject
    assign(os::Vector, values::Vector) -> Vector

The op setting variable `o` to `value` when run (`tf.assign`); for vectors, one op per pair.
"""
assign(o::PyObject, value, args...; kwargs...) = tfcall("assign", o, value, args...; kwargs...)
assign(os::AbstractVector, values::AbstractVector, args...; kwargs...) =
    group_assign(os, values, args...; kwargs...)

"""
    group_assign(os::Vector, values, args...; kwargs...) -> Vector

`[assign(os[i], values[i]) for i ...]`.
"""
group_assign(os::AbstractVector, values, args...; kwargs...) =
    [assign(o, v, args...; kwargs...) for (o, v) in zip(os, values)]

"""
    group(args...; kwargs...) -> PyObject

One op that runs all of `args` (`tf.group`).
"""
group(args...; kwargs...) = tfcall("group", args...; kwargs...)

"""
    clip(o, vmin, vmax) -> PyObject

`o` with each entry limited to `[vmin, vmax]`; a vector of tensors gives a vector.
"""
clip(o::PyObject, vmin, vmax, args...; kwargs...) = tfcall("clip_by_value", o, vmin, vmax, args...; kwargs...)
clip(o::AbstractVector, vmin, vmax, args...; kwargs...) =
    [clip(x, vmin, vmax, args...; kwargs...) for x in o]

# --- scatter: a copy of a tensor with some entries changed --------------------------------

const Index = Union{Colon,Integer,AbstractVector{<:Integer},AbstractVector{Bool},PyObject}

const Updates = Union{AbstractArray{<:Real},Real,PyObject}

for (name, kind) in ((:scatter_add, "add"), (:scatter_sub, "sub"), (:scatter_update, "update"))
    op = Dict("add" => "a[indices] += updates", "sub" => "a[indices] -= updates",
              "update" => "a[indices] = updates")[kind]
    @eval begin
        @doc $("""
            $name(a::PyObject, indices, updates) -> PyObject
            $name(A::PyObject, rows, cols, updates) -> PyObject

        A copy of the vector `a` with `$op` (indices from 1: an integer, a vector, a range, a
        Bool mask, `:` or an integer tensor), or of the matrix `A` with the block `A[rows, cols]`
        changed likewise (`updates` of that block's shape, or a number). `updates` takes the
        tensor's type. Gradients flow to `a` and `updates`.
        """)
        $name(a::PyObject, indices::Index, updates::Updates) = bounds_errors(() -> bridge_rule(
            "adcme.ops", "scatter", $kind, a, scatter_index(indices), updates), a, (indices,))
        $name(a::PyObject, rows::Index, cols::Index, updates::Updates) = bounds_errors(
            () -> bridge_rule("adcme.ops", "scatter2", $kind, a, scatter_index(rows),
                              scatter_index(cols), updates), a, (rows, cols))
    end
end

"""
    vector(i, v, n) -> PyObject

A vector of length `n`, zero except `V[i] = v` (`i` indices from 1: a vector, a range or an
integer tensor).
"""
vector(i::Union{AbstractVector{<:Integer},PyObject}, v::Union{AbstractArray{<:Real},PyObject},
       n::Union{Integer,PyObject}) =
    bounds_errors(() -> bridge_rule("adcme.ops", "vector", scatter_index(i), v, n), v, (i,))

# --- linear algebra -----------------------------------------------------------------------

"""
    einsum(equation, args...; kwargs...) -> PyObject

`tf.einsum`, e.g. `einsum("ij,jk->ik", A, B)`.
"""
einsum(equation, args...; kwargs...) = tfcall("einsum", equation, args...; kwargs...)

"""
    det(o::PyObject) -> PyObject

The determinant of a square matrix (of each matrix of a batch).
"""
det(o::PyObject; kwargs...) = tfcall("linalg.det", o; kwargs...)

"""
    diag(o::PyObject) -> PyObject

The diagonal of a matrix, as a vector.
"""
diag(o::PyObject; kwargs...) = tfcall("linalg.diag_part", o; kwargs...)

"""
    diagm(o::PyObject) -> PyObject

The square matrix with the vector `o` on its diagonal.
"""
diagm(o::PyObject; kwargs...) = tfcall("linalg.diag", o; kwargs...)

"""
    tr(o::PyObject) -> PyObject

The trace of a matrix.
"""
tr(o::PyObject) = tfcall("linalg.trace", o)

"""
    tril(o::PyObject, k=0) -> PyObject

The lower triangle of a matrix (of each of a batch): entries with `j - i <= k`, others zero.
"""
tril(o::PyObject, k::Integer = 0) = bridge_rule("adcme.ops", "tril", o, Int(k))

"""
    triu(o::PyObject, k=0) -> PyObject

The upper triangle of a matrix (of each of a batch): entries with `j - i >= k`, others zero.
"""
triu(o::PyObject, k::Integer = 0) = bridge_rule("adcme.ops", "triu", o, Int(k))

"""
    norm(o::PyObject, args...; dims) -> PyObject

The norm of `o` (`tf.norm`: Euclidean by default, `ord` as a second argument), over `dims`.
"""
norm(o::PyObject, args...; kwargs...) = tfcall_dims("norm", "norm", o, args...; kwargs...)
norm(o::PyObject, p::Real; kwargs...) = tfcall_dims("norm", "norm", o, p; kwargs...)

"""
    dot(x, y) -> PyObject

`sum(x .* y)` of a tensor and a tensor or Julia array.
"""
dot(x::PyObject, y::PyObject) = tfcall("reduce_sum", tfcall("multiply", x, y))
dot(x::PyObject, y::AbstractArray{<:Real}) = dot(x, constant(y))
dot(x::AbstractArray{<:Real}, y::PyObject) = dot(constant(x), y)

"""
    TFSVD

The result of `svd(o)`: `S` (singular values), `U`, `V` and `Vt` (`V'`), with `o ≈ U diagm(S) Vt`.
"""
struct TFSVD
    S::PyObject
    U::PyObject
    V::PyObject
    Vt::PyObject
end

"""
    svd(o::PyObject) -> TFSVD

The singular value decomposition: `r.U * diagm(r.S) * r.Vt ≈ o` (thin: `U` is m×k, `k = min(m, n)`).
"""
function svd(o::PyObject, args...; kwargs...)
    s, u, v = tfcall("linalg.svd", o)
    TFSVD(s, u, v, tfcall("linalg.adjoint", v))
end

"""
    triangular_solve(matrix, rhs; lower=true, adjoint=false) -> PyObject

The solution `x` of `matrix * x = rhs` for a triangular `matrix`; `rhs` a vector or a matrix.
"""
function triangular_solve(matrix, rhs; kwargs...)
    isvector = ndims(rhs) == 1
    r = isvector ? tfcall("reshape", rhs, [-1, 1]) : rhs
    out = tfcall("linalg.triangular_solve", matrix, r; kwargs...)
    isvector ? tfcall("squeeze", out; axis = 1) : out
end

"""
    solve_batch(A, rhs) -> PyObject

Row `i` of the result solves `A x = rhs[i, :]` (`A` m×n with m ≥ n: least squares when m > n),
so the result is `(A \\ rhs')'`, an nb×n float64 matrix.
"""
solve_batch(A::Union{PyObject,AbstractMatrix{<:Real}}, rhs::Union{PyObject,AbstractMatrix{<:Real}}) =
    bridge_rule("adcme.ops", "solve_batch", A, rhs)

"""
    batch_matmul(o1, o2) -> PyObject

`o1[i, :, :] * o2[i, :, :]` (or `* o2[i, :]`) for each `i`.
"""
function batch_matmul(o1::PyObject, o2::PyObject)
    isvector = ndims(o2) == 2
    isvector && (o2 = tfcall("expand_dims", o2, 2))
    out = tfcall("matmul", o1, o2)
    isvector ? tfcall("squeeze", out; axis = 2) : out
end
batch_matmul(o1::AbstractArray{<:Real}, o2::PyObject) = batch_matmul(constant(o1), o2)
batch_matmul(o1::PyObject, o2::AbstractArray{<:Real}) = batch_matmul(o1, constant(o2))
batch_matmul(o1::AbstractArray{<:Real}, o2::AbstractArray{<:Real}) = batch_matmul(constant(o1), constant(o2))

"""
    I

LinearAlgebra's identity `I`, with tensors as with Julia matrices: `A + I`, `A - I`, `2I - A`
for a square matrix tensor `A`.
"""
I

Base.:+(o::PyObject, J::UniformScaling) = o + Matrix(J, size(o, 1), size(o, 2))
Base.:-(o::PyObject, J::UniformScaling) = o - Matrix(J, size(o, 1), size(o, 2))
Base.:+(J::UniformScaling, o::PyObject) = o + J
Base.:-(J::UniformScaling, o::PyObject) = Matrix(J, size(o, 1), size(o, 2)) - o

# --- searching, sorting and statistics ----------------------------------------------------

"""
    argmax(o::PyObject; dims) -> PyObject

The index (from 1) of the largest entry along `dims` (the first dimension by default), int64.
"""
Base.argmax(o::PyObject; kwargs...) = tfcall_dims("argmax", "argmax", o; kwargs...) + 1

"""
    argmin(o::PyObject; dims) -> PyObject

The index (from 1) of the smallest entry along `dims` (the first dimension by default), int64.
"""
Base.argmin(o::PyObject; kwargs...) = tfcall_dims("argmin", "argmin", o; kwargs...) + 1

"""
    sort(o::PyObject; rev=false, dims=-1, name=nothing) -> PyObject

`o` sorted along `dims` (-1: the last), descending with `rev=true`.
"""
Base.sort(o::PyObject; rev::Bool = false, dims::Integer = -1, name = nothing) =
    tfcall_dims("sort", "sort", o; last_or(dims)..., direction = rev ? "DESCENDING" : "ASCENDING",
                name = name)

"ADCME's `dims=-1` (the last dimension, TensorFlow's default) as no `dims` keyword."
last_or(dims::Integer) = dims == -1 ? NamedTuple() : (dims = dims,)

"""
    argsort(o::PyObject; stable=false, rev=false, dims=-1, name=nothing) -> PyObject

The indices (from 1) that sort `o` along `dims` (-1: the last).
"""
argsort(o::PyObject; stable::Bool = false, rev::Bool = false, dims::Integer = -1, name = nothing) =
    tfcall_dims("argsort", "argsort", o; last_or(dims)...,
                direction = rev ? "DESCENDING" : "ASCENDING", stable = stable, name = name) + 1

"""
    topk(o::PyObject, k=1; sorted=true, name=nothing) -> (values, indices)

The `k` largest entries along the last dimension and their indices (from 0, as ADCME gives
TensorFlow's), largest first when `sorted`.
"""
topk(o::PyObject, k::Union{PyObject,Integer} = 1; sorted::Bool = true, name = nothing) =
    tfcall("math.top_k", o, k isa Integer ? Int(k) : k; sorted = sorted, name = name)

"""
    std(o::PyObject; dims) -> PyObject

The standard deviation (divided by n, as TensorFlow) over all entries or along `dims`.
"""
std(o::PyObject; kwargs...) = tfcall_dims("std", "math.reduce_std", o; kwargs...)

"""
    lgamma(o) -> PyObject

`log(abs(gamma(o)))`, elementwise.
"""
lgamma(o::Union{Real,PyObject}, args...; kwargs...) =
    tfcall("math.lgamma", convert_to_tensor(o), args...; kwargs...)

"""
    findall(o::PyObject) -> PyObject

The indices (from 1) of the true entries of a Bool vector, or of a Bool matrix as rows `[i j]`.
"""
Base.findall(o::PyObject) = bridge_rule("adcme.ops", "findall", o)

"""
    diff(o::PyObject; dims) -> PyObject

Differences of neighbouring entries (of a vector, or along `dims` of a matrix), as Julia's `diff`.
"""
Base.diff(o::PyObject; dims::Union{Integer,Nothing} = nothing) =
    argument_errors(() -> bridge_rule("adcme.ops", "diff", o, dims))

"""
    repeat(o::PyObject, i) -> PyObject
    repeat(o::PyObject, i, j) -> PyObject

As Julia's `repeat` of a scalar, vector or matrix: `i` copies along the first dimension (and
`j` along the second).
"""
Base.repeat(o::PyObject, i::Integer) = bridge_rule("adcme.ops", "repeat", o, Int(i), nothing)
Base.repeat(o::PyObject, i::Integer, j::Integer) = bridge_rule("adcme.ops", "repeat", o, Int(i), Int(j))

"""
    real(o::PyObject), imag(o::PyObject) -> PyObject

The real and imaginary parts of a complex tensor.
"""
Base.real(o::PyObject, args...; kwargs...) = tfcall("math.real", o, args...; kwargs...)
Base.imag(o::PyObject, args...; kwargs...) = tfcall("math.imag", o, args...; kwargs...)

"""
    fft(o::PyObject) -> PyObject

The discrete Fourier transform of a complex tensor of rank 1, 2 or 3 (over all dimensions).
"""
fft(o::PyObject, args...; kwargs...) = tfcall(fft_name("fft", o), o, args...; kwargs...)

"""
    ifft(o::PyObject) -> PyObject

The inverse of `fft`.
"""
ifft(o::PyObject, args...; kwargs...) = tfcall(fft_name("ifft", o), o, args...; kwargs...)

function fft_name(f, o)
    n = ndims(o)
    1 <= n <= 3 || wrong_argument(f, "o", o, "a tensor of rank 1, 2 or 3", "reshape it first")
    return string("signal.", f, n == 1 ? "" : string(n, "d"))
end

const ROLL_DOC = """
    rollsum(u, window), rollmean(u, window), rollvar(u, window), rollstd(u, window) -> PyObject

Rolling sums, means, variances (divided by `window - 1`) and standard deviations of a vector
over `window` consecutive entries: `length(u) - window + 1` values, float64.
"""
@doc ROLL_DOC rollsum(u, window::Integer) = roll(u, window, "sum")
@doc ROLL_DOC rollmean(u, window::Integer) = roll(u, window, "mean")
@doc ROLL_DOC rollvar(u, window::Integer) = roll(u, window, "var")
@doc ROLL_DOC rollstd(u, window::Integer) = roll(u, window, "std")

function roll(u, window::Integer, how::String)
    window > 1 || wrong_argument(string("roll", how), "window", window, "at least 2",
                                 string("roll", how, "(u, 3)"))
    bridge_rule("adcme.ops", "roll", u, Int(window), how)
end

"""
    softmax_cross_entropy_with_logits(logits, labels) -> PyObject

Softmax cross entropy per row of `logits`; `labels` a vector of classes from 1 to the number of
columns, or one-hot rows.
"""
function softmax_cross_entropy_with_logits(logits::Union{AbstractArray,PyObject},
                                           labels::Union{AbstractArray,PyObject})
    logits = convert_to_tensor(logits; dtype = Float64)
    if ndims(labels) == 1
        labels = semantics("zero_based", labels isa PyObject ? cast(labels, Int64) : Int64.(labels))
        return tfcall("nn.sparse_softmax_cross_entropy_with_logits"; logits = logits, labels = labels)
    end
    tfcall("nn.softmax_cross_entropy_with_logits"; logits = logits,
           labels = convert_to_tensor(labels; dtype = Float64))
end

# --- maps over the first dimension ---------------------------------------------------------

"""
    map(fn, o::PyObject; dtype) -> PyObject
    map(fn, os::Vector{PyObject}; dtype) -> PyObject

`fn` applied to each slice of `o` along the first dimension (`tf.map_fn`); with a vector of
tensors, `fn` gets a vector of their slices. Give `dtype` when the result's type differs.
"""
Base.map(fn::Function, o::PyObject; kwargs...) =
    bridge_rule("adcme.ops", "map_fn", fn, o; tf_kwargs("map", kwargs)...)
Base.map(fn::Function, os::AbstractVector{PyObject}; kwargs...) =
    bridge_rule("adcme.ops", "map_fn", fn, collect(os); tf_kwargs("map", kwargs)...)

"""
    pmap(fn, o) -> PyObject
    pmap(fn, range, o) -> PyObject

`fn` applied to the slices of `o` in parallel (`tf.vectorized_map`; no dependence between
iterations). With `range`, `fn` gets `[i, slice]`.
"""
pmap(fn::Function, o::Union{AbstractVector{PyObject},PyObject}) =
    tfcall("vectorized_map", fn, o isa PyObject ? o : collect(o))
function pmap(fn::Function, range_::Union{AbstractVector{<:Integer},PyObject},
              o::Union{AbstractVector{PyObject},PyObject})
    ipt = convert_to_tensor(range_ isa PyObject ? range_ : collect(range_))
    o isa PyObject && return tfcall("vectorized_map", fn, [ipt, o])
    isempty(o) && return tfcall("vectorized_map", fn, ipt)
    tfcall("vectorized_map", fn, [ipt, o...])
end
