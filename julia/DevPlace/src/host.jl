# The Python host process and the request loop (python/devplace/bridge/host.py is the other
# end). One host per Julia session, started in the background when DevPlace is loaded. Every
# message waits for its reply while serving whatever else arrives (callbacks into Julia,
# releases), so callbacks nest; replies arrive strictly nested. Every wait is bounded: a host
# that dies is noticed at once (its pipe closes), one that stops answering is stopped after
# `timeout()`. Ctrl-C interrupts a wait without losing the host (`interruption_point`).
# Frames travel on two dedicated pipes (fdio.jl): the host's fd 0 and fd 3; its fd 1 and 2
# are Julia's stderr, so nothing it prints can land inside a frame.

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

mutable struct Host <: Peer
    proc::Base.Process
    pipes::FramePipes
    gen::Int
    pid::Int                     # 0 until the host said HELLO
    seq::UInt32
    alive::Bool
    timed_out::Bool
    waiting_for::String
    functions::Dict{UInt64,Any}  # Julia functions Python holds, by id
    next_function::UInt64
    errors::Dict{UInt64,Any}     # (exception, backtrace text) thrown in callbacks, by id
    next_error::UInt64
    depth::Int                   # requests waiting for their reply (nested through callbacks)
    abandoned::Set{UInt32}       # interrupted requests whose replies are dropped on arrival
    interrupted::Bool            # a callback ended by Ctrl-C: the request it served throws too
    sigint_sent::Bool            # the host was told about this Ctrl-C already
    task::Int                    # the Julia task whose scopes the host has installed (0: none)
    dropping::Bool               # decoding an abandoned request's answer
end

const HOST = Ref{Union{Nothing,Peer}}(nothing)
const GENERATION = Ref(0)
const HOST_LOCK = ReentrantLock()
const TIMEOUT = Ref(600.0)
const START_TIMEOUT = Ref(120.0)
const REPO_ROOT = normpath(joinpath(@__DIR__, "..", "..", ".."))
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
    # TensorFlow (most of the start-up) loads while Julia compiles and sends its first call.
    preload = "devplace.bridge.julia_semantics"
    shm = `--shm-dir $(SHM_DIR[]) --shm-min $(SHM_MIN[])`
    return setenv(`$py -m devplace.bridge --write-fd 3 --parent-pid $(getpid()) --preload $preload $shm`, env)
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

"Start a host process; it is ready once `await_hello` returns."
function spawn_host()
    clean_stale_segments()
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
             "start-up", Dict{UInt64,Any}(), UInt64(0), Dict{UInt64,Any}(), UInt64(0), 0,
             Set{UInt32}(), false, false, 0, false)
    HOST[] = h
    return h
end

"""
    prestart_host()

Start the host in the background (`using DevPlace` does, unless `ENV["DEVPLACE_PRESTART"]` is
"0", in a task that runs at the first pause, e.g. while the REPL waits for input), so that the
first call only waits for what is left of its start-up. Never throws: a host that cannot start
is reported by the first call.
"""
function prestart_host()
    try
        lock(HOST_LOCK) do  # unless one was started meanwhile
            GENERATION[] == 0 || return
            in_process_wanted() ? prestart_inprocess() : spawn_host()
        end
    catch err
        err isa HostError || rethrow()
    end
    return nothing
end

function await_hello(h::Host)
    h.pipes.deadline = time() + START_TIMEOUT[]
    kind, _, body = try
        wait_input(h.pipes) do
            try
                Base.reenable_sigint(() -> nothing)  # Ctrl-C while starting: stop the start
            catch err
                err isa InterruptException && host_lost!(h)
                rethrow()
            end
        end
        read_frame(h.pipes)
    catch err
        err isa InterruptException && rethrow()
        h.timed_out = err isa HostTimeout
        throw(host_failure(h, "starting; it exited before it was ready. " * HINT_PYTHON))
    finally
        h.pipes.deadline = Inf
    end
    hello = kind == HELLO ? decode_value(body) : nothing
    if !(hello isa Dict) || get(hello, "protocol", nothing) != PROTOCOL_VERSION
        host_lost!(h)
        throw(HostError(string("the Python host `", h.proc.cmd.exec[1], "` spoke protocol ",
                               hello isa Dict ? get(hello, "protocol", "?") : "?",
                               ", this DevPlace.jl speaks ", PROTOCOL_VERSION,
                               ". Hint: use the devplace Python package from the same checkout.")))
    end
    h.pid = hello["pid"]
    take_releases(h.gen)
    return h
