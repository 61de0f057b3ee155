# The Python host process and the request loop. One host per Julia session, started on first
# use. Every message waits for its reply while serving whatever else arrives (callbacks into
# Julia, releases), so callbacks nest to any depth. Every wait is bounded: a host that dies is
# noticed at once (its pipe closes), one that stops answering is stopped after `timeout()`.
# Frames travel on two dedicated pipes (fdio.jl): the host's fd 0 and fd 3; its fd 1 and 2
# are Julia's stderr, so nothing it prints can land inside a frame.

"""
    PyError

A Python exception raised in the host: `type` (qualified name), `message`, `traceback`. If a
Julia function called from Python threw, `julia_exception` is that exception.
"""
struct PyError <: Exception
    type::String
    message::String
    traceback::String
    julia_exception::Any
end

PyError(type::String, message::String, traceback::String) = PyError(type, message, traceback, nothing)

function Base.showerror(io::IO, e::PyError)
    print(io, "PyError: ", e.type, ": ", e.message)
    isempty(e.traceback) || print(io, "\n\n", rstrip(e.traceback))
end

"""
    HostError(msg)

The DevPlace Python host could not be started, died, or stopped answering.
"""
struct HostError <: Exception
    msg::String
end

Base.showerror(io::IO, e::HostError) = print(io, "HostError: ", e.msg)

mutable struct Host
    proc::Base.Process
    pipes::FramePipes
    gen::Int
    pid::Int
    seq::UInt32
    alive::Bool
    timed_out::Bool
    waiting_for::String
    functions::Dict{UInt64,Any}
    next_function::UInt64
    callback_error::Any
end

const HOST = Ref{Union{Nothing,Host}}(nothing)
const GENERATION = Ref(0)
const HOST_LOCK = ReentrantLock()
const TIMEOUT = Ref(600.0)
const START_TIMEOUT = Ref(120.0)
const REPO_ROOT = normpath(joinpath(@__DIR__, "..", "..", ".."))
const HINT_PYTHON = string(
    "Hint: set ENV[\"DEVPLACE_PYTHON\"] to a Python interpreter with devplace installed ",
    "(`pip install -e python` in the devplace repository), or create the project's .venv.")

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
    python_command() -> Cmd

The command that starts the host: `DEVPLACE_PYTHON`, else the project's `.venv`, else
`python3`; the repository's `python/` folder is put on `PYTHONPATH`.
"""
function python_command()
    py = get(ENV, "DEVPLACE_PYTHON", "")
    if isempty(py)
        venv = joinpath(REPO_ROOT, ".venv", "bin", "python")
        found = Sys.which("python3")
        py = isfile(venv) ? venv : found === nothing ? "" : found
        isempty(py) && throw(HostError("no Python interpreter found. " * HINT_PYTHON))
    end
    env = copy(ENV)
    pydir = joinpath(REPO_ROOT, "python")
    if isdir(joinpath(pydir, "devplace"))
        old = get(env, "PYTHONPATH", "")
        env["PYTHONPATH"] = isempty(old) ? pydir : string(pydir, ":", old)
    end
    return setenv(`$py -m devplace.bridge --write-fd 3`, env)
end

# Frames to the host go to its stdin, replies come on its fd 3, its stdout and stderr are
# Julia's stderr. `run` passes at most three stdios in many Julia versions; Base's
# `_spawn(cmd, stdios::SpawnIOs)`, which `run` and `open` call, takes any number (1.5 on).
function spawn_with_fd3(cmd::Cmd, fd0::RawFD, fd3::RawFD)
    stdios = Any[fd0, stderr, stderr, fd3]
    if isdefined(Base, :SpawnIOs) && isdefined(Base, :_spawn)
        ios = Base.SpawnIOs(undef, length(stdios))
        copyto!(ios, stdios)
        return Base._spawn(cmd, ios)
    end
    return run(cmd, stdios...; wait = false)
end

function start_host()
    cmd = python_command()
    child_in, to_host = os_pipe()
    from_host, child_out = os_pipe()
    proc = try
        spawn_with_fd3(cmd, RawFD(child_in), RawFD(child_out))
    catch err
        foreach(close_fd, (child_in, to_host, from_host, child_out))
        throw(HostError(string("could not start the DevPlace Python host `", cmd.exec[1],
                               "`: ", sprint(showerror, err), ". ", HINT_PYTHON)))
    end
    close_fd(child_in)
    close_fd(child_out)
    GENERATION[] += 1
    h = Host(proc, FramePipes(from_host, to_host), GENERATION[], 0, UInt32(0), true, false,
             "start-up", Dict{UInt64,Any}(), UInt64(0), nothing)
    h.pipes.deadline = time() + START_TIMEOUT[]
    kind, _, body = try
        read_frame(h.pipes)
    catch err
        err isa InterruptException && (host_lost!(h); rethrow())
        h.timed_out = err isa HostTimeout
        throw(host_failure(h, "starting; it exited before it was ready. " * HINT_PYTHON))
    end
    h.pipes.deadline = Inf
    hello = kind == HELLO ? decode_value(body) : nothing
    if !(hello isa Dict) || get(hello, "protocol", nothing) != PROTOCOL_VERSION
        host_lost!(h)
        throw(HostError(string("the Python host `", cmd.exec[1], "` spoke protocol ",
                               hello isa Dict ? get(hello, "protocol", "?") : "?",
                               ", this DevPlace.jl speaks ", PROTOCOL_VERSION,
                               ". Hint: use the devplace Python package from the same checkout.")))
    end
    h.pid = hello["pid"]
    take_releases(h.gen)
    HOST[] = h
    return h
end

"""
    host() -> Host

