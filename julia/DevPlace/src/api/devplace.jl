# The devplace API in Julia: each name forwards to the Python function of the same name
# (docs/design.md, "API contract"), with Julia conventions (keywords, `run(sess, fetches, feeds...)`
# extending Base.run, do-blocks for scopes).

"""
    tf

The host's `devplace.tf`, i.e. `tensorflow.compat.v1` in TF1 graph mode: `tf.device(...)`,
`tf.GraphKeys.UPDATE_OPS`, `tf.NodeDef`, ... Resolved on first use. `tf.device(f)` with a
Julia device function checks what `f` returns for each op: a device string such as
`"/gpu:0"`, or `""` for none (anything else is an error naming the value and the op).
"""
const tf = lazy_pyobject(() -> request(OP_GETATTR | BY_HANDLE, (SEMANTICS, "tf_for_julia")))

"""
    dp

The host's `devplace` Python module, for anything this package does not wrap.
"""
const dp = DP_MODULE

"""
    pyimport(name) -> PyObject

Import a Python module in the host.
"""
pyimport(name::AbstractString) = request(OP_IMPORT | BY_HANDLE, (String(name),))::PyObject

# Builtins looked up once per host (a call to one is then a single request).
const BUILTINS = Dict{String,PyObject}()

"""
    pybuiltin(name) -> PyObject

A Python builtin, e.g. `pybuiltin("isinstance")(op, tf.NodeDef)`.
"""
function pybuiltin(name::Union{AbstractString,Symbol})
    key = String(name)
    o = get(BUILTINS, key, nothing)
    o === nothing || (resolve_lazy(o); return o)
    o = lazy_pyobject(() -> request(OP_BUILTIN | BY_HANDLE, (key,)))
    resolve_lazy(o)  # a NameError now for a name Python lacks
    return BUILTINS[key] = o
end

const DP_FUNCTIONS = Dict{String,PyObject}()

function dpfunction(name::String)
    f = get(DP_FUNCTIONS, name, nothing)  # not `get!` with a closure: compiled ahead, as a whole
    return f === nothing ? (DP_FUNCTIONS[name] = attribute(DP_MODULE, name)) : f
end

dpcall(name::String, args...; kwargs...) = call_python(dpfunction(name), name, args, kwargs)

"""
    wrong_argument(fname, argname, value, expected, hint)

Throw an `ArgumentError` saying that argument `argname` of `fname` must be `expected`, showing
the `value` given and its type, with a `hint` (how to call it right).
"""
function wrong_argument(fname, argname, value, expected, hint)
    throw(ArgumentError(string(fname, ": ", argname, " must be ", expected, ", got ",
                               summary_of(value), " (", typeof(value), "). Hint: ", hint)))
end

using Statistics: mean

# What the REPL shows of a Python object: one line for `show`/`repr` (a placement report's or a
# profile's summary, never a trace dump), the readable table for `text/plain` where there is one.
function show_python(io::IO, how::String, o::PyObject)
    text = try
        semantics(how, o)::String
    catch err
        err isa InterruptException && rethrow()
        string("<PyObject: ", sprint(showerror, err), ">")
    end
    print(io, text)
end

Base.show(io::IO, o::PyObject) = show_python(io, "summary", o)
Base.show(io::IO, ::MIME"text/plain", o::PyObject) = show_python(io, "display", o)

const SESSION_HINT = "make one with `sess = Session()` (or `Session(cpus=2, ...)`), then `init(sess)`"
not_a_session(fname, sess) = wrong_argument(fname, "sess", sess, "a Session", SESSION_HINT)

"""
    julia_dtype(value)

The tensor type a Julia value makes, as in ADCME: its own numeric type (`Float64` -> float64,
`Float32` -> float32, `Int` -> int64, `Bool` -> bool), an array its element type; other reals
travel as `Float64` (`π`, `1//3`) and other integers as `Int64`. `nothing` (TensorFlow infers
it) for anything else, e.g. a tensor.
"""
julia_dtype(x::Number) = x isa WireNumber ? typeof(x) : x isa Integer ? Int64 :
                          x isa Real ? Float64 : nothing
julia_dtype(::AbstractArray{T}) where {T<:WireNumber} = T
julia_dtype(_) = nothing

