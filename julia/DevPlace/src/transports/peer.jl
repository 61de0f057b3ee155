# Julia's counterpart in Python, whatever transport carries the calls (python/devplace/bridge/
# peer.py is the other end): the errors a peer raises, the Julia functions Python holds and the
# exceptions thrown in them (by id), a callback's call and answer, and the interpreter to run.
# The transports are transports/host.jl (a Python process of its own, over pipes) and
# transports/inprocess.jl (libpython in this process); transport.jl chooses between them and
# sends each request.

"""
    HostError(msg)

The DevPlace Python host could not be started, died, or stopped answering.
"""
struct HostError <: Exception
    msg::String
end

Base.showerror(io::IO, e::HostError) = print(io, "HostError: ", e.msg)

"""
    Peer

Julia's counterpart in Python, whatever carries the calls: a `Host` (a Python process of its
own, over pipes) or an `InProcess` (libpython in Julia's own process, inprocess.jl). Both hold
the Julia functions Python may call and the exceptions thrown in them, by id.
"""
abstract type Peer end

const GENERATION = Ref(0)
const HOST_LOCK = ReentrantLock()
const TIMEOUT = Ref(600.0)
const START_TIMEOUT = Ref(120.0)
const REPO_ROOT = normpath(joinpath(@__DIR__, "..", "..", "..", ".."))
const HINT_PYTHON = string(
    "Hint: set ENV[\"DEVPLACE_PYTHON\"] to a Python interpreter with devplace installed ",
    "(`pip install -e .` or `make setup` in the devplace repository), or create the ",
    "project's .venv.")
# Julia exceptions from callbacks kept for Python's answer; more than this many means Python
# swallowed some, and the oldest are forgotten.
const MAX_KEPT_ERRORS = 64

"""
    set_timeout(seconds)

Bound every wait for the Python host to `seconds` (default 600, or `ENV["DEVPLACE_TIMEOUT"]`).
A host that does not answer in time is stopped and the call throws a `HostError`.
"""
function set_timeout(seconds::Real)
    seconds > 0 || throw(ArgumentError("timeout must be positive, got $seconds"))
    TIMEOUT[] = Float64(seconds)
end

"""
    timeout() -> Float64

The current bound, in seconds, on each wait for the Python host.
"""
timeout() = TIMEOUT[]

"""
    python_interpreter() -> String

The interpreter DevPlace's Python runs in: `DEVPLACE_PYTHON`, else the project's `.venv`, else
`python3`.
"""
function python_interpreter()
    py = get(ENV, "DEVPLACE_PYTHON", "")
    isempty(py) || return py
    venv = joinpath(REPO_ROOT, ".venv", "bin", "python")
    isfile(venv) && return venv
    found = Sys.which("python3")
    found === nothing && throw(HostError("no Python interpreter found. " * HINT_PYTHON))
    return found
end

"The repository's `python/` folder, first on Python's path; \"\" where it holds no devplace."
python_folder() = (d = joinpath(REPO_ROOT, "python"); isdir(joinpath(d, "devplace")) ? d : "")

"""
    python_command() -> Cmd

The command that starts the host: `python_interpreter()` with the repository's `python/` folder
on `PYTHONPATH`.
"""
function python_command()
    py = python_interpreter()
    env = copy(ENV)
    pydir = python_folder()
    if !isempty(pydir)
        old = get(env, "PYTHONPATH", "")
        env["PYTHONPATH"] = isempty(old) ? pydir : string(pydir, ":", old)
    end
    # TensorFlow (most of the start-up) loads while Julia compiles and sends its first call.
    preload = "devplace.bridge.julia_semantics"
    shm = `--shm-dir $(SHM_DIR[]) --shm-min $(SHM_MIN[])`
    return setenv(`$py -m devplace.bridge --write-fd 3 --parent-pid $(getpid()) --preload $preload $shm`, env)
end

function register_function!(h::Peer, f)
    h.next_function += 1
    h.functions[h.next_function] = f
    return h.next_function
end

function lookup_function(h::Peer, id::UInt64, name::String)
    f = get(h.functions, id, nothing)
    f === nothing && throw(WireError("Python returned Julia function $name (id $id), which it had released"))
    return f
end

