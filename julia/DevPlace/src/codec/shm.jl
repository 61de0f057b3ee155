# Large numeric arrays through shared memory (docs/protocol.md, "Shared memory"), as
# python/devplace/bridge/transports/shm.py. Each side writes the arrays of its messages into its own
# *outbox*, one file in `SHM_DIR[]` (`/dev/shm`) kept mapped and reused, so no transfer pays for
# fresh pages (on a virtual machine a fresh tmpfs page costs more than copying it); the frame
# carries only each array's dtype, size, path, offset and stamp. The receiver keeps the peer's
# outbox mapped and copies each array out at once (the host reads an `IN_PLACE` request's
# arrays where they are, until its reply: `keep_in_place`). A side writes its outbox again only after
# the peer sent a frame, so after it decoded the last message; the stamp written before each
# array makes a later overwrite an error, never wrong data. A segment that cannot be made or
# grown (no such folder, read-only, not enough space) leaves arrays to the pipe, with one line
# saying why. Each outbox is locked (`flock`) while its owner lives: that, not its process id
# (which another PID namespace sharing the folder reads as another process), tells the cleaner
# which outboxes are left over.

const SHM_PREFIX = protocol_text("shm", "PREFIX")

"The folder outboxes are made in (`ENV[\"DEVPLACE_SHM_DIR\"]`, default `/dev/shm`)."
const SHM_DIR = Ref("/dev/shm")

"""
    SHM_MIN

Arrays of at least this many bytes travel through shared memory (`ENV["DEVPLACE_SHM_MIN"]`,
default 256 KiB on Linux, 0 elsewhere; 0 turns shared memory off): below it the pipe is as fast.
"""
const SHM_MIN = Ref(Sys.islinux() ? 1 << 18 : 0)

const SHM_TOLD = Set{String}()   # why arrays went through the pipe, each said once

const O_RDONLY = Cint(0)
const O_RDWR = Cint(0o2)
const O_CREAT = Cint(0o100)
const O_EXCL = Cint(0o200)
const O_CLOEXEC = Cint(0o2000000)
const PROT_READ = Cint(1)
const PROT_WRITE = Cint(2)
const MAP_SHARED = Cint(1)
const EEXIST = Cint(17)
const LOCK_EX = Cint(2)
const LOCK_NB = Cint(4)
# Names tried for a new outbox: a process of another PID namespace may hold ours.
const OUTBOX_NAMES = protocol_number("shm", "OUTBOX_NAMES")
const STAMP_BYTES = protocol_number("shm", "STAMP_BYTES")
# Before each array: how many of its bytes are written (`ready`), then its stamp.
const HEAD_BYTES = protocol_number("shm", "HEAD_BYTES")
# Arrays start 64-byte aligned: TensorFlow feeds an array in place only then (Eigen's alignment).
const ARRAY_ALIGN = protocol_number("shm", "ARRAY_ALIGN")

"""
    WireShared(T, dims, path, offset, stamp)

An array in a peer's outbox as seen on the wire without a host (test vectors).
"""
struct WireShared
    T::Type
    dims::Tuple
    path::String
    offset::UInt64
    stamp::UInt64
end

Base.:(==)(a::WireShared, b::WireShared) =
    (a.T, a.dims, a.path, a.offset, a.stamp) == (b.T, b.dims, b.path, b.offset, b.stamp)

"A mapped file: an outbox (written here) or the peer's outbox (read here)."
mutable struct Segment
    path::String
    fd::Cint      # -1 for the peer's
    ptr::Ptr{UInt8}
    size::Int
    used::Int     # bytes of the message being encoded (outbox)
    floor::Int    # bytes kept for `IN_PLACE` requests still waiting for their reply (outbox)
end

const OUTBOX = Ref{Union{Nothing,Segment}}(nothing)
const INBOX = Ref{Union{Nothing,Segment}}(nothing)
const OUTBOX_COUNT = Ref(0)
const STAMP = Ref(UInt64(0))

"""
    shm_refused(what, path, errno, detail="")

Say once per kind of failure (`what` and `errno`) that arrays go through the pipe; `nothing`.
"""
function shm_refused(what::String, path::String, errno::Integer, detail::String = "")
    why = string(what, ": ", Libc.strerror(errno))
    why in SHM_TOLD && return nothing
    push!(SHM_TOLD, why)
    println(stderr, "DevPlace: large arrays go through the pipe instead of shared memory (",
            what, " ", path, detail, ": ", Libc.strerror(errno),
            "; set DEVPLACE_SHM_DIR to another folder, or DEVPLACE_SHM_MIN=0)")
    return nothing
end

sys_message(what, path, errno) = string(what, " ", path, ": ", Libc.strerror(errno))

unlink_segment(path::AbstractString) = (ccall(:unlink, Cint, (Cstring,), path); nothing)

function map_fd(fd::Cint, n::Int, prot::Cint)
    ptr = ccall(:mmap, Ptr{UInt8}, (Ptr{Cvoid}, Csize_t, Cint, Cint, Cint, Int64),
                C_NULL, n, prot, MAP_SHARED, fd, 0)
    return reinterpret(Int, ptr) == -1 ? nothing : ptr