end

"""
    host() -> Host

The running host, started if there is none (or the last one died).
"""
function host()
    h = HOST[]
    (h !== nothing && h.alive && h.pid != 0) && return h
    disable_sigint() do
        lock(HOST_LOCK) do
            h = HOST[]
            (h === nothing || !h.alive) && (h = in_process_wanted() ? start_inprocess() : spawn_host())
            h.pid == 0 ? await_hello(h) : h
        end
    end
end

"""
    host_lost!(h; wait=true)

Forget `h`: close its pipes (the host reads end-of-file and exits) and, with `wait`, make sure
the process is gone (bounded: at most ~2 s).
"""
function host_lost!(h::Host; wait::Bool = true)
    h.alive = false
    HOST[] === h && (HOST[] = nothing)
    # A host never used may still be loading TensorFlow, deaf to its closed pipe: nothing of
    # it is worth waiting for.
    (h.timed_out || h.pid == 0) && kill(h.proc, Base.SIGKILL)
    close(h.pipes)
    drop_inbox()
    if wait && !process_exited(h.proc)
        timedwait(() -> process_exited(h.proc), 1.0; pollint = 0.01)
        process_exited(h.proc) || kill(h.proc, Base.SIGKILL)
        timedwait(() -> process_exited(h.proc), 1.0; pollint = 0.01)
    end
    empty!(h.functions)
    empty!(h.errors)
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
        lost_host(err) || rethrow()
        h.timed_out = err isa HostTimeout
        throw(host_failure(h, doing * h.waiting_for))
    finally
        h.pipes.deadline = Inf
    end
end

function send(h::Host, kind::UInt8, seq::UInt32, parts::Vector{Any})
    with_deadline(h, "receiving ") do
        ids = take_releases(h.gen)
        isempty(ids) || write_frame(h.pipes, RELEASE, UInt32(0), Any[encode_value(ids)])
        write_frame(h.pipes, kind, seq, parts)
    end
end

function register_function!(h::Peer, f)
    h.next_function += 1
    h.functions[h.next_function] = f
    return h.next_function
end

shared_array(h::Host, T::Type, dims::Tuple, path::String, offset::UInt64, stamp::UInt64) =
    h.dropping ? nothing : read_shared(T, dims, path, offset, stamp, writing_stalled(h))

"""
    writing_stalled(h)

What `read_shared` does while the host has not written more of an array: yield the core, and
throw a `HostError` once the host is gone (its end of the pipe closed) or `timeout()` passed.
"""
function writing_stalled(h::Host)
    deadline = Ref(Inf)
    return function ()
        ccall(:sched_yield, Cint, ())
        now = time()
        deadline[] == Inf && (deadline[] = now + TIMEOUT[])
        pfd = Ref(PollFd(h.pipes.rfd, POLLIN, 0))
        ccall(:poll, Cint, (Ptr{PollFd}, Culong, Cint), pfd, 1, 0)
        gone = pfd[].revents & POLLHUP != 0
        (gone || now > deadline[]) || return nothing
        h.timed_out = !gone
        throw(host_failure(h, "writing an array for Julia"))
    end
end

function lookup_function(h::Peer, id::UInt64, name::String)
    f = get(h.functions, id, nothing)
    f === nothing && throw(WireError("Python returned Julia function $name (id $id), which it had released"))
    return f
end

