# Which transport serves DevPlace's calls, and the one entry every request goes through
# (`roundtrip`): the peer is started on first use (in process where it can serve, see
# inprocess.jl), one request at a time, each Julia task with its own TensorFlow scopes.

const TRANSPORTS = (:auto, :inprocess, :process)

"The running peer, if any: a union of the two concrete types, so that the functions called on it
are chosen when compiled (on the abstract `Peer`, at run time on every call)."
const HOST = Ref{Union{Nothing,Host,InProcess}}(nothing)

"""
    set_transport(t::Symbol) -> Symbol

Choose how DevPlace reaches Python:
- `:inprocess`: libpython in Julia's own process (TensorFlow loaded with `RTLD_DEEPBIND`). A
  call costs what it costs in Python, arrays cross without a pipe; a crash inside TensorFlow
  ends the Julia session, and Ctrl-C stops Python code at its next instruction (one C call,
  such as a TensorFlow step, finishes first).
- `:process`: a Python process of its own over pipes (the isolating transport): each call is a
  round trip (~15 µs), a crash there leaves Julia running, Ctrl-C abandons a running call.
- `:auto` (the default): in process wherever it can serve, else the process, with one line
  on stderr saying why.
`ENV["DEVPLACE_TRANSPORT"]` (`inprocess`, `process` or `auto`) sets it when DevPlace loads. A
running peer of the other kind is stopped: its Python objects are gone. In process, `using
DevPlace` has already started Python and TensorFlow's import in Julia's process (unless
`ENV["DEVPLACE_PRESTART"]` is "0"): to use the host process from the start, set the variable
before `using`; chosen after, that Python stays loaded, unused.
"""
function set_transport(t::Symbol)
    t in TRANSPORTS || throw(ArgumentError(string("unknown transport :", t, "; hint: one of ",
                                                  join(TRANSPORTS, ", ", " or "))))
    lock(HOST_LOCK) do
        TRANSPORT[] = t
        h = HOST[]
        h === nothing || !h.alive || (h isa InProcess) == in_process_wanted() || stop_host()
    end
    return t
end

"""
    transport() -> Symbol

`:inprocess` or `:process`: the running peer's transport, or the one the next call tries first.
"""
function transport()
    h = HOST[]
    h !== nothing && h.alive && return h isa InProcess ? :inprocess : :process
    return in_process_wanted() ? :inprocess : :process
end

"""
    prestart_host()

Start the host in the background (`using DevPlace` does, unless `ENV["DEVPLACE_PRESTART"]` is
"0", in a task that runs at the first pause, e.g. while the REPL waits for input; in process,
Python and TensorFlow's import have started during `using`), so that the first call only waits
for what is left of its start-up. Never throws: a host that cannot start is reported by the
first call.
"""
function prestart_host()
    try
        started = lock(HOST_LOCK) do  # unless one was started meanwhile
            GENERATION[] == 0 || return nothing
            in_process_wanted() ? prestart_inprocess() : spawn_host()
        end
        # in process, what TensorFlow's import left no time to compile: between the user's calls
        started isa InProcess && COMPILE_BRIDGE[]((InProcess,), () -> (yield(); true))
    catch err
        err isa HostError || rethrow()
    end
    return nothing
end

"""
    host() -> Host

The running host, started if there is none (or the last one died).
"""
function host()
    h = HOST[]
    # Read on each concrete type: on their union Julia 1.5 looks every field read up at run time.
    h isa InProcess && h.alive && return h
    h isa Host && h.alive && h.pid != 0 && return h
    return start_host()::Union{Host,InProcess}
end

"Start a peer (or await the one starting), holding `HOST_LOCK`: `host`'s slow path."
function start_host()
    disable_sigint() do
        lock(HOST_LOCK) do
            h = HOST[]
            if h === nothing || !h.alive
                check_refused()
                h = in_process_wanted() ? start_inprocess() : spawn_host()
            end
            h.pid == 0 ? await_hello(h) : h
        end
    end
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
roundtrip(op::UInt8, args::Tuple) = with_peer(exchange, op, args)  # no closure: compiled ahead

"""
    with_peer(f, args...)

`f(h, args...)` with the running peer `h` for this task's request (`roundtrip`'s rules: the peer
awaited first, Ctrl-C held, `HOST_LOCK` taken, this task's scopes installed).
"""
function with_peer(f::F, args::Vararg{Any,N}) where {F,N}  # specialised: compiled with its caller
    host()  # a host still starting is awaited first, where Ctrl-C stops the start
    try
        Base.sigatomic_begin()  # Ctrl-C held (`disable_sigint`, without its closure; an
        lock(HOST_LOCK)         # exception thrown here ends the hold as it unwinds)
        result = try
            h = host()
            switch_task!(h)
            f(h, args...)
        finally
            unlock(HOST_LOCK)
        end
        Base.sigatomic_end()
        return result
    finally
        GC.safepoint()  # a Ctrl-C held meanwhile is thrown here, still inside the caller's call
    end
end

const TASK_COUNT = Ref(0)

"This Julia task's number for the host (tasks are numbered on their first request)."
function task_id()
    t = current_task()
    t === LAST_TASK[] && return LAST_TASK_ID[]  # one task's requests: no task-local lookup
    id = get!(() -> (TASK_COUNT[] += 1), task_local_storage(), :devplace_task)::Int
    LAST_TASK[], LAST_TASK_ID[] = t, id
    return id
end

const LAST_TASK = Ref{Union{Nothing,Task}}(nothing)
const LAST_TASK_ID = Ref(0)

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
