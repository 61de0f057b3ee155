# Values on the wire (docs/protocol.md, "Values"), as python/devplace/bridge/wire.py: tags,
# dtype codes, and Julia values <-> tagged bytes. By value: nothing, Bool, integers, floats,
# strings, symbols, tuples, vectors, dicts, numeric arrays (column-major, the same element at the
# same index on both sides) and numeric types; Julia functions become Python callables;
# everything from Python without a Julia counterpart arrives as a PyObject. The context `ctx` a
# value is encoded and decoded in is a `Host`, or `nothing` when only bytes are checked (test
# vectors); it answers the three functions declared below.

# Value tags (protocol.tsv says what follows each).
const TAG_NONE = protocol_byte("tag", "NONE")
const TAG_FALSE = protocol_byte("tag", "FALSE")
const TAG_TRUE = protocol_byte("tag", "TRUE")
const TAG_INT = protocol_byte("tag", "INT")
const TAG_FLOAT = protocol_byte("tag", "FLOAT")
const TAG_STR = protocol_byte("tag", "STR")
const TAG_LIST = protocol_byte("tag", "LIST")
const TAG_TUPLE = protocol_byte("tag", "TUPLE")
const TAG_DICT = protocol_byte("tag", "DICT")
const TAG_BYTES = protocol_byte("tag", "BYTES")
const TAG_SCALAR = protocol_byte("tag", "SCALAR")
const TAG_NDARRAY = protocol_byte("tag", "NDARRAY")
const TAG_HANDLE = protocol_byte("tag", "HANDLE")
const TAG_JLFUNC = protocol_byte("tag", "JLFUNC")
const TAG_DTYPE = protocol_byte("tag", "DTYPE")
const TAG_SHARED = protocol_byte("tag", "SHARED")

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

"""
    shared_array(ctx, T, dims, path, offset, stamp)

The Julia array for an array the peer sent through shared memory (shm.jl).
"""
function shared_array end

"""
    WireHandle(id)

A Python handle as seen without a host (test vectors).
"""
struct WireHandle
    id::UInt64
end

"""
    WireFunction(id, name)

A Julia callable as seen on the wire without a host (test vectors).
"""
struct WireFunction
    id::UInt64
    name::String
end

"""
    PyDict(pairs)

Pairs that travel as one Python dict, keys converted on the Python side (no Julia hashing
of Python objects).
"""
struct PyDict
    pairs::Vector{Pair}
end

# --- encoding -------------------------------------------------------------------------------

function write_str(io::IO, s::AbstractString)
    data = codeunits(String(s))
    write(io, htol(UInt32(length(data))))
    write(io, data)
end

function write_count(io::IO, tag::UInt8, n::Integer)
    n <= typemax(UInt32) || throw(ArgumentError("container of $n elements is too long to send"))
    write(io, tag, htol(UInt32(n)))
end

unsupported(x) = throw(ArgumentError(string(
    "DevPlace cannot pass a value of type ", typeof(x), " to Python: ", summary_of(x),
    ". Hint: pass a number, string, tuple, vector, Dict, numeric array, Julia function or ",
    "PyObject instead (convert the value first).")))

function summary_of(x)
    s = try
        sprint(show, x; context = :limit => true)
    catch
        "<unprintable>"
    end
    return length(s) > 60 ? string(first(s, 57), "...") : s
end

encode!(enc::Encoder, ctx, x) = unsupported(x)
encode!(enc::Encoder, ctx, ::Nothing) = write(enc.buf, TAG_NONE)
encode!(enc::Encoder, ctx, x::Bool) = write(enc.buf, x ? TAG_TRUE : TAG_FALSE)
encode!(enc::Encoder, ctx, x::Int64) = write(enc.buf, TAG_INT, htol(x))
encode!(enc::Encoder, ctx, x::Float64) = write(enc.buf, TAG_FLOAT, htol(x))

