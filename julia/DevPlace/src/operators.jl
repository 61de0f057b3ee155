# Base math, arithmetic, comparison, broadcasting, shapes, reductions and indexing on PyObjects
# (tensors), with Julia's meaning: `*` of matrices is a matrix product, `.*` is elementwise and
# lines up leading dimensions, `sum(x; dims=1)` keeps that dimension, `reshape` and `vec` are
# column-major, indices start at 1 and ranges include their end. The rules live in
# python/devplace/bridge/julia_semantics.py.

import Statistics


"A module attribute resolved once per host and cached."
attribute(m::PyObject, name::String) = lazy_pyobject(() -> request(OP_GETATTR | BY_HANDLE, (m, name)))

const UNARY = (:sin => "sin", :cos => "cos", :tan => "tan", :asin => "asin", :acos => "acos",
               :atan => "atan", :sinh => "sinh", :cosh => "cosh", :tanh => "tanh",
               :asinh => "asinh", :acosh => "acosh", :atanh => "atanh", :exp => "exp",
               :log => "log", :log1p => "log1p", :expm1 => "expm1", :sqrt => "sqrt",
               :abs => "abs", :sign => "sign", :floor => "floor", :ceil => "ceil",
               :round => "round", :inv => "reciprocal")

for (f, name) in UNARY
    fn = Symbol("TF_", uppercase(name))
    @eval const $fn = attribute(TF_MODULE, $name)
    @eval Base.$f(x::PyObject) = request(OP_CALL, ($fn, (x,)))
end

const TF_NEGATIVE = attribute(TF_MODULE, "negative")
Base.:-(x::PyObject) = request(OP_CALL, (TF_NEGATIVE, (x,)))
Base.:+(x::PyObject) = x

const SEM_MUL = attribute(SEMANTICS, "mul")
const SEM_BROADCAST = attribute(SEMANTICS, "broadcast")
const PY_OPERATORS = Dict{Symbol,PyObject}()

const BINARY = (:+ => "+", :- => "-", :/ => "/", :^ => "^", :< => "<", :<= => "<=",
                :> => ">", :>= => ">=", :max => "max", :min => "min")

binary(op::String, a, b) = request(OP_CALL, (SEM_BROADCAST, (op, a, b)))

for (f, op) in BINARY
    @eval begin
        Base.$f(a::PyObject, b::PyObject) = binary($op, a, b)
        Base.$f(a::PyObject, b::Union{Number,AbstractArray}) = binary($op, a, b)
        Base.$f(a::Union{Number,AbstractArray}, b::PyObject) = binary($op, a, b)
    end
end

Base.:^(a::PyObject, b::Integer) = binary("^", a, b)

# `x^2` is lowered to `literal_pow(^, x, Val(2))`.
Base.literal_pow(::typeof(^), x::PyObject, ::Val{p}) where {p} = binary("^", x, p)

Base.:*(a::PyObject, b::PyObject) = request(OP_CALL, (SEM_MUL, (a, b)))
Base.:*(a::PyObject, b::Union{Number,AbstractArray}) = request(OP_CALL, (SEM_MUL, (a, b)))
Base.:*(a::Union{Number,AbstractArray}, b::PyObject) = request(OP_CALL, (SEM_MUL, (a, b)))

# --- shapes, reductions, transposes, reshapes, concatenation ------------------------------

const SEMANTICS_FUNCTIONS = Dict{String,PyObject}()

"Call `julia_semantics.<name>(args...)` in the host."
semantics(name::String, args...; kwargs...) = call_python(
    get!(() -> attribute(SEMANTICS, name), SEMANTICS_FUNCTIONS, name), name, args, kwargs)

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
    sum(x::PyObject; dims), prod(x; dims), maximum(x; dims), minimum(x; dims), mean(x; dims)

Reductions of a tensor as Julia does them: over all elements without `dims` (a scalar tensor);
over the dimensions `dims` (an integer or a tuple, counted from 1) with those dimensions kept
with size 1, so `sum(A; dims=1)` of a 2×3 tensor is 1×3. `mean` is `Statistics.mean`.
"""
Statistics.mean

function reduce_dims(f::String, x::PyObject, dims)
    dims === nothing || all(d -> d isa Integer && !(d isa Bool) && d >= 1, dims) ||
        wrong_argument(f, "dims", dims, "a dimension or a tuple of dimensions (from 1)",
                       string(f, "(x; dims=1) or ", f, "(x; dims=(1, 2))"))
    semantics("reduce", f, x, dims isa Tuple ? collect(dims) : dims)
end

for f in (:sum, :prod, :maximum, :minimum, :mean)
    fn = f == :mean ? :(Statistics.mean) : :(Base.$f)
    @eval $fn(x::PyObject; dims = nothing) = reduce_dims($(string(f)), x, dims)
end

Base.transpose(x::PyObject) = semantics("transpose", x)
Base.adjoint(x::PyObject) = semantics("adjoint", x)

"""
    reshape(x::PyObject, dims...)

Julia's `reshape`: elements are read and written in column-major order, so a tensor made from a
Julia array reshapes exactly as the array does; `:` stands for the one inferred size. Use
`tf.reshape` for TensorFlow's row-major meaning.
"""
function Base.reshape(x::PyObject, dims::Union{Integer,Colon}...)
    count(d -> d isa Colon, dims) <= 1 || throw(ArgumentError(
        "reshape: at most one dimension may be `:`, got $dims. Hint: reshape(x, :, 3)"))
    semantics("reshape", x, Any[d isa Colon ? nothing : Int(d) for d in dims])
end
Base.reshape(x::PyObject, dims::Tuple) = reshape(x, dims...)
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

# --- indexing (1-based, ranges include their end, `end` reads the static shape) ---------

const SEM_GETINDEX = attribute(SEMANTICS, "getindex")
const SEM_SETINDEX = attribute(SEMANTICS, "setindex")
const SEM_LASTINDEX = attribute(SEMANTICS, "lastindex")

index_spec(i::Integer) = ("i", Int(i))
index_spec(::Colon) = ("c",)
index_spec(r::AbstractUnitRange{<:Integer}) = ("r", Int(first(r)), Int(last(r)), 1)
index_spec(r::StepRange{<:Integer}) = ("r", Int(first(r)), Int(last(r)), Int(step(r)))
index_spec(k::Union{AbstractString,Symbol}) = ("k", string(k))
index_spec(k::PyObject) = ("k", k)
index_spec(k) = throw(ArgumentError(string("cannot index a PyObject with ", typeof(k),
    " ", summary_of(k), ". Hint: use integers, ranges such as 2:end, `:`, or string keys")))

Base.getindex(o::PyObject, idx...) = request(OP_CALL, (SEM_GETINDEX, (o, map(index_spec, idx))))

function Base.setindex!(o::PyObject, v, idx...)
    request(OP_CALL, (SEM_SETINDEX, (o, v, map(index_spec, idx))))
    return o
end

Base.lastindex(o::PyObject) = request(OP_CALL, (SEM_LASTINDEX, (o, 1, 1)))::Int
Base.lastindex(o::PyObject, d::Integer) = request(OP_CALL, (SEM_LASTINDEX, (o, Int(d), 2)))::Int
