# Frames (docs/protocol.md, "Frames"), as python/devplace/bridge/frames.py: `u32 length |
# u8 kind | u32 seq | body`, written from an `Encoder`'s parts and read whole.

# Frame kinds (protocol.tsv says what each carries).
const REQUEST = protocol_byte("frame", "REQUEST")
const REPLY = protocol_byte("frame", "REPLY")
const ERROR = protocol_byte("frame", "ERROR")
const CALLBACK = protocol_byte("frame", "CALLBACK")
const RELEASE = protocol_byte("frame", "RELEASE")
const HELLO = protocol_byte("frame", "HELLO")
const ABANDON = protocol_byte("frame", "ABANDON")

const PROTOCOL_VERSION = protocol_number("frame", "PROTOCOL_VERSION")
const HEADER_BYTES = protocol_number("frame", "HEADER_BYTES")  # kind + seq, in a frame's length
# The largest frame either side sends or accepts (its length field, docs/protocol.md): a length
# above it is refused at once, not waited for.
const MAX_FRAME = 1 << 31

"""
    WireError(msg)

The bytes from the host are not well-formed frames or values (a protocol bug or a corrupted
stream).
"""
struct WireError <: Exception
    msg::String
end

Base.showerror(io::IO, e::WireError) = print(io, "WireError: ", e.msg)

"""
    Encoder()

The bytes of one message: small values go into `buf`, large arrays are kept as separate
`parts` so they are written to the pipe without another copy. `path` holds the containers being
encoded, outermost first (wire.jl bounds their nesting); an encoder that threw is not reused.
With `share`, arrays of `SHM_MIN[]` bytes or more go through the outbox (shm.jl); `shared`
says whether some did. With `refer` (the in-process transport), arrays of `BIG_PART` bytes or
more go by address: `keep` holds them until the answer came.
"""
mutable struct Encoder
    buf::IOBuffer
    parts::Vector{Any}
    path::Vector{Any}
    share::Bool
    shared::Bool
    refer::Bool
    keep::Vector{Any}
end

Encoder(; share::Bool = false, refer::Bool = false) =
    Encoder(IOBuffer(), Any[], Any[], share, false, refer, Any[])

const BIG_PART = 1 << 16

function add_big!(enc::Encoder, a::Array)
    if position(enc.buf) > 0
        push!(enc.parts, take!(enc.buf))
    end
    push!(enc.parts, a)
    return enc
end

function message_parts(enc::Encoder)
    parts = enc.parts
    position(enc.buf) > 0 && push!(parts, take!(enc.buf))
    return parts
end

nbytes(x::Array) = sizeof(x)

"""
    write_frame(io, kind, seq, parts)

Write one frame whose body is the concatenation of `parts` (byte vectors or numeric arrays).
Small frames go out in a single write.
"""
function write_frame(io::IO, kind::UInt8, seq::UInt32, parts::Vector{Any})
    n = HEADER_BYTES
    for p in parts
        n += nbytes(p)
    end
    n <= MAX_FRAME || throw(ArgumentError(string(
        "message of ", n, " bytes is larger than a frame may be (", MAX_FRAME, " bytes, 2 GiB). ",
        "Hint: send smaller arrays, or let large ones go through shared memory ",
        "(DEVPLACE_SHM_MIN)")))
    head = IOBuffer()
    write(head, htol(UInt32(n)), kind, htol(seq))
    for p in parts
        if nbytes(p) < BIG_PART
            write(head, p)
        else
            write(io, take!(head))
            write(io, p)
        end
    end
    position(head) > 0 && write(io, take!(head))
    return nothing
end

"""
    read_frame(io) -> (kind, seq, body)

Read one frame; `body` is the bytes after the header. Throws `EOFError` if the stream ends.
"""
function read_frame(io::IO)
    n = ltoh(read(io, UInt32))
    n >= HEADER_BYTES || throw(WireError("frame length $n is shorter than its header"))
    n <= MAX_FRAME || throw(WireError("frame length $n is above the limit of $MAX_FRAME bytes"))
    kind = read(io, UInt8)
    seq = ltoh(read(io, UInt32))
    body = read(io, Int(n) - HEADER_BYTES)
    length(body) == Int(n) - HEADER_BYTES || throw(EOFError())
    return kind, seq, body
end