for T in DTYPES
    T in (Bool, Int64, Float64) && continue
    @eval encode!(enc::Encoder, ctx, x::$T) = write(enc.buf, TAG_SCALAR, dtype_code($T), htol(x))
end

function encode!(enc::Encoder, ctx, x::Integer)
    typemin(Int64) <= x <= typemax(Int64) || throw(ArgumentError(
        "integer $x does not fit in 64 bits; hint: pass it as a Float64 or a string"))
    encode!(enc, ctx, Int64(x))
end

encode!(enc::Encoder, ctx, x::AbstractFloat) = encode!(enc, ctx, Float64(x))
encode!(enc::Encoder, ctx, x::AbstractIrrational) = encode!(enc, ctx, Float64(x))
encode!(enc::Encoder, ctx, x::Rational) = encode!(enc, ctx, Float64(x))

function encode!(enc::Encoder, ctx, x::Union{AbstractString,Symbol,AbstractChar})
    write(enc.buf, TAG_STR)
    write_str(enc.buf, string(x))
end

encode!(enc::Encoder, ctx, x::Tuple) = encode_items!(enc, ctx, TAG_TUPLE, x)
encode!(enc::Encoder, ctx, x::AbstractVector) = encode_items!(enc, ctx, TAG_LIST, x)

function encode_items!(enc::Encoder, ctx, tag, items)
    enter!(enc, items)
    write_count(enc.buf, tag, length(items))
    for v in items
        encode!(enc, ctx, v)
    end
    pop!(enc.path)
end

"Values nest at most this many containers deep, both ways (docs/protocol.md, \"Values\")."
const MAX_DEPTH = protocol_number("limit", "MAX_DEPTH")

# Python refuses what nests deeper, so Julia says so before anything is sent, and names the
# value; a container inside itself (which would recurse without end) is the usual cause.
function enter!(enc::Encoder, x)
    if length(enc.path) >= MAX_DEPTH
        any(p -> p === x, enc.path) && throw(ArgumentError(string(
            "DevPlace cannot pass this ", typeof(x), " to Python: it contains itself, so it ",
            "would nest without end (values nest at most ", MAX_DEPTH, " levels). Hint: pass ",
            "a copy without the reference to itself.")))
        throw(ArgumentError(string(
            "DevPlace cannot pass a value nested deeper than ", MAX_DEPTH, " levels to Python ",
            "(here a ", typeof(x), " in a ", typeof(enc.path[end]), ", ", MAX_DEPTH,
            " containers deep, counting the request's own). Hint: flatten it, e.g. into one ",
            "vector or a numeric array, or send it in parts.")))
    end
    push!(enc.path, x)
end

function encode!(enc::Encoder, ctx, x::AbstractArray)
    throw(ArgumentError(string(
        "DevPlace cannot pass a ", join(size(x), "×"), " array of ", eltype(x),
        " to Python: only numeric arrays go by value. Hint: convert the elements to a ",
        "numeric type, or pass a vector of values.")))
end

function encode!(enc::Encoder, ctx, x::AbstractArray{T}) where {T<:WireNumber}
    encode_array!(enc, x isa Array ? x : collect(x))
end

function encode!(enc::Encoder, ctx, x::AbstractVector{T}) where {T<:WireNumber}
    encode_array!(enc, x isa Array ? x : collect(x))
end

