# How the ADCME files below call the host, one request per call: `tfcall("linalg.det", x)` calls
# `tf.linalg.det` (the attribute path resolved once per host), `adcme_rule("scatter", ...)` a
# function of python/devplace/bridge/adcme.py (ADCME rules that need several TF ops), and
# `tf_kwargs` turns ADCME's keywords into TF's (`dims` counted from 1 becomes `axis` from 0).

const ADCME_MODULE = lazy_pyobject(() -> request(OP_IMPORT | BY_HANDLE, ("devplace.bridge.adcme",)))
const TF_PATHS = Dict{String,PyObject}()
const ADCME_RULES = Dict{String,PyObject}()

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
    adcme_rule(name, args...; kwargs...)

Call `devplace.bridge.adcme.<name>` in one request.
"""
adcme_rule(name::String, args...; kwargs...) =
    call_python(get!(() -> attribute(ADCME_MODULE, name), ADCME_RULES, name), name, args, kwargs)

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