"""
    roundtrip(op, args::Tuple)

Send one request to the host (starting it if needed) and return the decoded reply, serving
callbacks meanwhile. Python exceptions are thrown as `PyError`. Ctrl-C is only taken while
waiting for a frame, where the stream is whole: see `interruption_point`.

One request at a time: the calling task holds `HOST_LOCK` until the reply, callbacks and the
requests they make (in the same task) included, so other tasks' requests never come in
between. The host keeps each task's TensorFlow scopes apart (`switch_task!`).
"""
function roundtrip(op::UInt8, args::Tuple)
    host()  # a host still starting is awaited first, where Ctrl-C stops the start
    disable_sigint() do
        lock(HOST_LOCK)
        try
            h = host()
            switch_task!(h)
            return exchange(h, op, args)
        finally
            unlock(HOST_LOCK)
        end
    end
end

function exchange(h::Host, op::UInt8, args::Tuple)
    enc = Encoder(share = true)
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
    h.waiting_for = string("a `", op_name(op), "` request")
    h.depth += 1
    try
        send(h, REQUEST, seq, message_parts(enc))
        op & IN_PLACE != 0 && enc.shared && return keep_in_place(() -> wait_reply(h, seq))
        return wait_reply(h, seq)
    catch err
        # An abandoned request may still be unread: its arrays must stay as they are.
        err isa InterruptException && enc.shared && retire_outbox()
        rethrow()
    finally
        h.depth -= 1
        h.waiting_for = outer
    end
end

const TASK_COUNT = Ref(0)

"This Julia task's number for the host (tasks are numbered on their first request)."
task_id() = get!(() -> (TASK_COUNT[] += 1), task_local_storage(), :devplace_task)::Int

"""
    switch_task!(h)

Before a request from another Julia task than the last one, have host `h` put the last task's
TensorFlow scopes aside and install this task's (python/devplace/bridge/tasks.py): TF keeps
scopes per thread, and one host thread serves every task. Each task then builds under its own
default graph, device, name and variable scopes, and leaving a scope restores only its own.
Costs one request per change of task, nothing while one task builds.
"""
function switch_task!(h::Peer)
    me = task_id()
    h.task == me && return
    last, h.task = h.task, me
    last == 0 || exchange(h, OP_SWITCH_TASK, (last, me))  # a new host has no scopes yet
    return
end

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

# The arrays of an abandoned request's answer may be overwritten already: they are skipped.
function decode_dropped(h::Host, body::Vector{UInt8})
    h.dropping = true
    try
        return decode_body(h, body)
    finally
        h.dropping = false
    end
end

function wait_reply(h::Host, seq::UInt32)
    while true
        with_deadline(h, "serving ") do
            wait_input(() -> interruption_point(h, seq), h.pipes)
        end
        kind, rseq, body = with_deadline(() -> read_frame(h.pipes), h, "serving ")
        if kind == REPLY || kind == ERROR
            if rseq != seq && pop!(h.abandoned, rseq, nothing) !== nothing
                value = decode_dropped(h, body)  # the answer nobody waits for any more
                kind == ERROR && python_error(h, value)  # forgets its Julia exception
                continue
            end
            rseq == seq || protocol_failure(h, "reply to $rseq while waiting for $seq")
            value = decode_body(h, body)
            h.depth == 1 && (h.sigint_sent = false)
            kind == REPLY && return value
            throw(python_error(h, value))
        elseif kind == CALLBACK
            serve_callback(h, rseq, body)
            h.interrupted && abandon(h, seq)  # the callback was interrupted: so is this request
        elseif kind == RELEASE
            for id in decode_body(h, body)
                delete!(h.functions, UInt64(id))
            end
        else
            protocol_failure(h, "unexpected frame kind $kind")
        end
    end
end