function encode_array!(enc::Encoder, a::Array{T,N}) where {T<:WireNumber,N}
    if N == 0
        return encode!(enc, nothing, a[])
    end
    N <= MAX_DIMS || throw(ArgumentError(string(
        "DevPlace cannot pass a ", N, "-dimensional array to Python: numpy takes at most ",
        MAX_DIMS, " dimensions. Hint: reshape it to ", MAX_DIMS, " or fewer (e.g. vec(a))")))
    if enc.refer && sizeof(a) >= BIG_PART  # in process: Python reads it where it is
        push!(enc.keep, a)
        return encode!(enc, nothing, WireShared(T, size(a), "", UInt64(UInt(pointer(a))), UInt64(0)))
    end
    shared = enc.share && SHM_MIN[] > 0 && sizeof(a) >= SHM_MIN[] ? share_array(a, !enc.shared) :
             nothing
    io = enc.buf
    if shared !== nothing
        enc.shared = true
        return encode!(enc, nothing, WireShared(T, size(a), shared...))
    end
    write_array_head(io, TAG_NDARRAY, T, size(a))
    if sizeof(a) >= BIG_PART
        add_big!(enc, a)
    else
        write(io, a)
    end
end

function write_array_head(io::IO, tag::UInt8, ::Type{T}, dims::Tuple) where {T}
    write(io, tag, dtype_code(T), UInt8(length(dims)))
    for d in dims
        write(io, htol(UInt64(d)))
    end
end

function encode!(enc::Encoder, ctx, x::WireShared)
    write_array_head(enc.buf, TAG_SHARED, x.T, x.dims)
    write_str(enc.buf, x.path)
    write(enc.buf, htol(x.offset), htol(x.stamp))
end

function encode_pairs!(enc::Encoder, ctx, pairs)
    enter!(enc, pairs)
    write_count(enc.buf, TAG_DICT, length(pairs))
    for (k, v) in pairs
        encode!(enc, ctx, k)
        encode!(enc, ctx, v)
    end
    pop!(enc.path)
end

encode!(enc::Encoder, ctx, x::AbstractDict) = encode_pairs!(enc, ctx, x)
encode!(enc::Encoder, ctx, x::PyDict) = encode_pairs!(enc, ctx, x.pairs)
encode!(enc::Encoder, ctx, x::NamedTuple) = encode_pairs!(enc, ctx, pairs(x))

function encode!(enc::Encoder, ctx, ::Type{T}) where {T<:WireNumber}
    write(enc.buf, TAG_DTYPE, dtype_code(T))
end

encode!(enc::Encoder, ctx, x::WireHandle) = write(enc.buf, TAG_HANDLE, htol(x.id))

function encode!(enc::Encoder, ctx, x::WireFunction)
    write(enc.buf, TAG_JLFUNC, htol(x.id))
    write_str(enc.buf, x.name)
end

function encode!(enc::Encoder, ctx, f::Function)
    ctx === nothing && throw(ArgumentError("Julia functions need a host to be sent"))
    id = register_function!(ctx, f)
    write(enc.buf, TAG_JLFUNC, htol(id))
    write_str(enc.buf, string(nameof(f)))
end

"""
    encode_value(x, ctx=nothing) -> Vector{UInt8}

The wire bytes of one value.
"""
function encode_value(x, ctx = nothing)
    enc = Encoder()
    encode!(enc, ctx, x)
    return reduce(vcat, (p isa Vector{UInt8} ? p : collect(reinterpret(UInt8, vec(p)))
                         for p in message_parts(enc)); init = UInt8[])
end

# --- decoding -------------------------------------------------------------------------------

function read_str(io::IO)
    n = Int(ltoh(read(io, UInt32)))
    n <= bytesavailable(io) || throw(WireError("string of $n bytes exceeds the frame"))
    return String(read(io, n))
end

function read_count(io::IO)
    n = Int(ltoh(read(io, UInt32)))
    n <= bytesavailable(io) || throw(WireError("container of $n elements exceeds the frame"))
    return n
end

make_handle(::Nothing, id::UInt64) = WireHandle(id)
shared_array(::Nothing, T::Type, dims::Tuple, path, offset, stamp) =
    WireShared(T, dims, path, offset, stamp)
lookup_function(::Nothing, id::UInt64, name::String) = WireFunction(id, name)

"The most dimensions an array may have: numpy's limit (`NPY_MAXDIMS`)."
const MAX_DIMS = protocol_number("limit", "MAX_DIMS")

