# The pipe transport: a Python host process (python/devplace/bridge/transports/host.py is the other end)
# and the request loop. One host per Julia session, started in the background when DevPlace is
# loaded. Every message waits for its reply while serving whatever else arrives (callbacks into
# Julia, releases), so callbacks nest; replies arrive strictly nested. Every wait is bounded: a
# host that dies is noticed at once (its pipe closes), one that stops answering is stopped after
# `timeout()`. Ctrl-C interrupts a wait without losing the host (`interruption_point`).
# Frames travel on two dedicated pipes (fdio.jl): the host's fd 0 and fd 3; its fd 1 and 2
# are Julia's stderr, so nothing it prints can land inside a frame.

Base.@kwdef mutable struct Host <: Peer
    proc::Base.Process
    pipes::FramePipes
    gen::Int
    pid::Int = 0                 # 0 until the host said HELLO
    booted::Bool = false         # it sent a frame after HELLO: its start-up (TensorFlow) is done
    start_deadline::Float64      # start-up ends by then (`START_TIMEOUT`), whatever `TIMEOUT`
    seq::UInt32 = 0
    alive::Bool = true
    timed_out::Bool = false
    waiting_for::String = "start-up"
    functions::Dict{UInt64,Any} = Dict{UInt64,Any}()  # Julia functions Python holds, by id
    next_function::UInt64 = 0
    errors::Dict{UInt64,Any} = Dict{UInt64,Any}()  # (exception, backtrace text) thrown in callbacks
    next_error::UInt64 = 0
    depth::Int = 0               # requests waiting for their reply (nested through callbacks)
    abandoned::Set{UInt32} = Set{UInt32}()  # interrupted requests: replies dropped on arrival
    interrupted::Bool = false    # a callback ended by Ctrl-C: the request it served throws too
    sigint_sent::Bool = false    # the host was told about this Ctrl-C already
    task::Int = 0                # the Julia task whose scopes the host has installed (0: none)
    dropping::Bool = false       # decoding an abandoned request's answer
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
    h = Host(proc = proc, pipes = FramePipes(from_host, to_host), gen = GENERATION[],
             start_deadline = time() + START_TIMEOUT[])
    HOST[] = h
    return h
end

function await_hello(h::Host)
    h.pipes.deadline = h.start_deadline
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
        throw(host_failure(h, h.timed_out ? STARTING :
                                 "starting; it exited before it was ready. " * HINT_PYTHON))
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

const STARTING = "starting up (it loads TensorFlow before it answers its first request)"

"""
    host_lost!(h; wait=true)

Forget `h`: close its pipes (the host reads end-of-file and exits) and, with `wait`, make sure
the process is gone (bounded: at most ~2 s). The outbox of a host that is gone (killed: it could
not delete it) is deleted, at Julia's exit too.
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
    clean_stale_segments()
    empty!(h.functions)
    empty!(h.errors)
    return nothing
end

function host_failure(h::Host, doing::AbstractString)
    timed_out = h.timed_out
    host_lost!(h)
    p = h.proc
    how = !timed_out ? (p.termsignal != 0 ? "was killed by signal $(p.termsignal)" :
                        process_exited(p) ? "exited with code $(p.exitcode)" : "closed its pipe") :
          h.booted ? string("did not answer within ", TIMEOUT[], " s and was stopped") :
          string("did not finish starting within ", START_TIMEOUT[], " s and was stopped")
    hint = !timed_out ? "" : h.booted ?
        " Hint: raise the bound with DevPlace.set_timeout(seconds) or ENV[\"DEVPLACE_TIMEOUT\"]." :
        string(" Hint: a loaded machine may need longer; raise the bound on start-up (apart ",
               "from set_timeout's on each request) with DevPlace.START_TIMEOUT[] = seconds.")
    who = h.pid == 0 ? string("`", h.proc.cmd.exec[1], "`") : string("(pid ", h.pid, ")")
    return HostError(string("the DevPlace Python host ", who, " ", how, " while ",
                            doing, " (any error output it printed is above).", hint,
                            " The next DevPlace call starts a fresh host; Python objects ",
                            "from this one (tensors, sessions) are gone and must be rebuilt."))
end

"Is `err` the host going away (as opposed to a bug in our own code)?"
lost_host(err) = err isa EOFError || err isa Base.IOError || err isa SystemError ||
                 err isa WireError || err isa HostTimeout

# Run `io()` on the host's pipes with the request deadline armed (until the host's start-up is
# done, the start-up's: the request's own bound starts after it); a host that went away (closed
# pipe, bad frame, deadline) becomes a `HostError` saying what we were `doing`.
function with_deadline(io, h::Host, doing::AbstractString)
    h.pipes.deadline = h.booted ? time() + TIMEOUT[] : h.start_deadline
    try
        return io()
    catch err
        lost_host(err) || rethrow()
        err isa WireError && protocol_failure(h, err.msg)  # e.g. a frame above the limit
        h.timed_out = err isa HostTimeout
        throw(host_failure(h, h.booted ? doing * h.waiting_for : STARTING))
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

function exchange(h::Host, op::UInt8, args::Tuple)
    enc = encode_request(h, op, args, Encoder(share = true))
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
        h.booted = true
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

Tell the host (ABANDON), and throw `InterruptException` out of the wait for request `seq` at
once; its answer, when it comes, is dropped by whichever wait reads it. Inside a callback the exception ends the callback, whose
ERROR answer Python reads once it is done with the request it runs, and `h.interrupted` (set as
the exception leaves the callback) makes each enclosing request throw in turn: the answers stay
nested while Julia returns at once. The host, the graph and every object stay.
"""
function abandon(h::Host, seq::UInt32)
    push!(h.abandoned, seq)
    try
        send(h, ABANDON, seq, Any[])  # stops the request's code where the SIGINT could not
    catch err
        err isa HostError || rethrow()  # the host is gone: the next call says so
    end
    h.interrupted = false
    h.depth == 1 && (h.sigint_sent = false)
    throw(InterruptException())
end

function serve_callback(h::Host, seq::UInt32, body::Vector{UInt8})
    kind, enc = run_callback(h, body, Encoder(share = true))
    send(h, kind, seq, message_parts(enc))
end