end

unmap(s::Segment) = s.size > 0 && ccall(:munmap, Cint, (Ptr{UInt8}, Csize_t), s.ptr, s.size)

"""
    lock_segment(fd) -> Bool

Take the lock on a segment without waiting: an outbox's owner holds it as long as it lives (the
kernel drops it when the process ends, however it ends), so anyone else gets it only for an
outbox whose owner is gone.
"""
lock_segment(fd::Cint) = ccall(:flock, Cint, (Cint, Cint), fd, LOCK_EX | LOCK_NB) == 0

"Does `path` still name the file open as `fd` (not deleted, not replaced)?"
function names_file(path::String, fd::Cint)
    st, own = stat(path), stat(RawFD(fd))
    return st.inode != 0 && (st.inode, st.device) == (own.inode, own.device)
end

"The outbox, made on first use; `nothing` (said once why) if it cannot be."
function outbox()
    box = OUTBOX[]
    box === nothing || return box
    path = ""
    for _ in 1:OUTBOX_NAMES
        OUTBOX_COUNT[] += 1
        path = joinpath(SHM_DIR[], segment_name(getpid(), OUTBOX_COUNT[]))
        fd = ccall(:open, Cint, (Cstring, Cint, Cint...), path,
                   O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, Cint(0o600))
        if fd < 0
            Libc.errno() == EEXIST && continue  # a process of another PID namespace
            return shm_refused("cannot create", path, Libc.errno())
        end
        if lock_segment(fd) && names_file(path, fd)  # else a cleaner took it before the lock
            return OUTBOX[] = Segment(path, fd, Ptr{UInt8}(0), 0, 0, 0)
        end
        ccall(:close, Cint, (Cint,), fd)
    end
    return shm_refused("cannot create", path, EEXIST)
end

"Grow the outbox to hold `need` bytes: reserved first (`posix_fallocate`), as writing a mapped
file that does not fit kills the process (SIGBUS) instead of failing."
function grow!(box::Segment, need::Int)
    size = max(need, 2 * box.size)
    err = ccall(:posix_fallocate, Cint, (Cint, Int64, Int64), box.fd, 0, size)
    if err != 0 && size > need  # no room to spare: exactly what is needed, then
        size = need
        err = ccall(:posix_fallocate, Cint, (Cint, Int64, Int64), box.fd, 0, size)
    end
    err == 0 || return shm_refused("cannot reserve", box.path, err,
                                   string(" (", Base.format_bytes(need), ")"))
    ptr = map_fd(box.fd, size, PROT_READ | PROT_WRITE)
    ptr === nothing && return shm_refused("cannot map", box.path, Libc.errno())
    unmap(box)
    box.ptr, box.size = ptr, size
    return box
end

"""
    share_array(a, first) -> (path, offset, stamp) or nothing

Copy `a` into the outbox after the arrays of the same message (`first`: the message's first),
and after those the host still reads in place (`keep_in_place`), behind a new stamp; `nothing`
when it must go through the pipe.
"""
function share_array(a::Array, first::Bool)
    box = outbox()
    box === nothing && return nothing
    if first && !names_file(box.path, box.fd)  # deleted under us: the peer could not open it
        retire_outbox()
        box = outbox()
        box === nothing && return nothing
    end
    first && (box.used = box.floor)
    offset = (box.used + HEAD_BYTES + ARRAY_ALIGN - 1) & -ARRAY_ALIGN
    need = offset + sizeof(a)
    need > box.size && grow!(box, need) === nothing && return nothing
    stamp = STAMP[] += 1
    unsafe_store!(Ptr{UInt64}(box.ptr + offset - STAMP_BYTES), stamp)
    GC.@preserve a unsafe_copyto!(box.ptr + offset, Ptr{UInt8}(pointer(a)), sizeof(a))
    unsafe_store!(Ptr{UInt64}(box.ptr + offset - HEAD_BYTES), UInt64(sizeof(a)))  # all written
    box.used = need
    return box.path, UInt64(offset), stamp
end

"""
    keep_in_place(f)

Run `f()`, the wait for the reply to an `IN_PLACE` request whose arrays were just written:
meanwhile the messages of callbacks and the requests they make go after those arrays.
"""
function keep_in_place(f)
    box = OUTBOX[]
    box === nothing && return f()
    outer, box.floor = box.floor, box.used
    try
        return f()
    finally
        box.floor = outer  # a retired outbox (Ctrl-C) is gone: its successor starts at 0
    end
end

"""
    retire_outbox()

Delete the outbox: a message in it may still be unread (an abandoned request), so the next
array goes to a new one. Also at exit.
"""
function retire_outbox()
    box = OUTBOX[]
    box === nothing && return nothing
    OUTBOX[] = nothing
    unmap(box)
    names_file(box.path, box.fd) && unlink_segment(box.path)  # not a successor of that name
    ccall(:close, Cint, (Cint,), box.fd)
    return nothing
end