"""
    Variable(initial_value; dtype, kwargs...) -> PyObject

A TF1 variable (`VariableV2` op), as `dp.Variable`. Its type is the Julia value's
(`Variable(1.0)` is float64, `Variable(1)` int64, `Variable(1f0)` float32) unless `dtype` says
otherwise.
"""
Variable(value; dtype = julia_dtype(value), kwargs...) =
    dpcall("Variable", value; dtype = dtype, kwargs...)

"""
    constant(value; dtype, kwargs...) -> PyObject

A constant tensor, as `dp.constant`, of the Julia value's type: `constant(1.1)` is float64 (and
`run` gives back exactly `1.1`), `constant(1)` int64, `constant(Float32[1, 2])` float32;
`dtype=Float32` or `dtype=tf.float32` chooses another.
"""
constant(value; dtype = julia_dtype(value), kwargs...) =
    dpcall("constant", value; dtype = dtype, kwargs...)

"""
    placeholder(dtype; shape=(), kwargs...) -> PyObject
    placeholder(value; kwargs...) -> PyObject

A placeholder, as `dp.placeholder`; `dtype` may be a Julia type (`Float64`) or a TF dtype. As in
ADCME, it is a scalar unless `shape` says otherwise (`shape=[nothing, 3]`; `nothing`: unknown).
Given a Julia number or array instead (as in ADCME), a placeholder with that value as its
default, of the value's size and type (or `dtype`'s: `placeholder(1, dtype=Float64)`).
"""
function placeholder(dtype; shape = (), kwargs...)
    dtype isa Type && !(dtype <: WireNumber) && wrong_argument("placeholder", "dtype", dtype,
        "a numeric Julia type, a TF dtype or a dtype name",
        "placeholder(Float32; shape=[2, 3]), placeholder(tf.int64) or placeholder(\"float32\")")
    shape isa AbstractArray && (shape = Tuple(shape))
    dpcall("placeholder", dtype; shape = shape, kwargs...)
end

placeholder(value::Union{Number,AbstractArray}; dtype = julia_dtype(value), kwargs...) =
    call_python(TF_PLACEHOLDER_WITH_DEFAULT, "placeholder", (constant(value; dtype = dtype),),
                (; shape = size(value), kwargs...))

const TF_PLACEHOLDER_WITH_DEFAULT = attribute(TF_MODULE, "placeholder_with_default")

"""
    gradients(ys, xs; colocate=false, kwargs...)

Gradients of `ys` with respect to `xs` (a tensor gives a tensor, a vector gives a vector).
`colocate=true` puts each gradient op on the device of the forward op it differentiates.
"""
function gradients(ys, xs; colocate = false, kwargs...)
    colocate isa Bool || wrong_argument("gradients", "colocate", colocate, "true or false",
                                        "gradients(loss, w; colocate=true)")
    dpcall("gradients", ys, xs; colocate = colocate, kwargs...)
end

"""
    Session(; cpus, gpus, soft, log_placement, inter, intra, ...) -> PyObject

A TF1 session configured as `dp.Session` (see its docstring for every keyword). Each option's
type is checked here (`soft="no"` is an error, not true); its range is checked in Python.
ADCME's `CPU` and `GPU` (device counts) are `cpus` and `gpus`.
"""
function Session(; kwargs...)
    kwargs = adcme_session_keywords(kwargs)
    for (name, value) in pairs(kwargs)
        expected, ok, example = get(SESSION_OPTIONS, name, ("", _ -> true, ""))
        ok(value) || wrong_argument("Session", string("option `", name, "`"), value, expected,
                                    string("Session(", name, "=", example, ")"))
    end
    dpcall("Session"; kwargs...)
end
Session(args...; kwargs...) = throw(ArgumentError(string(
    "Session takes keyword arguments only, got ", length(args), " positional: ",
    summary_of(args), ". Hint: Session(cpus=2, soft=true)")))

"Session's keywords with ADCME's `CPU`/`GPU` renamed `cpus`/`gpus` (both names at once: an error)."
function adcme_session_keywords(kwargs)
    out = Dict{Symbol,Any}(kwargs)
    for (adcme, own) in (:CPU => :cpus, :GPU => :gpus)
        haskey(out, adcme) || continue
        haskey(out, own) && throw(ArgumentError(string("Session: `", adcme, "` (ADCME's name) and `",
            own, "` are the same option, given twice. Hint: Session(", own, "=2)")))
        out[own] = pop!(out, adcme)
    end
    return out