"""
    encode_request(h, op, args, enc) -> enc

`enc` holding request `op` with `args`; the Julia functions registered for them are forgotten
again if they cannot be encoded.
"""
function encode_request(h::Peer, op::UInt8, args::Tuple, enc::Encoder)
    write(enc.buf, op)
    first_new = h.next_function + 1
    try
        encode!(enc, h, args)
    catch
        for id in first_new:h.next_function
            delete!(h.functions, id)
        end
        rethrow()
    end
    return enc
end

"""
    host_lost!(h; wait=true)

Forget peer `h`: its Python objects are gone, the next call starts a fresh peer (each transport
says how: host.jl, inprocess.jl).
"""
function host_lost! end

function protocol_failure(h::Peer, msg::AbstractString)
    host_lost!(h)
    throw(HostError(string("protocol error with the DevPlace Python host: ", msg,
                           ". The host was stopped; the next call starts a fresh one.")))
end

function decode_body(h::Peer, body::Vector{UInt8})
    try
        return decode_value(body, h)
    catch err
        err isa WireError || rethrow()
        protocol_failure(h, err.msg)
    end
end

"The exception for an ERROR `(type, message, traceback[, julia_id])` from the host."
function python_error(h::Peer, value)
    type, message, traceback = value[1]::String, value[2]::String, value[3]::String
    id = length(value) >= 4 ? value[4] : nothing
    kept = id isa Integer ? pop!(h.errors, UInt64(id), nothing) : nothing
    kept === nothing && return PyError(type, message, traceback)
    err, bt = kept
    # A Python error that went through a Julia function, or a Ctrl-C, is itself once more.
    (err isa PyError || err isa InterruptException) && return err
    return PyError(type, message, traceback, err, bt)
end

"Keep `err`, thrown by a Julia function Python called, for Python's answer; its ERROR payload."
function callback_error!(h::Peer, err, bt)
    err isa InterruptException && (h.interrupted = true)
    h.next_error += 1
    # A PyError passing through keeps its own traceback; only a Julia error needs its frames.
    h.errors[h.next_error] = (err, err isa PyError ? "" : user_backtrace(bt))
    length(h.errors) > MAX_KEPT_ERRORS && delete!(h.errors, minimum(keys(h.errors)))
    message = err isa PyError ? string(err.type, ": ", err.message) : sprint(showerror, err)
    return (string(typeof(err)), message, h.errors[h.next_error][2], Int(h.next_error))
end

const BRIDGE_FILES = Set(normpath(joinpath(@__DIR__, "..", f)) for f in ("codec/frames.jl",
    "codec/shm.jl", "codec/wire.jl", "codec/requests.jl", "transports/fdio.jl", "transports/gcqueue.jl",
    "transports/peer.jl", "transports/host.jl", "transports/cpython.jl", "transports/inprocess.jl",
    "transports/transport.jl", "objects/pyobject.jl"))

"""
    user_backtrace(bt) -> String

The frames of `bt` (a callback's backtrace) up to the bridge's `run_callback`, the bridge's
own left out unless DEVPLACE_DEBUG is set. Looked up frame by frame from the top: a deeply
nested callback must not pay for the whole stack.
"""
function user_backtrace(bt)
    debug = !(get(ENV, "DEVPLACE_DEBUG", "") in ("", "0"))
    lines = String[]
    for ptr in bt, f in StackTraces.lookup(ptr)
        f.func === :call_function && break
        (debug || !(f.from_c || f.line <= 0 || string(f.file) in BRIDGE_FILES ||
                    f.func === :reenable_sigint)) &&
            push!(lines, string(" [", length(lines) + 1, "] ", f))
    end
    return join(lines, "\n")
end

# `f`, called from Python with `args` and `kw`, has no method for them: say so, naming it and
# what it takes (a device function, the usual case, takes the op).
function no_method_error(f, args::Tuple, kw)
    kws = isempty(kw) ? "" : string(" and keywords ", join(first.(kw), ", "))
    return ArgumentError(string(
        "Julia function `", nameof(f), "` was called from Python with ",
        plural(length(args), "argument"), kws, ", but ", method_arities(f), ". Hint: a ",
        "device function (`tf.device(f)`, `DevPlace.device(f)`) takes one argument, the ",
        "op, e.g. `op -> \"/cpu:0\"`; other functions get what the Python code passes."))
end

# Is `err` the call `f(args...; kw...)` itself finding no method (not a call inside `f`)?
no_method_for(err, f, args) = err isa MethodError &&
    (err.f === f && err.args === args ||
     err.f === Core.kwfunc(f) && length(err.args) >= 2 && err.args[2] === f &&
     Base.tail(Base.tail(err.args)) === args)