The running host, started if there is none (or the last one died).
"""
function host()
    h = HOST[]
    (h !== nothing && h.alive) && return h
    lock(HOST_LOCK) do
        h = HOST[]
        (h !== nothing && h.alive) ? h : start_host()
    end
end

"Forget `h`: close its pipes, make sure the process is gone (bounded: at most ~2 s)."
function host_lost!(h::Host)
    h.alive = false
    HOST[] === h && (HOST[] = nothing)
    h.timed_out && kill(h.proc, Base.SIGKILL)
    close(h.pipes)  # the host reads EOF and exits
    if !process_exited(h.proc)
        timedwait(() -> process_exited(h.proc), 1.0; pollint = 0.01)
        process_exited(h.proc) || kill(h.proc, Base.SIGKILL)
        timedwait(() -> process_exited(h.proc), 1.0; pollint = 0.01)
    end
    empty!(h.functions)
    return nothing
end

function host_failure(h::Host, doing::AbstractString)
    timed_out = h.timed_out
    host_lost!(h)
    p = h.proc
    how = timed_out ? string("did not answer within ", h.waiting_for == "start-up" ?
                                START_TIMEOUT[] : TIMEOUT[], " s and was stopped") :
          p.termsignal != 0 ? "was killed by signal $(p.termsignal)" :
          process_exited(p) ? "exited with code $(p.exitcode)" : "closed its pipe"
    hint = timed_out ? " Hint: raise the bound with DevPlace.set_timeout(seconds) or ENV[\"DEVPLACE_TIMEOUT\"]." : ""
    who = h.pid == 0 ? string("`", h.proc.cmd.exec[1], "`") : string("(pid ", h.pid, ")")
    return HostError(string("the DevPlace Python host ", who, " ", how, " while ",
                            doing, " (any error output it printed is above).", hint,
                            " The next DevPlace call starts a fresh host; Python objects ",
                            "from this one (tensors, sessions) are gone and must be rebuilt."))
end

"Is `err` the host going away (as opposed to a bug in our own code)?"
lost_host(err) = err isa EOFError || err isa Base.IOError || err isa SystemError ||
                 err isa WireError || err isa HostTimeout

# Run `io()` on the host's pipes with the request deadline armed; a host that went away
# (closed pipe, bad frame, deadline) becomes a `HostError` saying what we were `doing`.
function with_deadline(io, h::Host, doing::AbstractString)
    h.pipes.deadline = time() + TIMEOUT[]
    try
        return io()
    catch err
        err isa InterruptException && (host_lost!(h); rethrow())
        lost_host(err) || rethrow()
        h.timed_out = err isa HostTimeout
        throw(host_failure(h, doing * h.waiting_for))
    finally
        h.pipes.deadline = Inf
    end
end

next_frame(h::Host) = with_deadline(() -> read_frame(h.pipes), h, "serving ")

function send(h::Host, kind::UInt8, seq::UInt32, parts::Vector{Any})
    with_deadline(h, "receiving ") do
        ids = take_releases(h.gen)
        isempty(ids) || write_frame(h.pipes, RELEASE, UInt32(0), Any[encode_value(ids)])
        write_frame(h.pipes, kind, seq, parts)
    end
end

function register_function!(h::Host, f)
    h.next_function += 1
    h.functions[h.next_function] = f
    return h.next_function
end

function lookup_function(h::Host, id::UInt64, name::String)
    f = get(h.functions, id, nothing)
    f === nothing && throw(WireError("Python returned Julia function $name (id $id), which it had released"))
    return f
end

make_handle(h::Host, id::UInt64) = PyObject(id, h.gen)

const OP_NAMES = Dict(OP_GETATTR => "getattr", OP_SETATTR => "setattr", OP_CALL => "call",
                      OP_GETITEM => "getitem", OP_SETITEM => "setitem", OP_IMPORT => "import",
                      OP_BUILTIN => "builtin", OP_REPR => "repr", OP_STR => "str",
                      OP_CALLMETHOD => "callmethod", OP_DIR => "dir", OP_STATS => "stats",
                      OP_ENTER => "enter", OP_EXIT => "exit", OP_ECHO => "echo",
                      OP_HASH => "hash", OP_ISEQUAL => "isequal", OP_LEN => "len",
                      OP_TRUTH => "truth", OP_ISINSTANCE => "isinstance",
                      OP_HASATTR => "hasattr", OP_PID => "pid")

"""
    request(op, args::Tuple)

