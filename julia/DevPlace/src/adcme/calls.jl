# How the ADCME files below call the host, one request per call: `tfcall("linalg.det", x)` calls
# `tf.linalg.det` (the attribute path resolved once per host), `bridge_rule("adcme.ops",
# "scatter", ...)` a function of python/devplace/bridge/adcme/ops.py (ADCME rules that need
# several TF ops; each file here has its module of the same name there), `scatter_index` gives
# Julia's indices as those rules take them, `tfcall_dims` calls a TF function with ADCME's
# `dims` (from 1; the host makes it TF's `axis`), and `tf_kwargs` renames ADCME's `colocate`.

const TF_PATHS = Dict{String,PyObject}()
const BRIDGE_MODULES = Dict{String,PyObject}()
const BRIDGE_RULES = Dict{Tuple{String,String},PyObject}()

"The PyObject at `path` (e.g. \"linalg.det\") under `root`, found again in each new host."
attribute_path(root::PyObject, path::String) = lazy_pyobject(() -> foldl(
    (o, name) -> request(OP_GETATTR | BY_HANDLE, (o, String(name))), split(path, '.'); init = root))

"""
    tfcall(path, args...; kwargs...)

Call `tf.<path>` (`path` such as `"linalg.det"`) in one request.
"""
tfcall(path::String, args...; kwargs...) =
    call_python(get!(() -> attribute_path(TF_MODULE, path), TF_PATHS, path), path, args, kwargs)

"""
    bridge_rule(mod, name, args...; kwargs...)

Call `devplace.bridge.<mod>.<name>` (e.g. `bridge_rule("adcme.io", "matread", file)`) in one
request.
"""
bridge_rule(mod::String, name::String, args...; kwargs...) = call_python(
    get!(() -> attribute(bridge_module(mod), name), BRIDGE_RULES, (mod, name)), name, args, kwargs)

"The host's module `devplace.bridge.<mod>` (e.g. `\"adcme.sparse\"`), imported again in each new host."
bridge_module(mod::String) = get!(BRIDGE_MODULES, mod) do
    lazy_pyobject(() -> request(OP_IMPORT | BY_HANDLE, ("devplace.bridge." * mod,)))
end

"""
    scatter_index(i) -> Int, Vector, PyObject or nothing

Julia indices as the host's rules take them: as written (from 1; integers, vectors, Bool masks
or a tensor of them: `julia_semantics.zero_based` makes them TensorFlow's), `:` as `nothing`.
"""
scatter_index(i::Integer) = Int(i)
scatter_index(i::AbstractVector{Bool}) = collect(Bool, i)
scatter_index(i::AbstractVector{<:Integer}) = collect(Int, i)
scatter_index(i::PyObject) = i
scatter_index(::Colon) = nothing

"""
    tfcall_dims(fname, path, args...; kwargs...)

`tfcall(path, args...; kwargs...)` for ADCME's `fname`, whose `dims` (from 1) the host makes
TensorFlow's `axis`, checked as every `dims` is (`julia_semantics.call_with_dims`); `axis`
itself is refused, as in ADCME. A bad `dims` is an `ArgumentError`.
"""
tfcall_dims(fname::String, path::String, args...; kwargs...) = argument_errors(() -> semantics(
    "call_with_dims", fname, get!(() -> attribute_path(TF_MODULE, path), TF_PATHS, path), args...;
    kwargs...))

"""
    tf_kwargs(fname, kwargs) -> Dict{Symbol,Any}

ADCME's keywords as TensorFlow's: `colocate` becomes `colocate_gradients_with_ops`.
"""
function tf_kwargs(fname, kwargs)
    out = Dict{Symbol,Any}(kwargs)
    haskey(out, :colocate) && (out[:colocate_gradients_with_ops] = pop!(out, :colocate))
    return out
end
