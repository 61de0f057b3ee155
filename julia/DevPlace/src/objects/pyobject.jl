# PyObject: a Julia proxy of one object in the Python host (held there by handle id).
# Property access, calls, printing, equality and iteration forward to Python.

"""
    Lazy(make)

How to find a Python object in a host: `make()` returns a fresh PyObject. Used for module-level
constants (`tf`) that must exist before the host starts and survive a host restart. (`T` is
`PyObject`, which is defined after it.)
"""
mutable struct Lazy{T}
    make::Function
    cache::Union{Nothing,T}
    attributes::Dict{String,Any}  # looked up in `cache`'s host once: a module's names stay put
end

"""
    PyObject

A Python object living in the DevPlace host process. `o.name` reads an attribute, `o(args...;
kwargs...)` calls it, `show` prints Python's `repr`. A PyObject belongs to one host process:
after that process exits it cannot be used any more (except lazily resolved ones such as `tf`).
"""
mutable struct PyObject
    id::UInt64
    gen::Int
    lazy::Union{Nothing,Lazy{PyObject}}  # a `Lazy` finds the object again in each new host

    function PyObject(id::UInt64, gen::Int)
        o = new(id, gen, nothing)
        finalizer(release_later, o)
        return o
    end
    PyObject(lazy::Lazy{PyObject}) = new(UInt64(0), 0, lazy)
end

"""
    lazy_pyobject(make)

A PyObject resolved on first use (and again in each new host) by calling `make()`.
"""
lazy_pyobject(make::Function) = PyObject(Lazy{PyObject}(make, nothing, Dict{String,Any}()))

release_later(o::PyObject) = queue_release(getfield(o, :gen), getfield(o, :id))

"""
    StaleObjectError

A PyObject from a Python host process that has exited.
"""
struct StaleObjectError <: Exception
    gen::Int
end

function Base.showerror(io::IO, e::StaleObjectError)
    print(io, "StaleObjectError: this PyObject belongs to DevPlace host process #", e.gen,
          ", which has exited; Python objects do not survive their host. ",
          "Hint: rerun the code that created it (build the graph again).")
end

"""
    pyid(o, gen) -> UInt64

The handle id of `o` in the host of generation `gen` (a lazy object must have been resolved for
it by `resolve_lazy`).
"""
function pyid(o::PyObject, gen::Int)
    lz = getfield(o, :lazy)
    if lz !== nothing
        o = lz.cache
        o === nothing && error("DevPlace: a lazy PyObject reached the encoder unresolved")
    end
    getfield(o, :gen) == gen || throw(StaleObjectError(getfield(o, :gen)))
    return getfield(o, :id)
end

"""
    resolve_lazy(x)

Find the lazy PyObjects in `x` (and in the tuples, vectors and dicts inside it) in the running
host, so that encoding `x` never has to send a request of its own.
"""
function resolve_lazy(o::PyObject, depth = 0)
    lz = getfield(o, :lazy)
    lz === nothing && return nothing
    c = lz.cache
    if c === nothing || !in_live_host(c)
        lz.cache = lz.make()::PyObject
        empty!(lz.attributes)
    end
    return nothing
end
resolve_lazy(x::Tuple, depth = 0) =
    length(x) <= 8 ? depth < MAX_DEPTH && resolve_each(depth + 1, x...) : resolve_items(x, depth)
resolve_lazy(x::NamedTuple, depth = 0) = resolve_lazy(Tuple(x), depth)
resolve_lazy(x::AbstractArray, depth = 0) = eltype(x) <: Number || resolve_items(x, depth)
resolve_lazy(x::AbstractArray{PyObject}, depth = 0) = foreach(resolve_lazy, x)
resolve_lazy(x::AbstractDict, depth = 0) = resolve_items(pairs(x), depth)
function resolve_lazy(x::Pair, depth = 0)
    resolve_lazy(x.first, depth)
    resolve_lazy(x.second, depth)
end
resolve_lazy(x::PyDict, depth = 0) = resolve_lazy(x.pairs, depth)
resolve_lazy(x, depth = 0) = nothing
# No deeper than values may nest: the encoder then says why (e.g. a vector inside itself).
resolve_items(xs, depth) = depth < MAX_DEPTH && foreach(x -> resolve_lazy(x, depth + 1), xs)
# A short tuple's items one by one, each call compiled for its item's type (`foreach` over a
# tuple of mixed types looks each item's method up at run time: microseconds on every `run`).
resolve_each(depth) = nothing
resolve_each(depth, x, rest...) = (resolve_lazy(x, depth); resolve_each(depth, rest...))