"`N` array dimensions, each a size Julia can hold (below 2^63)."
function read_dims(io::IO, N::Int)
    return ntuple(N) do _
        d = ltoh(read(io, UInt64))
        d <= typemax(Int) || throw(WireError("array dimension $d is larger than 2^63 - 1"))
        Int(d)
    end
end

"The element type and dimensions that an array value (`TAG_NDARRAY`, `TAG_SHARED`) begins with."
function read_array_head(io::IO)
    T = dtype_of(read(io, UInt8))
    return T, read_dims(io, Int(read(io, UInt8)))
end

"An array of `T` and `dims` whose elements follow in the frame."
function read_array(io::IO, T::Type, dims::Tuple)
    prod(big.(dims)) * sizeof(T) <= bytesavailable(io) ||
        throw(WireError("array of size $dims and type $T exceeds the frame"))
    return read!(io, Array{T,length(dims)}(undef, dims))
end

"Vectors of decoded values get the narrowest element type, as comprehensions do."
narrow(v::Vector{Any}) = isempty(v) ? v : map(identity, v)

function decode!(io::IO, ctx, depth::Int = 0)
    depth <= MAX_DEPTH || throw(WireError("value nested deeper than $MAX_DEPTH levels"))
    tag = read(io, UInt8)
    if tag == TAG_NONE
        return nothing
    elseif tag == TAG_FALSE
        return false
    elseif tag == TAG_TRUE
        return true
    elseif tag == TAG_INT
        return ltoh(read(io, Int64))
    elseif tag == TAG_FLOAT
        return ltoh(read(io, Float64))
    elseif tag == TAG_STR
        return read_str(io)
    elseif tag == TAG_LIST || tag == TAG_TUPLE
        n = read_count(io)
        v = Vector{Any}(undef, n)
        for i in 1:n
            v[i] = decode!(io, ctx, depth + 1)
        end
        return tag == TAG_LIST ? narrow(v) : Tuple(v)
    elseif tag == TAG_DICT
        n = read_count(io)
        ks = Vector{Any}(undef, n)
        vs = Vector{Any}(undef, n)
        for i in 1:n
            ks[i] = decode!(io, ctx, depth + 1)
            vs[i] = decode!(io, ctx, depth + 1)
        end
        return n == 0 ? Dict{Any,Any}() : Dict(ks[i] => vs[i] for i in 1:n)
    elseif tag == TAG_BYTES
        n = read_count(io)
        return read(io, n)
    elseif tag == TAG_SCALAR
        T = dtype_of(read(io, UInt8))
        return ltoh(read(io, T))
    elseif tag == TAG_NDARRAY
        return read_array(io, read_array_head(io)...)
    elseif tag == TAG_SHARED
        T, dims = read_array_head(io)
        path = read_str(io)
        offset = ltoh(read(io, UInt64))
        return shared_array(ctx, T, dims, path, offset, ltoh(read(io, UInt64)))
    elseif tag == TAG_HANDLE
        return make_handle(ctx, ltoh(read(io, UInt64)))
    elseif tag == TAG_JLFUNC
        id = ltoh(read(io, UInt64))
        return lookup_function(ctx, id, read_str(io))
    elseif tag == TAG_DTYPE
        return dtype_of(read(io, UInt8))
    end
    throw(WireError("unknown value tag 0x$(string(tag, base = 16, pad = 2))"))
end

"""
    decode_value(bytes, ctx=nothing)

The one value that fills `bytes`.
"""
function decode_value(bytes::Vector{UInt8}, ctx = nothing)
    io = IOBuffer(bytes)
    v = try
        decode!(io, ctx)
    catch err
        err isa EOFError && throw(WireError("value truncated"))
        rethrow()
    end
    eof(io) || throw(WireError("$(bytesavailable(io)) bytes left over after the value"))
    return v
end
