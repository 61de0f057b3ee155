# ADCME's src/variable.jl: making tensors (constant, Variable, get_variable, placeholder,
# convert_to_tensor, tensor, cell, TensorArray), their types and shapes (get_dtype, set_shape),
# derivatives (gradients, jacobian, hessian, hessian_vector, gradient_magnitude,
# gradients_colocate) and initializers. Each call is one request to the host.

"""
    constant(o::PyObject; dtype) -> PyObject

A tensor given to `constant` is returned as it is (as in ADCME); with `dtype`, cast to it.
"""
constant(o::PyObject; dtype = nothing) = dtype === nothing ? o : convert_to_tensor(o; dtype = dtype)
constant(c::Char; kwargs...) = constant(string(c); kwargs...)

"""
    get_dtype(o::PyObject) -> Type

The Julia type of a tensor's elements (`Float64` for float64, `Int32` for int32, ...);
`nothing` for a non-numeric tensor (e.g. strings).
"""
get_dtype(o::PyObject) = bridge_rule("adcme.variable", "dtype", o)

"""
    convert_to_tensor(o; dtype=missing)
    convert_to_tensor(os::Array, dtypes::Array)

`o` as a tensor: a tensor is returned as it is, or cast when `dtype` differs from its type; a
Julia number or array becomes a constant (of `dtype` if given); `missing` and `nothing` are
returned unchanged. The second form converts each `os[i]` to `dtypes[i]`.
"""
function convert_to_tensor(o::Union{PyObject,Number,AbstractArray,Missing,Nothing};
                           dtype::Union{Type,Missing} = missing)
    (o === missing || o === nothing) && return o
    if o isa PyObject
        dtype === missing && return o
        return get_dtype(o) == dtype ? o : tfcall("cast", o, dtype)
    end
    return dtype === missing ? constant(o) : constant(o; dtype = dtype)
end

convert_to_tensor(os::AbstractArray, dtypes::AbstractArray) =
    [convert_to_tensor(o; dtype = d) for (o, d) in zip(os, dtypes)]

"""
    placeholder(o::PyObject; kwargs...) -> PyObject

A placeholder whose default value is the tensor `o`, of its type and shape.
"""
placeholder(o::PyObject; kwargs...) =
    tfcall("placeholder_with_default", o; shape = size(o), kwargs...)

"""
    cell(arr::Array, args...; kwargs...) -> PyObject

A ragged tensor from a vector of vectors (`r = cell([[1.0], [2.0, 3.0]])`, then `r[2]`), of the
first element's type unless `dtype` says otherwise.
"""
function cell(arr::AbstractArray, args...; kwargs...)
    kw = tf_kwargs("cell", kwargs)
    haskey(kw, :dtype) || (kw[:dtype] = eltype(arr[1]))
    tfcall("ragged.constant", arr, args...; kw...)
end

"""
    set_shape(o::PyObject, shape) -> PyObject
    set_shape(o::PyObject, dims::Integer...) -> PyObject

Declare the static shape of `o` (e.g. a placeholder of shape `[nothing, 10]`); running it with
a value of another shape then fails. Returns `o`.
"""
function set_shape(o::PyObject, s::Union{AbstractVector,Tuple})
    o.set_shape(Tuple(s))
    return o
end
set_shape(o::PyObject, s::Integer...) = set_shape(o, s)

"""
    AUTO_REUSE

`tf.AUTO_REUSE`: `variable_scope`'s default, `get_variable` returns an existing variable of the
same name instead of making another.
"""
const AUTO_REUSE = attribute_path(TF_MODULE, "AUTO_REUSE")

"""
    variable_scope(f, name_or_scope; reuse=AUTO_REUSE, kwargs...)

Run `f()` (a do-block) inside `tf.variable_scope(name_or_scope)`: variables made by
`get_variable` inside it are named `"scope/name"` and found again when they exist.
"""
function variable_scope(f, name_or_scope; reuse = AUTO_REUSE, kwargs...)
    @pywith tfcall("variable_scope", name_or_scope; reuse = reuse, kwargs...) begin
        f()
    end
end

unnamed() = string("unnamed_", string(rand(UInt64); base = 36))