Send one request to the host (starting it if needed) and return the decoded reply, serving
callbacks meanwhile. Python exceptions are thrown as `PyError`.
"""
function request(op::UInt8, args::Tuple)
    lock(HOST_LOCK)
    try
        h = host()
        enc = Encoder()
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
        h.seq += UInt32(1)
        seq = h.seq
        outer = h.waiting_for
        h.waiting_for = string("a `", get(OP_NAMES, op & ~BY_HANDLE, "?"), "` request")
        try
            send(h, REQUEST, seq, message_parts(enc))
            return wait_reply(h, seq)
        finally
            h.waiting_for = outer
        end
    finally
        unlock(HOST_LOCK)
    end
end

function protocol_failure(h::Host, msg::AbstractString)
    host_lost!(h)
    throw(HostError(string("protocol error with the DevPlace Python host: ", msg,
                           ". The host was stopped; the next call starts a fresh one.")))
end

function wait_reply(h::Host, seq::UInt32)
    while true
        kind, rseq, body = next_frame(h)
        if kind == REPLY || kind == ERROR
            rseq == seq || protocol_failure(h, "reply to $rseq while waiting for $seq")
            value = try
                decode_value(body, h)
            catch err
                err isa WireError || rethrow()
                protocol_failure(h, err.msg)
            end
            kind == REPLY && return value
            cause = endswith(value[1], "JuliaError") ? h.callback_error : nothing
            h.callback_error = nothing
            throw(PyError(value[1], value[2], value[3], cause))
        elseif kind == CALLBACK
            serve_callback(h, rseq, body)
        elseif kind == RELEASE
            for id in decode_value(body, h)
                delete!(h.functions, UInt64(id))
            end
        else
            protocol_failure(h, "unexpected frame kind $kind")
        end
    end
end

function serve_callback(h::Host, seq::UInt32, body::Vector{UInt8})
    kind, payload = try
        fid, args, kwargs = decode_value(body, h)
        f = lookup_function(h, UInt64(fid), "")
        kw = kwargs === nothing ? () : [Symbol(k) => v for (k, v) in kwargs]
        (REPLY, f(args...; kw...))
    catch err
        (err isa HostError || err isa InterruptException) && rethrow()
        bt = catch_backtrace()
        h.callback_error = err
        (ERROR, (string(typeof(err)), sprint(showerror, err), sprint(Base.show_backtrace, bt)))
    end
    enc = Encoder()
    try
        encode!(enc, h, payload)
    catch err
        h.callback_error = err
        enc = Encoder()
        kind = ERROR
        encode!(enc, h, (string(typeof(err)), string("the Julia function returned a value ",
                         "Python cannot receive: ", sprint(showerror, err)), ""))
    end
    send(h, kind, seq, message_parts(enc))
end

"""
    stop_host()

Stop the Python host if one runs (the next call starts a new one).
"""
function stop_host()
    h = HOST[]
    h === nothing && return nothing
    host_lost!(h)
    return nothing
end

"""
    host_pid() -> Int

The process id of the running host (starting one if needed).
"""
host_pid() = host().pid

"""
    host_stats() -> Dict

The host's bookkeeping: `"handles"` (Python objects held for Julia), `"julia_functions"`
(live Python proxies of Julia functions), `"pid"`.
"""
host_stats() = request(OP_STATS, ())