"""
    request(op, args::Tuple)

Send request `op` (an `OP_...` code, `| BY_HANDLE` for a handle) with `args` to the host and
return the answer (`roundtrip`), lazy objects among the arguments resolved first.
"""
function request(op::UInt8, args::Tuple)
    resolve_lazy(args)
    return roundtrip(op, args)
end

"""
    run_direct(sess, fetches, feeds, op, args)

`run(sess, fetches, feeds...)` of one tensor or op, or a vector or tuple of them, with
`placeholder => value` pairs `feeds`: in process a direct call (`run_fetch`) where each value
can go without a message (`direct_feed`); else request `op` with `args` (the same `run`).
"""
function run_direct(sess::PyObject, fetches, feeds::Tuple, op::UInt8, args::Tuple)
    resolve_lazy(args)  # `sess`, `fetches` and the feeds' placeholders are among them
    return with_peer() do h
        h isa InProcess && all(f -> f.first isa PyObject && direct_feed(f.second), feeds) ||
            return exchange(h, op, args)  # not `request`: Ctrl-C held once only
        # a comprehension: ADCME's `map` of a vector of tensors is TensorFlow's `map_fn`
        ids = fetches isa PyObject ? pyid(fetches, h.gen) : fetches isa Tuple ?
              map(f -> pyid(f, h.gen), fetches) : UInt64[pyid(f, h.gen) for f in fetches]
        fed = map(f -> pyid(f.first, h.gen) => f.second, feeds)
        run_fetch(h::InProcess, pyid(sess, h.gen), ids, fed)
    end
end

"""
    direct_fetches(fetches) -> Bool

Can `run` fetch `fetches` with one direct call in process: a tensor or op, or a non-empty
vector or tuple of them.
"""
direct_fetches(f::PyObject) = true
direct_fetches(f::Union{AbstractVector,Tuple}) = !isempty(f) && all(x -> x isa PyObject, f)
direct_fetches(f) = false

make_handle(h::Peer, id::UInt64) = PyObject(id, h.gen)

"Does `o` live in the running host? (lazily resolved objects always do)"
function in_live_host(o::PyObject)
    getfield(o, :lazy) === nothing || return true
    h = HOST[]
    # each concrete type apart: on their union Julia 1.5 looks each field read up at run time
    h isa InProcess && return h.alive && h.gen == getfield(o, :gen)
    h isa Host && return h.alive && h.gen == getfield(o, :gen)
    return false
end
in_live_host(x) = true

encode!(enc::Encoder, h, o::PyObject) = write(enc.buf, TAG_HANDLE, htol(pyid(o, h.gen)))

function Base.getproperty(o::PyObject, s::Symbol)
    OP_INFO[] === nothing || (known = op_info(o, s)) === nothing || return known
    return getattribute(o, String(s))
end
Base.getproperty(o::PyObject, s::AbstractString) = getattribute(o, String(s))

# A lazy object (`tf`, a module) answers a name from what it found before in this host: `tf.nn`
# costs a request once per host, not once per use.
function getattribute(o::PyObject, name::String)
    lz = getfield(o, :lazy)
    lz === nothing && return request(OP_GETATTR, (o, name))
    resolve_lazy(o)
    known = get(lz.attributes, name, nothing)  # not `get!` with a closure: compiled ahead
    return known === nothing ? (lz.attributes[name] = request(OP_GETATTR, (o, name))) : known
end

function Base.setproperty!(o::PyObject, s::Symbol, v)
    request(OP_SETATTR, (o, String(s), v))
    lz = getfield(o, :lazy)
    lz === nothing || delete!(lz.attributes, String(s))
    return v
end

Base.propertynames(o::PyObject, private::Bool = false) =
    Symbol[Symbol(n) for n in request(OP_DIR, (o,)) if private || !startswith(n, "_")]

(o::PyObject)(args...; kwargs...) = call_python(o, nothing, args, kwargs)

"""
    call_python(f, what, args::Tuple, kwargs; op=OP_CALL)

Call the Python callable `f` (`op`: `OP_CALL`, with flags such as `IN_PLACE`). A Julia argument
that cannot travel to Python gives an `ArgumentError` naming `what` (the function, for messages;
`nothing`: ask Python for its name), the argument's position or keyword, its value and type, and
a hint.
"""
function call_python(f::PyObject, what, args::Tuple, kwargs; op::UInt8 = OP_CALL)
    try
        isempty(kwargs) && return request(op, (f, args))
        return request(op, (f, args, kwargs))
    catch err
        err isa ArgumentError || rethrow()  # only encoding throws these: nothing was sent
        throw(argument_error(err, what === nothing ? callee_name(f) : what, args, kwargs))
    end