plural(n, word) = string(n, " ", word, n == 1 ? "" : "s")

"What `f`'s methods take, e.g. \"it takes 0 or 2 arguments\" (keywords aside)."
function method_arities(f)
    ms = methods(f)
    isempty(ms) && return "it has no methods"
    counts = sort!(unique([m.nargs - 1 - m.isva for m in ms]))
    var = any(m -> m.isva, ms) ? " (or more)" : ""
    return string("it takes ", join(counts, ", ", " or "), " argument",
                  counts == [1] ? "" : "s", var)
end

# What the host sent with the op a Julia device function is called with (a CALLBACK's fourth
# element): its name, type and device so far, answered in Julia while the function runs
# (`op_info`), so `op.type == "MatMul"` costs no request. In process the op itself (`LiveOp`),
# read only where the function asks.
const OP_INFO = Ref{Any}(nothing)  # (host generation, handle id, info) or nothing

"Field `i` (1 name, 2 type, 3 device) of a device function's op `info`: as the host sent it."
op_field(info::Tuple, i::Int) = info[i]

"""
    run_callback(h, body, enc) -> (kind, enc)

Call the Julia function a CALLBACK `body` names and encode its result (REPLY) or exception
(ERROR, kept for Python's answer) into `enc` (a fresh one if the result cannot be encoded).
"""
function run_callback(h::Peer, body::Vector{UInt8}, enc::Encoder)
    kind, payload = try
        message = decode_value(body, h)
        fid, args, kwargs = message
        info = length(message) == 4 ? message[4] : nothing  # a device function's op info
        kw = kwargs === nothing || isempty(kwargs) ? () : [Symbol(k) => v for (k, v) in kwargs]
        call_function(h, UInt64(fid), args, kw, info)
    catch err
        err isa HostError && rethrow()  # the host is gone: there is nobody to answer
        (ERROR, callback_error!(h, err, catch_backtrace()))
    end
    return encode_outcome(h, kind, payload, enc)
end

"""
    call_function(h, fid, args, kw, info) -> (kind, payload)

Call the Julia function Python knows as `fid` with `args` and keywords `kw` (`info`: its op's
name, type and device for a device function, else `nothing`): REPLY and its result, or ERROR
and the exception kept for Python's answer (`callback_error!`).
"""
function call_function(h::Peer, fid::UInt64, args, kw, info)
    f = get(h.functions, fid, nothing)
    try
        f === nothing && lookup_function(h, fid, "")  # throws: Python called one it released
        return (REPLY, call_from_python(f, args, kw, info))
    catch err
        err isa HostError && rethrow()  # the host is gone: there is nobody to answer
        bt = catch_backtrace()
        f === nothing || no_method_for(err, f, args) && (err = no_method_error(f, args, kw))
        return (ERROR, callback_error!(h, err, bt))
    end
end

"""
    call_from_python(f, args, kw, info)

`f(args...; kw...)` as Python's call of it: Ctrl-C reaches it (held meanwhile otherwise), and
for a device function `info` (its op's name, type and device: `op_field`) answers `op.name`
and the rest for its op `args[1]` while it runs (`op_info`); `info === nothing` for any other.
"""
function call_from_python(f, args::Tuple, kw, info)
    outer = OP_INFO[]  # a device function running inside another's: back to that one after
    info === nothing || (OP_INFO[] = (getfield(args[1], :gen), getfield(args[1], :id), info))
    Base.sigatomic_end()
    try
        return isempty(kw) ? f(args...) : f(args...; kw...)  # no kwcall if none
    finally
        Base.sigatomic_begin()
        OP_INFO[] = outer
    end
end

"""
    encode_outcome(h, kind, payload, enc) -> (kind, enc)

A callback's outcome encoded into `enc` (a fresh one, and an ERROR, if the result cannot be
encoded).
"""
function encode_outcome(h::Peer, kind::UInt8, payload, enc::Encoder)
    try
        encode!(enc, h, payload)
    catch err
        enc = Encoder()
        kind = ERROR
        err = ArgumentError(string("the Julia function returned a value Python cannot receive: ",
                                   sprint(showerror, err)))
        encode!(enc, h, callback_error!(h, err, backtrace()))
    end
    return kind, enc
end