"""
    get_variable(name::String; shape, dtype, initializer, ...)
    get_variable(o; name=missing, scope="")
    get_variable(dtype::Type; shape, name=missing, scope="")

`tf.get_variable`: the variable `name` in the current variable scope, made if it does not exist
yet. The second form makes it with initial value `o` (a number, an array or a tensor), the third
of type `dtype` and size `shape`; both inside `variable_scope(scope)`, named `unnamed_...` when
no name is given. Asked again with the same name, each returns the same variable.
"""
get_variable(name::String; kwargs...) =
    bridge_rule("adcme.variable", "variable", name, ""; tf_kwargs("get_variable", kwargs)...)

function get_variable(o::Union{PyObject,Bool,Number,AbstractArray{<:Number}};
                      name::Union{String,Missing} = missing, scope::String = "")
    bridge_rule("adcme.variable", "variable", name === missing ? unnamed() : name, scope;
                initializer = constant(o))
end

function get_variable(dtype::Type; shape::Union{AbstractVector{<:Integer},Tuple},
                      name::Union{String,Missing} = missing, scope::String = "")
    bridge_rule("adcme.variable", "variable", name === missing ? unnamed() : name, scope;
                shape = collect(shape), dtype = dtype)
end

get_variable(dtype::Type, shape::Union{AbstractVector{<:Integer},Tuple},
             name::Union{String,Missing} = missing, scope::String = "") =
    get_variable(dtype; shape = shape, name = name, scope = scope)

"""
    gradients(ys::Vector, xs; kwargs...) -> Vector

As ADCME: the gradients of each `ys[i]` separately (`[gradients(y, xs) for y in ys]`).
"""
gradients(ys::AbstractVector, xs; kwargs...) = [gradients(y, xs; kwargs...) for y in ys]

"""
    gradients_colocate(loss, xs; use_locking=true) -> PyObject or Vector

The gradients of a scalar `loss` with respect to `xs` (a tensor or a vector of them), each
gradient op on the device of the forward op it differentiates (`gradients(...; colocate=true)`).
"""
gradients_colocate(loss::PyObject, xs::Union{PyObject,AbstractVector}, args...;
                   use_locking::Bool = true, kwargs...) = gradients(loss, xs; colocate = true)

"""
    gradient_magnitude(l::PyObject, o) -> PyObject

The norm of all gradients of `l` with respect to `o` (a tensor or a vector of them):
`sqrt(sum_i norm(dl/do_i)^2)`, for debugging training.
"""
gradient_magnitude(l::PyObject, o::Union{AbstractArray,PyObject}) =
    bridge_rule("adcme.variable", "gradient_magnitude", l, o isa PyObject ? [o] : collect(o))

"""
    jacobian(y::PyObject, x::PyObject) -> PyObject

The Jacobian matrix `J[i, j] = dy[i]/dx[j]` of two vectors.
"""
jacobian(y::PyObject, x::PyObject) = bridge_rule("adcme.variable", "jacobian", y, x)

"""
    hessian(ys::PyObject, xs::PyObject) -> PyObject

The Hessian matrix of a scalar `ys` with respect to a vector `xs`.
"""
hessian(ys::PyObject, xs::PyObject; kwargs...) = bridge_rule("adcme.variable", "hessian", ys, xs; kwargs...)

"""
    hessian_vector(f, xs, v) -> PyObject

The Hessian of the scalar `f` with respect to `xs` times the vector `v`, without forming the
Hessian.
"""
hessian_vector(f, xs, v; kwargs...) = bridge_rule("adcme.variable", "hessian_vector", f, xs, v; kwargs...)

"""
    gradient_checkpointing(type="speed")

Not available in devplace: ADCME downloads `memory_saving_gradients.py` at run time and
replaces `tf.gradients` with it. Throws an error saying so.
"""
function gradient_checkpointing(type::String = "speed")
    error("gradient_checkpointing(\"", type, "\") is not available in devplace: ADCME downloads ",
          "memory_saving_gradients.py from the internet and patches tf.gradients with it. ",
          "Hint: recompute parts of a graph with tf.recompute_grad, or give the session more memory.")
end

for (name, doc) in (:constant_initializer => "constant values",
                    :glorot_normal_initializer => "Glorot (Xavier) normal values",
                    :glorot_uniform_initializer => "Glorot (Xavier) uniform values",
                    :random_normal_initializer => "normally distributed values",
                    :random_uniform_initializer => "uniformly distributed values",
                    :truncated_normal_initializer => "truncated normal values",
                    :uniform_unit_scaling_initializer => "uniform values, variance-preserving",
                    :variance_scaling_initializer => "values of variance scaled to the shape")
    path = string(name)
    @eval begin
        @doc $("""
            $name(args...; kwargs...) -> PyObject

        `tf.$name`: an initializer of $doc, for `get_variable(name; initializer=...)`.
        """) $name(args...; kwargs...) = tfcall($path, args...; kwargs...)
    end
