# Base math, arithmetic, comparison, broadcasting, shapes, reductions and indexing on PyObjects
# (tensors), with ADCME's meaning where ADCME defines one and Julia's otherwise: `*` of matrices
# is a matrix product and of two vectors elementwise (ADCME), `A \ b` a linear solve, `.*` is
# elementwise and lines up leading dimensions, `sum(x; dims=1)` drops that dimension (ADCME),
# `reshape(x, m, n)` and `vec` are column-major and `reshape(x, (m, n))` row-major (ADCME),
# indices (numbers, ranges, vectors, masks and tensors) start at 1, ranges include their end and
# nothing out of range is clamped. Each operation is one request; the rules live in
# python/devplace/bridge/julia_semantics.py, and elementwise ops and constants are made straight
# into the graph by python/devplace/bridge/graph_ops.py.

import Statistics


"A module attribute resolved once per host and cached."
attribute(m::PyObject, name::String) = lazy_pyobject(() -> request(OP_GETATTR | BY_HANDLE, (m, name)))

"Julia's elementwise functions on tensors and their `elementwise` names (protocol.tsv)."
const UNARY = Tuple(Symbol(row[2]) => row[3] for row in protocol_rows("unary"))

const TF_ELEMENTWISE = attribute(SEMANTICS, "elementwise")  # tf.sin etc., straight into the graph

for (f, name) in UNARY
    fn = Symbol("TF_", uppercase(name))
    @eval const $fn = attribute(TF_ELEMENTWISE, $name)
    doc = string("    ", f, "(x::PyObject)\n\nElementwise `tf.", name, "` of a tensor.")
    @eval @doc $doc Base.$f(x::PyObject) = request(OP_CALL, ($fn, (x,)))
end

Base.:+(x::PyObject) = x

const SEM_MUL = attribute(SEMANTICS, "mul")
const SEM_BROADCAST = attribute(SEMANTICS, "broadcast")
const PY_OPERATORS = Dict{Symbol,PyObject}()

const BINARY = (:+ => "+", :- => "-", :/ => "/", :^ => "^", :< => "<", :<= => "<=",
                :> => ">", :>= => ">=", :max => "max", :min => "min")

binary(op::String, a, b) = request(OP_CALL, (SEM_BROADCAST, (op, a, b)))

for (f, op) in BINARY
    doc = string("    ", f, "(a, b) with a tensor\n\nElementwise `", op, "` of tensors and ",
                 "Julia values, broadcast as Julia does; a Julia number takes the tensor's type.")
    @eval begin
        @doc $doc Base.$f(a::PyObject, b::PyObject) = binary($op, a, b)
        Base.$f(a::PyObject, b::Union{Number,AbstractArray}) = binary($op, a, b)
        Base.$f(a::Union{Number,AbstractArray}, b::PyObject) = binary($op, a, b)
    end
end

Base.:^(a::PyObject, b::Integer) = binary("^", a, b)

# `x^2` is lowered to `literal_pow(^, x, Val(2))`.
Base.literal_pow(::typeof(^), x::PyObject, ::Val{p}) where {p} = binary("^", x, p)

"""
    a * b with a tensor

As ADCME: a matrix product of matrices, matrix × vector, elementwise for two vectors or with a
scalar; `y * y'` of a vector is the outer product.
"""
Base.:*(a::PyObject, b::PyObject) = request(OP_CALL, (SEM_MUL, (a, b)))
Base.:*(a::PyObject, b::Union{Number,AbstractArray}) = request(OP_CALL, (SEM_MUL, (a, b)))
Base.:*(a::Union{Number,AbstractArray}, b::PyObject) = request(OP_CALL, (SEM_MUL, (a, b)))

const SEM_SOLVE = attribute(SEMANTICS, "solve")

