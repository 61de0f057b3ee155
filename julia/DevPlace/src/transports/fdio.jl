# The two frame pipes to the host as raw file descriptors, read and written with `poll`,
# `read` and `write` system calls. Going through libuv costs ~60 µs per round trip on a
# loaded machine (each write waits for its completion callback, each read for an event-loop
# turn); raw calls cost ~8 µs, and a short spin before blocking saves the wake-up (`SPIN_NS`).
# Every wait is bounded by `deadline` (seconds since the epoch).

"""
    HostTimeout

A wait for the host passed its deadline (internal; becomes a `HostError`).
"""
struct HostTimeout <: Exception end

struct PollFd
    fd::Cint
    events::Cshort
    revents::Cshort
end

const POLLIN = Cshort(0x001)
const POLLOUT = Cshort(0x004)
const POLLHUP = Cshort(0x010)
const F_GETFD = Cint(1)
const F_SETFD = Cint(2)
const F_GETFL = Cint(3)
const F_SETFL = Cint(4)
const FD_CLOEXEC = Cint(1)
const O_NONBLOCK = Sys.islinux() ? Cint(0o4000) : Cint(0x0004)
const EINTR = Cint(4)
const EAGAIN = Sys.islinux() ? Cint(11) : Cint(35)

"""
    FramePipes(rfd, wfd)

Julia's ends of the frame pipes: frames from the host are read from `rfd`, frames to it are
written to `wfd` (non-blocking, so a host that stops reading cannot block Julia forever).
"""
mutable struct FramePipes <: IO
    rfd::Cint
    wfd::Cint
    buf::Vector{UInt8}
    pos::Int   # next unread byte in buf
    len::Int   # bytes of buf filled
    deadline::Float64
end

function FramePipes(rfd::Cint, wfd::Cint)
    flags = ccall(:fcntl, Cint, (Cint, Cint, Cint...), wfd, F_GETFL)
    ccall(:fcntl, Cint, (Cint, Cint, Cint...), wfd, F_SETFL, flags | O_NONBLOCK)
    return FramePipes(rfd, wfd, Vector{UInt8}(undef, 1 << 16), 1, 0, Inf)
end

"Mark `fd` close-on-exec, so other child processes do not inherit a frame pipe."
cloexec(fd::Cint) = ccall(:fcntl, Cint, (Cint, Cint, Cint...), fd, F_SETFD, FD_CLOEXEC)

"""
    os_pipe() -> (read_fd, write_fd)

A new pipe, both ends close-on-exec.
"""
function os_pipe()
    fds = Vector{Cint}(undef, 2)
    ccall(:pipe, Cint, (Ptr{Cint},), fds) == 0 || throw(SystemError("pipe", Libc.errno()))
    cloexec(fds[1])
    cloexec(fds[2])
    return fds[1], fds[2]
end

close_fd(fd::Cint) = fd >= 0 && ccall(:close, Cint, (Cint,), fd)

function Base.close(p::FramePipes)
    close_fd(p.rfd)
    close_fd(p.wfd)
    p.rfd = p.wfd = Cint(-1)
    return nothing
end

Base.isopen(p::FramePipes) = p.rfd >= 0

"""
    SPIN_NS

Nanoseconds a wait polls without sleeping before it blocks (`ENV["DEVPLACE_SPIN_US"]`
microseconds at start-up, default 250; 0 never spins). Waking a blocked process costs 25-50 µs
on a virtual machine, more than the rest of a round trip, and most replies come sooner.
"""
const SPIN_NS = Ref{UInt64}(250_000)

poll_now(pfd::Ref{PollFd}) = ccall(:poll, Cint, (Ptr{PollFd}, Culong, Cint), pfd, 1, 0) > 0