end

# Each Session option's type, what to say, and an example (Python checks the ranges).
is_real(x) = x isa Real && !(x isa Bool)
const FLAG = ("true or false", x -> x isa Bool, "true")
const COUNT = ("an integer or nothing", x -> x === nothing || x isa Integer && !(x isa Bool), "2")
const SESSION_OPTIONS = Dict(
    :soft => FLAG, :log_placement => FLAG, :per_session_threads => FLAG, :optimize => FLAG,
    :allow_growth => ("true, false or nothing", x -> x === nothing || x isa Bool, "true"),
    :cpus => COUNT, :gpus => COUNT, :inter => COUNT, :intra => COUNT,
    :gpu_memory_fraction => ("a number or nothing", x -> x === nothing || is_real(x), "0.4"),
    :virtual_gpus => ("a count, a vector of MiB, or nothing",
                      x -> x === nothing || x isa Integer && !(x isa Bool) ||
                           x isa AbstractVector{<:Integer}, "4"),
    :timeout => ("a number of seconds or nothing", x -> x === nothing || is_real(x), "30"),
    :target => ("a string or nothing", x -> x === nothing || x isa AbstractString,
                "\"grpc://localhost:2222\""))

"""
    last_error(io=stdout)

Print the full text of the latest Python error: its type, its whole message (TensorFlow's stack
listings included) and every Python frame but the bridge's. A `PyError` shows a short form.
"""
last_error(io::IO = stdout) = print(io, pyimport("devplace.bridge.error_text").last_text())

"""
    init(sess)

Initialize all global variables in `sess`.
"""
init(sess::PyObject) = dpcall("init", sess)
init(sess) = not_a_session("init", sess)

"""
    feed_dict(fname, feeds::Tuple)
    feed_dict(fname, feeds::Tuple, dict)

The feeds of `fname(sess, fetches, feeds...)` as a Python dict (`nothing` for none): any number
of `placeholder => value` pairs, or one Dict of them; anything else is a clear error. With
`dict`, the keyword `feed_dict=` (TensorFlow's name), which takes the place of `feeds`.
"""
function feed_dict(fname, feeds::Tuple, dict)
    dict === nothing && return feed_dict(fname, feeds)
    isempty(feeds) || wrong_argument(fname, "feed_dict", dict, "left out when feeds are given",
                                     string("pass the feeds once: ", fname, "(sess, y, x => 1.0) or ",
                                            fname, "(sess, y; feed_dict=Dict(x => 1.0))"))
    return dict isa PyObject ? dict : feed_dict(fname, (dict,))
end
function feed_dict(fname, feeds::Tuple)
    isempty(feeds) && return nothing
    all(f -> f isa Pair, feeds) && return PyDict(Pair[feeds...])
    length(feeds) == 1 && feeds[1] isa AbstractDict && return PyDict(Pair[feeds[1]...])
    bad = something(findfirst(f -> !(f isa Pair), feeds), 1)
    wrong_argument(fname, "each feed", feeds[bad], "a `placeholder => value` pair (or one Dict of them)",
                   string(fname, "(sess, y, x => [1.0, 2.0]) or ", fname,
                          "(sess, y, Dict(x => [1.0, 2.0]))"))
end

const SEM_RUN = attribute(SEMANTICS, "run")

"""
    run(sess, fetches, feeds::Pair...)
    run(sess, fetches, feeds::AbstractDict)
    run(sess, fetches; feed_dict)

Run `fetches` (a tensor, op, or a vector/tuple of them) in `sess` with `placeholder => value`
feeds (or one Dict of them, also as TensorFlow's keyword `feed_dict=`); returns Julia values of the tensors' types (a float64 scalar is a
`Float64`, a float32 one a `Float32`, int64 an `Int64`; arrays with the same shape as in Python).
"""
function Base.run(sess::PyObject, fetches, feeds...; feed_dict = nothing)
    args = (sess, fetches, API.feed_dict("run", feeds, feed_dict))
    pairs = direct_fetches(fetches) ? feed_pairs(feeds, feed_dict) : nothing
    # a training loop's step: in process, without messages
    pairs === nothing ||
        return run_direct(sess, fetches, pairs, OP_CALL | IN_PLACE, (SEM_RUN, args))
    # TensorFlow reads big feeds where Julia wrote them
    return call_python(SEM_RUN, "run", args, (); op = OP_CALL | IN_PLACE)
