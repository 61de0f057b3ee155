# How the ADCME files below call the host, one request per call: `tfcall("linalg.det", x)` calls
# `tf.linalg.det` (the attribute path resolved once per host), `bridge_rule("adcme.ops",
# "scatter", ...)` a function of python/devplace/bridge/adcme/ops.py (ADCME rules that need
# several TF ops; each file here has its module of the same name there), `scatter_index` gives
# Julia's indices as those rules take them, and `tf_kwargs` turns ADCME's keywords into TF's
# (`dims` counted from 1 becomes `axis` from 0).

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
    scatter_index(i) -> Vector{Int}, PyObject or nothing

Julia indices (from 1) as the host's rules take them: a Julia value 0-based, a tensor as it is
(1-based: python/devplace/bridge/adcme/calls.py subtracts one in the graph), `:` as `nothing`.
"""
scatter_index(i::Integer) = [Int(i) - 1]
scatter_index(i::AbstractVector{Bool}) = findall(i) .- 1
scatter_index(i::AbstractVector{<:Integer}) = Int[x - 1 for x in i]
scatter_index(::Colon) = nothing
scatter_index(i::PyObject) = i

"""
    tf_kwargs(fname, kwargs) -> Dict{Symbol,Any}

ADCME's keywords as TensorFlow's: `dims` (from 1, an integer or several) becomes `axis` (from
0); `colocate` becomes `colocate_gradients_with_ops`. `axis` itself is refused, as in ADCME.
"""
function tf_kwargs(fname, kwargs)
    out = Dict{Symbol,Any}(kwargs)
    haskey(out, :axis) && throw(ArgumentError(string(fname, ": `axis` is not a keyword here: ",
        "use `dims`, counted from 1 as in Julia. Hint: ", fname, "(x; dims=1)")))
    if haskey(out, :dims)
        d = pop!(out, :dims)
        d isa Integer || d isa Union{Tuple,AbstractVector} && all(x -> x isa Integer, d) ||
            wrong_argument(fname, "dims", d, "a dimension or several (from 1)",
                           string(fname, "(x; dims=1) or ", fname, "(x; dims=(1, 2))"))
        out[:axis] = d isa Integer ? Int(d) - 1 : Tuple(Int(x) - 1 for x in d)
    end
    haskey(out, :colocate) && (out[:colocate_gradients_with_ops] = pop!(out, :colocate))
    return out
end