"""
    A \\ b

For tensors, as in ADCME: the solution `x` of `A * x = b` for a square matrix `A` (the least
squares solution otherwise), `b` a vector or a matrix of right-hand sides; a batch of matrices
(`k×n×n`) solves each against its own right-hand sides. Either side may be a Julia array.
"""
Base.:\(a::PyObject, b::Union{PyObject,Number,AbstractArray}) = request(OP_CALL, (SEM_SOLVE, (a, b)))
Base.:\(a::Union{Number,AbstractArray}, b::PyObject) = request(OP_CALL, (SEM_SOLVE, (a, b)))

"""
    inv(x::PyObject)

ADCME's `inv`: the inverse of a matrix (of each matrix of a batch); of a scalar tensor, `1/x`.
"""
Base.inv(x::PyObject) = semantics("inv", x)

# --- shapes, reductions, transposes, reshapes, concatenation ------------------------------

const SEMANTICS_FUNCTIONS = Dict{String,PyObject}()

"Call `julia_semantics.<name>(args...)` in the host."
semantics(name::String, args...; kwargs...) = call_python(
    get!(() -> attribute(SEMANTICS, name), SEMANTICS_FUNCTIONS, name), name, args, kwargs)

const PY_ARGUMENT_ERRORS =
    ("devplace.core.errors.ArgumentValueError", "devplace.core.errors.ArgumentTypeError")

"""
    argument_errors(f)

`f()`, a request whose arguments the host checks (`dims`, checked in one place for every
function: `julia_semantics.axes`): the host's refusal of one is thrown as Julia's `ArgumentError`.
"""
function argument_errors(f)
    try
        return f()
    catch err
        err isa PyError && err.type in PY_ARGUMENT_ERRORS || rethrow()
        throw(ArgumentError(first(split(err.message, '\n'))))
    end
end

"""
    size(x::PyObject) -> Tuple

The static shape of a tensor, in the same order as the Julia array it came from; a size known
only at run time is `nothing` (as in ADCME). For other Python objects, numpy's shape.
"""
Base.size(x::PyObject) = semantics("size", x)::Tuple
function Base.size(x::PyObject, d::Integer)
    d >= 1 || throw(ArgumentError("size: dimension must be at least 1, got $d. Hint: size(x, 1)"))
    s = size(x)
    return d <= length(s) ? s[d] : 1
end
Base.ndims(x::PyObject) = semantics("ndims", x)::Int

"`length(x)`: the number of elements of a tensor (static shape), `len` of other objects."
Base.length(x::PyObject) = semantics("length", x)::Int

"""
    sum(x::PyObject; dims, kwargs...), prod, maximum, minimum, mean

Reductions of a tensor as ADCME does them: over all elements without `dims` (a scalar tensor);
over the dimensions `dims` (an integer, a tuple or a vector, counted from 1), which are dropped:
`sum(A; dims=1)` of a 2×3 tensor is a 3-vector (Base Julia keeps them as size 1; `keepdims=true`
does that here). Other keywords (`keepdims`, `name`) go to TensorFlow's `reduce_*`. `mean` is
`Statistics.mean`; the mean of integers is a Float64 and sums of Bools count, as in Julia.
"""
Statistics.mean

reduce_dims(f::String, x::PyObject, dims; kwargs...) =
    argument_errors(() -> semantics("reduce", f, x, dims; kwargs...))

for f in (:sum, :prod, :maximum, :minimum, :mean)
    fn = f == :mean ? :(Statistics.mean) : :(Base.$f)
    doc = string("    ", f, "(x::PyObject; dims, kwargs...)\n\nA reduction as ADCME does it: ",
                 "the reduced `dims` (from 1) are dropped (`keepdims=true` keeps them, as Base).")
    @eval @doc $doc $fn(x::PyObject; dims = nothing, kwargs...) =
        reduce_dims($(string(f)), x, dims; kwargs...)
end

"`transpose(x)`: a vector becomes a 1×n matrix, a matrix is transposed, a scalar stays."
Base.transpose(x::PyObject) = semantics("transpose", x)