end

"`run`'s feeds (checked by `feed_dict`) as a tuple of pairs, or nothing (a Python dict)."
function feed_pairs(feeds::Tuple, dict)
    dict === nothing || return dict isa AbstractDict ? Tuple(dict) : nothing
    return length(feeds) == 1 && feeds[1] isa AbstractDict ? Tuple(feeds[1]) : feeds
end

"""
    run_profile(sess, fetches, feeds...; repeat=1, feed_dict)

Run like `run`, tracing every op, and return what `run` returns (as ADCME does). The profile is
kept for `save_profile(path)` and is `last_profile()`: `.op_stats`, `.step_time_us`, ... (also
what `autoplace(...; profile=last_profile())` takes).
"""
function run_profile(sess::PyObject, fetches, feeds...; feed_dict = nothing, feed = nothing,
                     kwargs...)
    # `feed` is Python's name for it: one of the two, as in Python
    feed === nothing || feed_dict === nothing || wrong_argument("run_profile", "feed_dict",
        feed_dict, "left out when feed is given (they are two names for one argument)",
        "pass the feeds once: run_profile(sess, y; feed_dict=Dict(x => 1.0))")
    dict = feed_dict === nothing ? feed : feed_dict
    return semantics("run_profile", sess, fetches, API.feed_dict("run_profile", feeds, dict);
                     kwargs...)
end
run_profile(sess, fetches, feeds...; kwargs...) = not_a_session("run_profile", sess)
# `run` of what is not a session, e.g. `run("sess", y)` (Base's `run` of a command stays Base's).
Base.run(sess::Union{AbstractString,Symbol,Number,Nothing,AbstractArray,AbstractDict,Tuple},
         fetches, feeds...; kwargs...) = not_a_session("run", sess)

"""
    last_profile() -> PyObject

The Python `Profile` of the latest `run_profile`: `.values`, `.op_stats` (per op: device,
start, duration), `.step_time_us`, `.runs`, `.trace` (the Chrome trace), `.save(path)`.
"""
last_profile() = dpcall("last_profile")

"""
    save_profile(path)

Write the last `run_profile` trace as Chrome trace JSON (open in chrome://tracing). A relative
`path` is relative to Julia's working directory (the host process has its own).
"""
save_profile(path::AbstractString) = dpcall("save_profile", abspath(path))
save_profile(path) = wrong_argument("save_profile", "path", path, "a file name (a string)",
                                    "save_profile(\"profile.json\"), then open it in chrome://tracing")

"""
    placement(sess, fetches, feeds...; feed_dict) -> PyObject

Where each op ran: requested and actual device per op, and the cross-device transfers
(`report.actual("op name")`, `report.table()`). Feeds as for `run`.
"""
placement(sess::PyObject, fetches, feeds...; feed_dict = nothing) =
    dpcall("placement", sess, fetches, API.feed_dict("placement", feeds, feed_dict))
placement(sess, fetches, feeds...) = not_a_session("placement", sess)

"""
    placement_log(sess) -> Vector{String}

TensorFlow's device placement log lines captured for `sess` (needs `log_placement=true`).
"""
placement_log(sess::PyObject) = dpcall("placement_log", sess)
placement_log(sess) = not_a_session("placement_log", sess)

"""
    get_collection(name)
    get_collection()

As in ADCME: the graph collection `name` when it is one (`UPDATE_OPS`, `TRAINABLE_VARIABLES`,
any key in use), else the trainable variables whose names match the regular expression `name`
(`get_collection("my_collect")` finds `my_collect1`); with no name, every trainable variable.
"""
get_collection(name::Union{AbstractString,Nothing,Missing} = nothing) =
    semantics("get_collection", name isa AbstractString ? String(name) : nothing)