"""
    read_shared(T, dims, path, offset, stamp, stalled) -> Array{T}

Copy an array out of the peer's outbox (mapped once, again when it grew or changed), behind the
peer as it writes it (its `ready` count, python/devplace/bridge/transports/shm.py `fill`); `stalled()`
runs while nothing new is written (it throws to give up: the host died or timed out).
"""
function read_shared(::Type{T}, dims::NTuple{N,Int}, path::String, offset::UInt64,
                     stamp::UInt64, stalled) where {T,N}
    startswith(basename(path), SHM_PREFIX) ||
        throw(WireError("shared array path $path is not a DevPlace segment"))
    nbig = prod(big.(dims)) * sizeof(T)
    offset >= HEAD_BYTES && offset + nbig < typemax(Int) ||
        throw(WireError("shared array of size $dims and type $T at $offset is out of range"))
    n, off = Int(nbig), Int(offset)
    box = INBOX[]
    (box === nothing || box.path != path || box.size < off + n) && (box = map_inbox(path, off + n))
    a = huge_pages!(Array{T,N}(undef, dims))
    stamped() = unsafe_load(Ptr{UInt64}(box.ptr + off - STAMP_BYTES)) == stamp
    stamped() || throw(WireError("shared array in $path was overwritten before it was read"))
    ready = Ptr{UInt64}(box.ptr + off - HEAD_BYTES)
    done = 0
    while done < n
        # Each load after a call (`copy` or `stalled`): the compiler cannot keep an old value.
        upto = unsafe_load(ready)
        upto <= n || throw(WireError("shared array in $path claims $upto of its $n bytes"))
        if upto > done
            GC.@preserve a unsafe_copyto!(Ptr{UInt8}(pointer(a)) + done, box.ptr + off + done,
                                          Int(upto) - done)
            done = Int(upto)
        else
            stalled()
        end
    end
    stamped() || throw(WireError("shared array in $path was overwritten while it was read"))
    return a
end

const HUGE_PAGE = UInt(2) << 20
const MADV_HUGEPAGE = Cint(14)

"""
    huge_pages!(a) -> a

Ask Linux for transparent huge pages under `a`'s 2 MiB-aligned part, as numpy does for its own
large arrays: the first touch of a fresh array of 100 MiB then costs a third of what 4 KiB pages
cost (one fault per 2 MiB instead of per 4 KiB). Only a hint: nothing changes where THP is off.
"""
function huge_pages!(a::Array)
    lo = (UInt(pointer(a)) + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1)
    hi = (UInt(pointer(a)) + UInt(sizeof(a))) & ~(HUGE_PAGE - 1)
    if Sys.islinux() && hi > lo
        ccall(:madvise, Cint, (Ptr{Cvoid}, Csize_t, Cint), Ptr{Cvoid}(lo), hi - lo, MADV_HUGEPAGE)
    end
    return a
end

"Unmap the peer's outbox (its host is gone)."
function drop_inbox()
    box = INBOX[]
    box === nothing || unmap(box)
    INBOX[] = nothing
    return nothing
end

function map_inbox(path::String, need::Int)
    fd = ccall(:open, Cint, (Cstring, Cint, Cint...), path, O_RDONLY | O_CLOEXEC, Cint(0))
    fd < 0 && throw(WireError(sys_message("cannot open shared array", path, Libc.errno())))
    try
        size = Int(stat(RawFD(fd)).size)
        size >= need || throw(WireError("shared arrays file $path holds $size bytes, $need expected"))
        ptr = map_fd(fd, size, PROT_READ)
        ptr === nothing && throw(WireError(sys_message("cannot map", path, Libc.errno())))
        old = INBOX[]
        old === nothing || unmap(old)
        return INBOX[] = Segment(path, Cint(-1), ptr, size, 0, 0)
    finally
        ccall(:close, Cint, (Cint,), fd)
    end
end

"The name of shared-memory segment `number` of process `pid` (`devplace-<pid>-<n>`)."
segment_name(pid::Integer, number::Integer) = string(SHM_PREFIX, pid, "-", number)

"(pid, number) of a segment's name (`segment_name`), or `nothing` for any other name."
function segment_owner(name::AbstractString)
    startswith(name, SHM_PREFIX) || return nothing
    parts = split(name[length(SHM_PREFIX)+1:end], '-')
    length(parts) == 2 || return nothing
    pid, number = tryparse.(Int, parts)
    return pid === nothing || number === nothing ? nothing : (pid, number)
end

"""
    clean_stale_segments()

Delete the outboxes in `SHM_DIR[]` whose owner is gone (a killed Julia or host): those nobody
holds the lock of (`lock_segment`), whatever PID namespace made them; others' stay.
"""
function clean_stale_segments()
    names = try
        readdir(SHM_DIR[])
    catch err
        err isa InterruptException && rethrow()
        return nothing  # no folder to clean
    end
    for name in names
        segment_owner(name) === nothing && continue
        path = joinpath(SHM_DIR[], name)
        fd = ccall(:open, Cint, (Cstring, Cint, Cint...), path, O_RDONLY | O_CLOEXEC, Cint(0))
        fd < 0 && continue
        lock_segment(fd) && names_file(path, fd) && unlink_segment(path)
        ccall(:close, Cint, (Cint,), fd)
    end
    return nothing
end