"""
    wait_fd(p, fd, events, check=nothing)

Wait until `fd` is ready for `events`, or throw `HostTimeout` at the deadline. While blocked,
`check()` runs at least every `CHECK_MS` milliseconds (it may throw to end the wait).
"""
function wait_fd(p::FramePipes, fd::Cint, events::Cshort, check = nothing)
    if SPIN_NS[] > 0
        pfd = Ref(PollFd(fd, events, 0))
        stop = time_ns() + SPIN_NS[]
        while time_ns() < stop
            poll_now(pfd) && return nothing
            ccall(:sched_yield, Cint, ())  # a busy core goes to the host (and TensorFlow's threads)
        end
    end
    while true  # polled once even past the deadline: what is there already is not a timeout
        left = p.deadline - time()
        ms = Cint(clamp(ceil(left * 1000), 0, CHECK_MS))
        pfd = Ref(PollFd(fd, events, 0))
        r = ccall(:poll, Cint, (Ptr{PollFd}, Culong, Cint), pfd, 1, ms)
        r > 0 && return nothing
        r < 0 && Libc.errno() != EINTR && throw(SystemError("poll", Libc.errno()))
        left > 0 || throw(HostTimeout())
        check === nothing || check()
    end
end

"A blocked wait wakes this often (milliseconds) to run its check (e.g. for Ctrl-C)."
const CHECK_MS = 200

"""
    wait_input(check, p)

Return once the next frame's first byte is buffered or can be read, running `check()` while
blocked (see `wait_fd`); nothing of a frame has been read when `check` throws.
"""
function wait_input(check, p::FramePipes)
    p.pos <= p.len && return nothing
    p.rfd >= 0 || throw(EOFError())
    return wait_fd(p, p.rfd, POLLIN, check)
end

"Refill the read buffer; throws EOFError when the host closed its end."
function fill_buffer!(p::FramePipes)
    p.rfd >= 0 || throw(EOFError())
    wait_fd(p, p.rfd, POLLIN)
    n = ccall(:read, Cssize_t, (Cint, Ptr{UInt8}, Csize_t), p.rfd, p.buf, length(p.buf))
    if n < 0
        Libc.errno() in (EINTR, EAGAIN) && return fill_buffer!(p)
        throw(SystemError("read from the DevPlace host", Libc.errno()))
    end
    n == 0 && throw(EOFError())
    p.pos = 1
    p.len = n
    return nothing
end

function Base.unsafe_read(p::FramePipes, dest::Ptr{UInt8}, nb::UInt)
    done = 0
    while done < nb
        if p.pos > p.len
            if nb - done >= length(p.buf)  # large: read straight into the destination
                p.rfd >= 0 || throw(EOFError())
                wait_fd(p, p.rfd, POLLIN)
                n = ccall(:read, Cssize_t, (Cint, Ptr{UInt8}, Csize_t), p.rfd, dest + done, nb - done)
                if n < 0
                    Libc.errno() in (EINTR, EAGAIN) && continue
                    throw(SystemError("read from the DevPlace host", Libc.errno()))
                end
                n == 0 && throw(EOFError())
                done += n
                continue
            end
            fill_buffer!(p)
        end
        k = min(p.len - p.pos + 1, nb - done)
        GC.@preserve p unsafe_copyto!(dest + done, pointer(p.buf, p.pos), k)
        p.pos += k
        done += k
    end
    return nothing
end

function Base.read(p::FramePipes, ::Type{UInt8})
    p.pos > p.len && fill_buffer!(p)
    b = p.buf[p.pos]
    p.pos += 1
    return b
end

function Base.readbytes!(p::FramePipes, b::Vector{UInt8}, nb::Integer)
    length(b) < nb && resize!(b, nb)
    GC.@preserve b unsafe_read(p, pointer(b), UInt(nb))
    return Int(nb)
end

function Base.read(p::FramePipes, nb::Integer)
    b = Vector{UInt8}(undef, nb)
    readbytes!(p, b, nb)
    return b
end

function Base.unsafe_write(p::FramePipes, src::Ptr{UInt8}, nb::UInt)
    done = 0
    while done < nb
        p.wfd >= 0 || throw(EOFError())
        n = ccall(:write, Cssize_t, (Cint, Ptr{UInt8}, Csize_t), p.wfd, src + done, nb - done)
        if n < 0
            err = Libc.errno()
            err == EINTR && continue
            err == EAGAIN || throw(Base.IOError("write to the DevPlace host failed: " *
                                                Libc.strerror(err), -Int(err)))
            wait_fd(p, p.wfd, POLLOUT)
            continue
        end
        done += n
    end
    return Int(nb)
end

Base.write(p::FramePipes, b::UInt8) = unsafe_write(p, Ref(b), UInt(1))