"""
    x'

ADCME's `adjoint`: a vector becomes a 1×n matrix (so `y * y'` is the outer product), a matrix
is transposed and conjugated (of a batch, each matrix), a scalar stays.
"""
Base.adjoint(x::PyObject) = semantics("adjoint", x)

"""
    reshape(x::PyObject, dims...)
    reshape(x::PyObject, (a, b, c)), reshape(x::PyObject, [a, b, c])

As in ADCME: sizes given one by one reshape as Julia does, in column-major order (a tensor
made from a Julia array reshapes exactly as the array does; `:` or `-1` is the one inferred
size); sizes given as a tuple or a vector are `tf.reshape`, row-major (`-1` inferred).
"""
function Base.reshape(x::PyObject, dims::Union{Integer,Colon}...)
    sizes = Any[d isa Colon || d == -1 ? nothing : Int(d) for d in dims]
    count(d -> d === nothing, sizes) <= 1 && all(d -> d === nothing || d >= 0, sizes) ||
        throw(ArgumentError(string("reshape: sizes must be at least 0, with at most one `:` ",
                                   "(or -1), got ", dims, ". Hint: reshape(x, :, 3)")))
    semantics("reshape", x, sizes)
end
Base.reshape(x::PyObject, dims::Tuple{Vararg{Integer}}) = semantics("reshape_rows", x, collect(Int, dims))
Base.reshape(x::PyObject, dims::AbstractVector{<:Integer}) = semantics("reshape_rows", x, collect(Int, dims))
Base.reshape(x::PyObject, dims::Tuple) = throw(ArgumentError(string(
    "reshape: sizes in a tuple are tf.reshape's (row-major, as in ADCME), which takes -1, not `:`; ",
    "got ", dims, ". Hint: reshape(x, (-1, 3)) for row-major, reshape(x, :, 3) for column-major")))
"`vec(x)`: the entries of a tensor as a vector, in column-major order (as ADCME and Julia)."
Base.vec(x::PyObject) = reshape(x, :)

const Catable = Union{PyObject,Number,AbstractArray}
Base.vcat(x::PyObject, xs::Catable...) = semantics("vcat", x, xs...)
Base.hcat(x::PyObject, xs::Catable...) = semantics("hcat", x, xs...)
Base.vcat(x::Union{Number,AbstractArray}, y::PyObject, xs::Catable...) =
    semantics("vcat", x, y, xs...)
Base.hcat(x::Union{Number,AbstractArray}, y::PyObject, xs::Catable...) =
    semantics("hcat", x, y, xs...)

# --- broadcasting: `sin.(x)`, `a .* b`, `x .+ 1` become elementwise TF ops ---------------

"""
    PyStyle

The broadcast style of expressions involving a PyObject: evaluated by TensorFlow, elementwise.
"""
struct PyStyle <: Base.Broadcast.BroadcastStyle end

Base.Broadcast.BroadcastStyle(::Type{PyObject}) = PyStyle()
Base.Broadcast.BroadcastStyle(s::PyStyle, ::Base.Broadcast.AbstractArrayStyle) = s
Base.Broadcast.BroadcastStyle(s::PyStyle, ::Base.Broadcast.Style{Tuple}) = s
Base.broadcastable(o::PyObject) = o

const ELEMENTWISE = Dict{Any,String}((+) => "+", (-) => "-", (*) => "*", (/) => "/",
                                     (^) => "^", (<) => "<", (<=) => "<=", (>) => ">",
                                     (>=) => ">=", max => "max", min => "min", (==) => "==",
                                     (!=) => "!=")

function Base.Broadcast.broadcasted(::PyStyle, f, args...)
    op = get(ELEMENTWISE, f, nothing)
    op === nothing || return request(OP_CALL, (SEM_BROADCAST, (op, args...)))
    length(args) == 1 && return f(args[1])  # TF's unary ops are elementwise already
    throw(ArgumentError(string("cannot broadcast ", f, " over tensors elementwise. Hint: ",
                               "use an operation TensorFlow has (+ - * / ^ < <= > >= max ",
                               "min, or a unary function such as sin)")))