end

"An encoding context without a host: only asks whether a value can travel."
struct Probe end
encode!(enc::Encoder, ::Probe, ::PyObject) = nothing
encode!(enc::Encoder, ::Probe, ::Function) = nothing

"Why `x` cannot travel to Python (an `ArgumentError`'s message), or `nothing` if it can."
function unsendable(x)
    try
        encode!(Encoder(), Probe(), x)
        return nothing
    catch err
        return err isa ArgumentError ? err.msg : nothing
    end
end

function argument_error(err::ArgumentError, what, args::Tuple, kwargs)
    for (i, a) in enumerate(args)
        why = unsendable(a)
        why === nothing || return ArgumentError(string(what, ": argument ", i, ": ", why))
    end
    for (k, v) in pairs(kwargs)
        why = unsendable(v)
        why === nothing || return ArgumentError(string(what, ": keyword argument `", k, "`: ", why))
    end
    return err
end

function callee_name(f::PyObject)
    try
        name = request(OP_GETATTR, (f, "__name__"))
        return name isa String ? name : pyrepr(f)
    catch err
        err isa PyError || rethrow()
        return pyrepr(f)
    end
end

"""
    pycall(f, args...; kwargs...)

Call the Python callable `f`. With `pycall(f, PyObject, args...)` the result stays a
PyObject even when it could be converted to a Julia value.
"""
pycall(f::PyObject, args...; kwargs...) = f(args...; kwargs...)
pycall(f::PyObject, ::Type{PyObject}, args...; kwargs...) =
    request(OP_CALL | BY_HANDLE, (f, args, kwargs))

"""
    pygetattr(o, name, PyObject)

Attribute `name` of `o`, kept as a PyObject (no conversion to a Julia value).
"""
pygetattr(o::PyObject, name::AbstractString, ::Type{PyObject}) =
    request(OP_GETATTR | BY_HANDLE, (o, String(name)))

"""
    pyrepr(o) -> String

Python's `repr(o)`.
"""
pyrepr(o) = request(OP_REPR, (o,))::String

"""
    pystr(o) -> String

Python's `str(o)`.
"""
pystr(o) = request(OP_STR, (o,))::String

"""
    pyisinstance(o, t) -> Bool

Python's `isinstance(o, t)`.
"""
pyisinstance(o, t) = request(OP_ISINSTANCE, (o, t))::Bool

"""
    pyhasattr(o, name) -> Bool

Python's `hasattr(o, name)`.
"""
pyhasattr(o, name::AbstractString) = request(OP_HASATTR, (o, String(name)))::Bool

Base.print(io::IO, o::PyObject) = print(io, pystr(o))

Base.hash(o::PyObject, h::UInt) = hash(request(OP_HASH, (o,))::Int, h)
Base.isequal(a::PyObject, b::PyObject) = request(OP_ISEQUAL, (a, b))::Bool
Base.:(==)(a::PyObject, b::PyObject) = isequal(a, b)

function Base.iterate(o::PyObject, state = nothing)
    items, i = state === nothing ? (pylist(o), 1) : state
    i > length(items) && return nothing
    return items[i], (items, i + 1)
end

pylist(o::PyObject) = collect(Any, request(OP_CALL, (PY_ITEMS, (o,)))::Vector)

# `list(o)`, but a tensor gives a clear error (julia_semantics.items).
const PY_ITEMS = lazy_pyobject(() -> request(OP_GETATTR | BY_HANDLE, (SEMANTICS, "items")))

# The modules every call uses, found again in each new host.
const SEMANTICS = lazy_pyobject(() -> request(OP_IMPORT | BY_HANDLE, ("devplace.bridge.julia_semantics",)))
const TF_MODULE = lazy_pyobject(() -> request(OP_GETATTR | BY_HANDLE, (DP_MODULE, "tf")))
const DP_MODULE = lazy_pyobject(() -> request(OP_IMPORT | BY_HANDLE, ("devplace",)))

"`op.name`, `.type` or `.device` (`s`) of the op a device function runs for, else nothing."
function op_info(o::PyObject, s::Symbol)
    gen, id, info = OP_INFO[]
    (gen == getfield(o, :gen) && id == getfield(o, :id)) || return nothing
    i = findfirst(==(s), (:name, :type, :device))
    return i === nothing ? nothing : op_field(info, i)
end