"""
    UPDATE_OPS

The name of the collection holding batch-norm moving-average updates (`tf.GraphKeys.UPDATE_OPS`).
"""
const UPDATE_OPS = "update_ops"

"""
    bn(x; training=true, kwargs...)

Batch normalization built from `tf.nn` ops; its moving-average updates go to `UPDATE_OPS`.
ADCME's keywords `is_training` and `scope` are `training` and `name`.
"""
function bn(x; kwargs...)
    kw = Dict{Symbol,Any}(kwargs)
    haskey(kw, :is_training) && (kw[:training] = pop!(kw, :is_training))
    haskey(kw, :scope) && (kw[:name] = pop!(kw, :scope))
    return dpcall("bn", x; kw...)
end

"""
    batch_norm(x; training=true, kwargs...)

Same as `bn`.
"""
batch_norm(x; kwargs...) = dpcall("batch_norm", x; kwargs...)

"""
    control_dependencies(f, ops)

Run `f()` (a do-block) so that the ops it builds run only after `ops`.
"""
function control_dependencies(f::Function, ops)
    @pywith dpcall("control_dependencies", ops) begin
        f()
    end
end

"""
    device(spec_or_function) -> PyObject

A device scope from a device string or a Julia function `op -> device string` (checked as in
`tf.device`).
"""
device(spec) = semantics("device", spec)

"""
    device(f, spec)

Run `f()` (a do-block) inside `device(spec)`.
"""
function device(f::Function, spec)
    @pywith_for_caller device(spec) begin
        f()
    end
end

"""
    canonical_device(spec) -> String

The canonical form of a device string, e.g. `"/gpu:1"` gives `"/device:GPU:1"`.
"""
canonical_device(spec) = dpcall("canonical_device", spec)

"""
    assign_to_device(device, ps_device="/device:CPU:0") -> PyObject

devplace's device function putting variable-like ops on `ps_device`, others on `device`.
Not exported: the seeds define their own `assign_to_device` in Julia.
"""
assign_to_device(device, ps_device = "/device:CPU:0") = dpcall("assign_to_device", device, ps_device)

"""
    by_op_type(placements; default=nothing) -> PyObject

A device function placing ops by type: `placements[op_type]`, else `default`.
"""
by_op_type(placements; default = nothing) = dpcall("by_op_type", placements, default)

"""
    with_updates(op, updates) -> PyObject

`op` grouped with `updates` (e.g. batch-norm updates) so that running it runs them too.
"""
with_updates(op, updates) = dpcall("with_updates", op, updates)

"""
    round_robin(devices) -> PyObject

A device function putting variables on `devices` in turn.
"""
round_robin(devices) = dpcall("round_robin", devices)

"""
    greedy_by_bytes(devices) -> PyObject

A device function putting each variable on the device holding the fewest bytes so far.
"""
greedy_by_bytes(devices) = dpcall("greedy_by_bytes", devices)

"""
    autoplace(fetches; devices, strategy="auto", cost, profile, memory, respect_pins=true,
              budget) -> PyObject

Place the ops that `fetches` need on `devices` (a vector of device strings), choosing the
placement whose step time the cost model and simulator predict to be shortest; forwards to
Python's `devplace.autoplacer` (every keyword goes there). `profile` may be a
`run_profile(...; repeat=N)` result (measured op times); `memory` a Dict of byte caps per device.

The result is the Python `AutoPlacement`:
- `p.predicted_step_time` (µs), `p.devices` (a Dict op name => device), `p["op name"]`,
  `length(p)`;
- `p.apply()`: set each placed op's device in the default graph (returns how many changed);
- `p.device_function()`: a device function giving the same placement when the graph is
  built again, for `DevPlace.device(...)` or `tf.device(...)`.

```julia
p = autoplace(loss; devices=["/cpu:0", "/cpu:1"])
p.apply()
sess = Session(cpus=2, optimize=false)
```
"""
function autoplace(fetches; devices = nothing, kwargs...)
    devices isa Union{AbstractVector,Tuple} || wrong_argument(
        "autoplace", "devices", devices, "a vector of device strings",
        "autoplace(loss; devices=[\"/cpu:0\", \"/cpu:1\"])")
    dpcall("autoplace", fetches; devices = devices, kwargs...)
end