end

"""
    sym(o) -> PyObject

The symmetric part `(o + o')/2` of a square matrix (a tensor or a Julia array).
"""
sym(o::PyObject) = 0.5 * (o + tfcall("linalg.adjoint", o))
sym(o::AbstractMatrix{<:Real}) = constant((o + o') / 2)

"""
    spd(o) -> PyObject

The symmetric positive semi-definite matrix `o * o'` of a square matrix.
"""
function spd(o::Union{PyObject,AbstractMatrix{<:Real}})
    s = size(o)
    length(s) == 2 && s[1] == s[2] || wrong_argument("spd", "o", o, "a square matrix",
                                                     "spd(rand(3, 3))")
    o isa PyObject ? tfcall("matmul", o, o; transpose_b = true) : constant(o * o')
end

"""
    tensor(v::Array; dtype=Float64, sparse=false) -> PyObject

A tensor from a Julia vector or matrix whose entries are numbers and scalar tensors, e.g.
`tensor([1 v 0; v 1 0])`; gradients flow to the tensors inside. (`sparse` is accepted for
ADCME's signature; the result is the same.)
"""
function tensor(v::AbstractVecOrMat; dtype::Type = Float64, sparse::Bool = false)
    bridge_rule("adcme.variable", "tensor_from", vec(collect(Any, v)), collect(size(v)), dtype)
end
tensor(v::PyObject; dtype::Type = Float64, sparse::Bool = false) = convert_to_tensor(v; dtype = dtype)

"""
    TensorArray(size=0, args...; dtype=Float64, dynamic_size=false, clear_after_read=false, ...)

`tf.TensorArray` for `while_loop`, of float64 elements unless `dtype` says otherwise. Use
`read(ta, i)` and `ta = write(ta, i, value)` with `i` counted from 1, and `stack(ta)`.
"""
function TensorArray(size_::Integer = 0, args...; kwargs...)
    kw = tf_kwargs("TensorArray", kwargs)
    for (k, v) in (:dtype => Float64, :dynamic_size => false, :clear_after_read => false)
        haskey(kw, k) || (kw[k] = v)
    end
    tfcall("TensorArray", args...; size = Int(size_), kw...)
end

"""
    read(ta::PyObject, i) -> PyObject

Element `i` (counted from 1; an integer or an integer tensor) of the TensorArray `ta`.
"""
Base.read(ta::PyObject, i::Union{PyObject,Integer}) =
    bounds_errors(() -> bridge_rule("adcme.variable", "tensor_array_read", ta, i), ta, (i,))

"""
    write(ta::PyObject, i, value) -> PyObject

The TensorArray `ta` with element `i` (counted from 1) set to `value` (a tensor or a Julia
number or array); use the result, as TensorFlow does: `ta = write(ta, i, value)`.
"""
Base.write(ta::PyObject, i::Union{PyObject,Integer}, value::Union{PyObject,Real,AbstractArray{<:Real}}) =
    bounds_errors(() -> bridge_rule("adcme.variable", "tensor_array_write", ta, i, value), ta, (i,))

"""
    copy(o::PyObject) -> PyObject

A tensor with the value `o` has when it is evaluated (`tf.identity`): for a variable, its value
at that time.
"""
Base.copy(o::PyObject) = tfcall("identity", o)

"""
    zeros_like(o, args...; kwargs...) -> PyObject

A tensor of zeros of the size and type of `o` (a tensor, a number or a Julia array).
"""
zeros_like(o::Union{PyObject,Real,AbstractArray{<:Real}}, args...; kwargs...) =
    tfcall("zeros_like", o, args...; tf_kwargs("zeros_like", kwargs)...)

"""
    ones_like(o, args...; kwargs...) -> PyObject

A tensor of ones of the size and type of `o` (a tensor, a number or a Julia array).
"""
ones_like(o::Union{PyObject,Real,AbstractArray{<:Real}}, args...; kwargs...) =
    tfcall("ones_like", o, args...; tf_kwargs("ones_like", kwargs)...)

"""
    is_variable(o::PyObject) -> Bool

Whether `o` is a trainable variable.
"""
is_variable(o::PyObject) = bridge_rule("adcme.variable", "is_variable", o)::Bool