"""
    interruption_point(h, seq)

Called while no frame is half read. A pending Ctrl-C is passed on to the host as one SIGINT,
which stops the Python code of the running request, if it can be stopped (a `Session.run`
cannot: it finishes first). The request is abandoned (see `abandon`).
"""
function interruption_point(h::Host, seq::UInt32)
    try
        Base.reenable_sigint(() -> nothing)
    catch err
        err isa InterruptException || rethrow()
        if !h.sigint_sent
            h.sigint_sent = true
            kill(h.proc, Base.SIGINT)
        end
        abandon(h, seq)
    end
end

"""
    abandon(h, seq)

Throw `InterruptException` out of the wait for request `seq` at once; its answer, when it comes,
is dropped by whichever wait reads it. Inside a callback the exception ends the callback, whose
ERROR answer Python reads once it is done with the request it runs, and `h.interrupted` (set as
the exception leaves the callback) makes each enclosing request throw in turn: the answers stay
nested while Julia returns at once. The host, the graph and every object stay.
"""
function abandon(h::Host, seq::UInt32)
    push!(h.abandoned, seq)
    h.interrupted = false
    h.depth == 1 && (h.sigint_sent = false)
    throw(InterruptException())
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

const BRIDGE_FILES = Set(joinpath(@__DIR__, f) for f in ("frames.jl", "shm.jl", "wire.jl", "requests.jl",
    "fdio.jl", "gcqueue.jl", "host.jl", "cpython.jl", "inprocess.jl", "pyobject.jl"))

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
        f.func === :run_callback && break
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
# (`op_info`), so `op.type == "MatMul"` costs no request.
const OP_INFO = Ref{Any}(nothing)  # (host generation, handle id, (name, type, device)) or nothing

"""
    with_op_info(f, args, info)

Run `f()`, the device function's call, with `info` (name, type, device) known for its op
`args[1]` (a PyObject: the host sends `info` only with an op); `info === nothing`: just `f()`.
"""
function with_op_info(f, args::Tuple, info)
    info === nothing && return f()
    outer = OP_INFO[]  # a device function running inside another's: back to that one after
    OP_INFO[] = (getfield(args[1], :gen), getfield(args[1], :id), info)
    try
        return f()
    finally
        OP_INFO[] = outer
    end
end

function serve_callback(h::Host, seq::UInt32, body::Vector{UInt8})
    kind, enc = run_callback(h, body, Encoder(share = true))
    send(h, kind, seq, message_parts(enc))
end

"""
    run_callback(h, body, enc) -> (kind, enc)

Call the Julia function a CALLBACK `body` names and encode its result (REPLY) or exception
(ERROR, kept for Python's answer) into `enc` (a fresh one if the result cannot be encoded).
"""
function run_callback(h::Peer, body::Vector{UInt8}, enc::Encoder)
    call = nothing  # (f, args, kw) once decoded
    kind, payload = try
        message = decode_value(body, h)
        fid, args, kwargs = message
        info = length(message) == 4 ? message[4] : nothing  # a device function's op info
        f = lookup_function(h, UInt64(fid), "")
        kw = kwargs === nothing || isempty(kwargs) ? () : [Symbol(k) => v for (k, v) in kwargs]
        call = (f, args, kw)
        call_f = isempty(kw) ? () -> f(args...) : () -> f(args...; kw...)  # no kwcall if none
        (REPLY, Base.reenable_sigint(() -> with_op_info(call_f, args, info)))
    catch err
        err isa HostError && rethrow()  # the host is gone: there is nobody to answer
        bt = catch_backtrace()
        if call !== nothing && no_method_for(err, call[1], call[2])
            err = no_method_error(call...)
        end
        (ERROR, callback_error!(h, err, bt))
    end
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

"""
    stop_host(; wait=true)

Stop the Python host if one runs (the next call starts a new one). Without `wait` (Julia's
exit) the host exits on its own once it sees its pipe closed, or with its parent.
"""
function stop_host(; wait::Bool = true)
    h = HOST[]
    h === nothing && return nothing
    host_lost!(h; wait = wait)
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
host_stats() = roundtrip(OP_STATS, ())
