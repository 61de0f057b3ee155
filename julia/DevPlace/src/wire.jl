# The wire format shared with python/devplace/bridge (docs/protocol.md): frame kinds, value
# tags, dtype codes, and reading/writing whole frames. What values mean is in convert.jl; the
# context a value is encoded and decoded in (the host, or `nothing` for bare bytes) answers the
# three functions declared at the end of this file.

# Frame kinds.
const REQUEST = 0x01
const REPLY = 0x02
const ERROR = 0x03
const CALLBACK = 0x04
const RELEASE = 0x05
const HELLO = 0x06

# Value tags.
const TAG_NONE = 0x00
const TAG_FALSE = 0x01
const TAG_TRUE = 0x02
const TAG_INT = 0x03
const TAG_FLOAT = 0x04
const TAG_STR = 0x05
const TAG_LIST = 0x06
const TAG_TUPLE = 0x07
const TAG_DICT = 0x08
const TAG_BYTES = 0x09
const TAG_SCALAR = 0x0a
const TAG_NDARRAY = 0x0b
const TAG_HANDLE = 0x0c
const TAG_JLFUNC = 0x0d
const TAG_DTYPE = 0x0e

const PROTOCOL_VERSION = 2
const HEADER_BYTES = 5  # kind + seq, counted in a frame's length
const MAX_FRAME = typemax(UInt32)

"Numeric types that travel by value, in the order of their wire dtype codes 1, 2, ..."
const DTYPES = (Bool, Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64,
                Float16, Float32, Float64, ComplexF32, ComplexF64)
const WireNumber = Union{DTYPES...}

dtype_code(::Type{T}) where {T<:WireNumber} = UInt8(findfirst(isequal(T), DTYPES))

function dtype_of(code::UInt8)
    1 <= code <= length(DTYPES) || throw(WireError("unknown dtype code $code"))
    return DTYPES[code]
end

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
`parts` so they are written to the pipe without another copy.
"""
mutable struct Encoder
    buf::IOBuffer
    parts::Vector{Any}
end

Encoder() = Encoder(IOBuffer(), Any[])

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
    n <= MAX_FRAME || throw(ArgumentError(
        "message of $(n) bytes is larger than a frame can hold (4 GiB); send smaller arrays"))
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
    kind = read(io, UInt8)
    seq = ltoh(read(io, UInt32))
    body = read(io, Int(n) - HEADER_BYTES)
    length(body) == Int(n) - HEADER_BYTES || throw(EOFError())
    return kind, seq, body
end

# The codec's context (convert.jl calls these; the `nothing` methods live there, the host's in
# host.jl and pyobject.jl).

"""
    register_function!(ctx, f) -> UInt64

Enter Julia function `f` in `ctx`'s table of functions Python may call; its id.
"""
function register_function! end

"""
    lookup_function(ctx, id, name)

The Julia function entered under `id` (`name` is what Python calls it).
"""
function lookup_function end

"""
    make_handle(ctx, id)

The Julia object for Python handle `id`.
"""
function make_handle end