end

# `x .^ 2` is lowered to `broadcasted(literal_pow, Ref(^), x, Ref(Val(2)))`.
Base.Broadcast.broadcasted(::PyStyle, ::typeof(Base.literal_pow), ::Base.RefValue{typeof(^)},
                           x, ::Base.RefValue{Val{p}}) where {p} = binary("^", x, p)

Base.Broadcast.materialize(o::PyObject) = o

# --- indexing: 1-based, ranges include their end, nothing out of range is clamped ----------

const SEM_GETINDEX = attribute(SEMANTICS, "getindex")
const SEM_SETINDEX = attribute(SEMANTICS, "setindex")
const SEM_LASTINDEX = attribute(SEMANTICS, "lastindex")

# One index as it travels (julia_semantics.py, "indexing").
index_spec(i::Integer) = ("i", Int(i))
index_spec(::Colon) = ("c",)
index_spec(r::AbstractUnitRange{<:Integer}) = ("r", Int(first(r)), Int(last(r)), 1)
index_spec(r::StepRange{<:Integer}) = ("r", Int(first(r)), Int(last(r)), Int(step(r)))
index_spec(v::AbstractVector{<:Integer}) = ("v", collect(Int, v))
index_spec(m::AbstractVector{Bool}) = ("m", collect(Bool, m))
index_spec(k::Union{AbstractString,Symbol}) = ("k", string(k))
index_spec(k::PyObject) = ("o", k)
index_spec(k) = throw(ArgumentError(string(
    "cannot index a PyObject with ", typeof(k), " ", summary_of(k), ". Hint: use integers, ",
    "ranges such as 2:end, `:`, integer vectors, Bool masks, integer tensors or string keys")))
index_spec(b::Bool) = throw(ArgumentError(string(
    "invalid index: ", b, " of type Bool. Hint: a Bool mask is a vector, e.g. x[[true, false]]")))

"""
    x[i, j, ...]

Indexing a tensor as in Julia and ADCME, in one request: integers, ranges (with `end`), `:`,
integer vectors, Bool masks, and tensors of positions or Bools, all counted from 1; one index
per dimension (an integer or a scalar tensor drops its dimension), or a single index into a
matrix, which selects rows as in ADCME (`x[:]` is `vec(x)`). An index out of range throws a
`BoundsError` (a tensor index is checked when the graph runs). On other Python objects: keys,
and 1-based positions in sequences.
"""
Base.getindex(o::PyObject, idx...) =
    bounds_errors(() -> request(OP_CALL, (SEM_GETINDEX, (o, map(index_spec, idx)))), o, idx)

"""
    bounds_errors(f, o, idx)

`f()`, a request with Julia indices `idx` into `o`: the host's `IndexError` (an index out of
range: `julia_semantics.check_bounds`, for every index) thrown as Julia's `BoundsError(o, idx)`.
"""
function bounds_errors(f, o, idx)
    try
        return f()
    catch err
        err isa PyError && err.type == "IndexError" && throw(BoundsError(o, idx))
        rethrow()
    end
end

function Base.setindex!(o::PyObject, v, idx...)
    request(OP_CALL, (SEM_SETINDEX, (o, v, map(index_spec, idx))))
    return o
end

Base.firstindex(o::PyObject) = 1
Base.firstindex(o::PyObject, d::Integer) = 1
Base.lastindex(o::PyObject) = request(OP_CALL, (SEM_LASTINDEX, (o, 1, 1)))::Int
Base.lastindex(o::PyObject, d::Integer) = request(OP_CALL, (SEM_LASTINDEX, (o, Int(d), 2)))::Int

"`summary(x)`: a tensor's size, name and dtype, as a BoundsError shows it (`2×3 tensor 'Const:0' (float64)`)."
function Base.summary(io::IO, o::PyObject)
    text = try
        semantics("array_summary", o)::String
    catch err
        err isa InterruptException && rethrow()
        "PyObject"
    end
    print(io, text)
end
