# The in-process transport: Python and TensorFlow in Julia's own process, called through
# libpython's C API (cpython.jl); python/devplace/bridge/transports/inprocess.py is the other end. The
# messages are the pipe transport's frame bodies, handed over as byte strings, so the meaning
# of every call (peer.py in Python, pyobject.jl here) is one for both transports; large arrays
# go by address instead of through a pipe or shared memory. The host process (host.jl) stays
# as the isolating transport, chosen with `set_transport(:process)` or
# `ENV["DEVPLACE_TRANSPORT"] = "process"`, and automatically, with one line saying why,
# wherever Python cannot run here (`refuse_inprocess!`).

"""
    InProcess

Python in Julia's own process, as the peer of DevPlace's calls (see `Peer`): the Python
`InProcess` object (`peer`) and its bound `request` and `release`.
"""
Base.@kwdef mutable struct InProcess <: Peer
    gen::Int
    pid::Int = getpid()
    alive::Bool = true
    seq::UInt32 = 0              # requests made (as the host's frames are numbered)
    functions::Dict{UInt64,Any} = Dict{UInt64,Any}()  # Julia functions Python holds, by id
    next_function::UInt64 = 0
    errors::Dict{UInt64,Any} = Dict{UInt64,Any}()  # (exception, backtrace text) thrown in callbacks
    next_error::UInt64 = 0
    interrupted::Bool = false    # a callback ended by Ctrl-C: the request it served throws too
    task::Int = 0                # the Julia task whose scopes Python has installed (0: none)
    lent::Vector{Int} = Int[]    # while an answer is decoded: its arrays' handles (0: copy)
    next_lent::Int = 0
    peer::Ptr{Cvoid}             # the Python peer and its methods Julia calls
    request::Ptr{Cvoid} = py_getattr(peer, "request")
    release::Ptr{Cvoid} = py_getattr(peer, "release")
    run_fetch::Ptr{Cvoid} = py_getattr(peer, "run_fetch")
end

const TRANSPORT = Ref(:auto)  # see `set_transport`
"Why Python cannot run in this process (\"\" while nothing says it cannot)."
const REFUSED = Ref("")
const PY_STARTED = Ref(false)
const PROGRAM_NAME = Ref{Vector{Cwchar_t}}()  # `Py_SetProgramName`'s, alive as long as Python
const PY_STARTUP = Ref(C_NULL)  # devplace.bridge.transports.startup
const PY_LOADING = Ref(Ptr{Int8}(0))  # 1 while Python's thread imports, then 0 (`loading_flag`)
const PY_LOAD_STARTED = Ref(0.0)  # when that import began (`time()`)
const PY_MODULE = Ref(C_NULL)  # devplace.bridge.transports.inprocess (once TensorFlow has loaded)
const PY_JULIA = Ref(C_NULL)   # `julia_entry` as a Python builtin
const PY_JULIA_ON_OP = Ref(C_NULL)  # `julia_on_op` as a Python builtin
const PY_JULIA_CALL = Ref(C_NULL)  # `julia_call` as a Python builtin

in_process_wanted() = TRANSPORT[] != :process && isempty(REFUSED[])

"""
    refuse_inprocess!(why)

Python cannot run in this process (`why`): from now on the host process serves, said once on
stderr; where `:inprocess` was asked for explicitly, an error now and on each start after
(`check_refused`: also where the start in the background found it).
"""
function refuse_inprocess!(why::AbstractString)
    REFUSED[] = why
    check_refused()
    println(stderr, "DevPlace: Python runs in a process of its own, not in Julia's: ", why,
            ". (ENV[\"DEVPLACE_TRANSPORT\"] = \"process\" chooses that without this line.)")
    return nothing
end

"Throw why Python cannot run in this process, where `:inprocess` was asked for explicitly."
function check_refused()
    TRANSPORT[] == :inprocess && !isempty(REFUSED[]) && throw(HostError(string(
        "DevPlace cannot run Python in Julia's process: ", REFUSED[], ". Hint: ",
        "DevPlace.set_transport(:process) (or ENV[\"DEVPLACE_TRANSPORT\"] = \"process\") ",
        "runs it in a process of its own.")))
    return nothing
end

"Why C++ exceptions cannot be thrown safely in this process, or nothing."
function unwinder_obstacle()
    lib = unwinder_library()
    (isempty(lib) || occursin("libgcc_s", basename(lib))) && return nothing
    return string("C++ exceptions would unwind through ", lib, ", not GCC's libgcc_s, and ",
                  "abort: start Julia with LD_PRELOAD=libgcc_s.so.1 (the project's ",
                  ".julia-runtime/julia does)")
end

"""
    start_python() -> Bool

Load and initialise libpython (once per Julia session) and start importing TensorFlow and
devplace on a Python thread; false (said why) where Python cannot run in this process.
"""
function start_python()
    PY_STARTED[] && return true
    isempty(REFUSED[]) || return false
    why = unwinder_obstacle()
    why === nothing || (refuse_inprocess!(why); return false)
    facts = python_facts(python_interpreter(), python_folder())
    if isempty(facts.libpython)
        refuse_inprocess!(string("`", facts.executable, "` (Python ", facts.version,
                                 ") has no shared libpython"))
        return false
    end
    try
        load_libpython(facts.libpython)
        init_python(facts)
    catch err
        refuse_inprocess!(string("starting ", facts.libpython, " failed: ", sprint(showerror, err)))
        return false
    end
    PY_STARTED[] = true
    return true
end

"""
    init_python(facts)

Start the loaded libpython as the interpreter `facts` describes starts: named as that program,
so that `site` finds a virtual environment as it does there (its own site-packages and `.pth`
files, `sys.prefix` the environment's, not those of the Python it was made from); then the
import of TensorFlow and devplace begins on Python's thread.
"""
function init_python(facts::PythonFacts)
    if ccall(api(:Py_IsInitialized), Cint, ()) == 0
        if PY_SET_PROGRAM_NAME[] != C_NULL  # Python finds its home from it, as that program does
            PROGRAM_NAME[] = Base.cconvert(Cwstring, facts.executable)  # Python reads it later
            ccall(PY_SET_PROGRAM_NAME[], Cvoid, (Ptr{Cwchar_t},), PROGRAM_NAME[])
            ccall(api(:Py_InitializeEx), Cvoid, (Cint,), 0)  # Julia keeps its signal handlers
        else
            had_home = get(ENV, "PYTHONHOME", nothing)
            ENV["PYTHONHOME"] = facts.home  # read once, while Python starts
            try
                ccall(api(:Py_InitializeEx), Cvoid, (Cint,), 0)
            finally
                had_home === nothing ? delete!(ENV, "PYTHONHOME") : (ENV["PYTHONHOME"] = had_home)
            end
        end
    else
        ccall(api(:PyGILState_Ensure), Cint, ())  # someone else started it: hold the GIL here too
    end
    keep_home = haskey(ENV, "PYTHONHOME") ? "" : "os.environ.pop('PYTHONHOME', None)\n"
    code = string("import os, sys\n", keep_home,
                  facts.set_executable, "\n",
                  facts.set_path, "\n",
                  "sys.argv = ['']\n",
                  "sys.stdout.reconfigure(line_buffering=True)\n",
                  "import devplace.bridge.transports.startup as s\n",
                  "s.load(['devplace.bridge.transports.inprocess', 'devplace.bridge.julia_semantics'])\n")
    ccall(api(:PyRun_SimpleString), Cint, (Cstring,), code) == 0 ||
        throw(HostError("setting up Python failed (its error is printed above)"))
    PY_LOAD_STARTED[] = time()
    PY_STARTUP[] = py_import("devplace.bridge.transports.startup")
    flag = module_call(PY_STARTUP[], "loading_flag", "finding the import's flag")
    PY_LOADING[] = Ptr{Int8}(UInt(ccall(api(:PyLong_AsLongLong), Clonglong, (Ptr{Cvoid},), flag)))
    py_decref(flag)
    # The GIL is taken for each call: given back before anything else, so that the import on
    # Python's thread is not held up while Julia compiles.
    ccall(api(:PyEval_SaveThread), Ptr{Cvoid}, ())
    return nothing
end

"""
    bind_transport(entries)

Once TensorFlow and devplace have loaded (the GIL held): the Python module of this transport,
and the builtins through which Python calls Julia, made of the C functions `entries`
(`julia_entry`, `julia_on_op`, `julia_call`).
"""
function bind_transport(entries::NTuple{3,Ptr{Cvoid}})
    PY_MODULE[] == C_NULL || return nothing
    PY_MODULE[] = py_import("devplace.bridge.transports.inprocess")
    PY_JULIA[] = py_builtin("julia", entries[1], METH_O)
    PY_JULIA_ON_OP[] = py_builtin("julia_on_op", entries[2], METH_FASTCALL)
    PY_JULIA_CALL[] = py_builtin("julia_call", entries[3], METH_FASTCALL)
    return nothing
end

"""
    prestart_inprocess()

Start Python and TensorFlow's import in the background (`prestart_host`), compile the bridge's
first calls meanwhile, and start the peer once TensorFlow has loaded; a reason not to run in
process shows now.
"""
function prestart_inprocess()
    if python_first()
        # the REPL stays responsive: other tasks run between methods
        COMPILE_BRIDGE[]((InProcess,), () -> (yield(); python_loading()))
        while python_loading()
            sleep(0.05)  # not Python's join: that would hold up Julia's other tasks
        end
    end
    return start_inprocess()  # the host process where Python cannot run here
end

"""
Is Python's thread still importing TensorFlow and devplace, within `START_TIMEOUT` of its start?
Read without the GIL: asking Python held Julia up to 0.1 s a time while the import held it,
0.15–0.3 s in all in a script's start.
"""
python_loading() =
    unsafe_load(PY_LOADING[]) != 0 && time() < PY_LOAD_STARTED[] + START_TIMEOUT[]

"""
    module_call(mod, name, doing, args...) -> PyObject*

`name(args...)` of Python module `mod` (the GIL held): its result, checked (`doing` names the
step in the error). The arguments are new references, taken by the call.
"""
function module_call(mod::Ptr{Cvoid}, name::String, doing::String, args::Ptr{Cvoid}...)
    f = py_getattr(mod, name)
    try
        return checked(py_call(f, args...), doing)
    finally
        py_decref(f)
    end
end

"""
Julia's work while TensorFlow loads on Python's thread: DevPlace's `precompile_bridge` (set by
its `__init__`), called with the peer types and a function that says whether to go on (asked
before each method). Julia 1.5 keeps no native code between sessions: compiled beside the
import, not after it; what the import leaves no time for compiles when first called, or, after
a start in the background, between the user's calls (`prestart_host`).
"""
const COMPILE_BRIDGE = Ref{Function}((peers, go_on) -> nothing)

"""
    start_inprocess() -> Peer

The in-process peer once TensorFlow and devplace are loaded (at most `START_TIMEOUT[]`
seconds), or a host process where Python cannot run here (said why).
"""
function start_inprocess()
    python_first() || return Base.invokelatest(spawn_host)
    return Base.invokelatest(connect_inprocess)
end

"""
    python_first() -> Bool

`start_python()`, compiled and run before what its caller does next: Julia compiles the methods
a method calls before it runs it, and compiling the peer's start first held TensorFlow's import
back by 0.2 s.
"""
python_first() = Base.invokelatest(start_python)::Bool

"The in-process peer, compiled while TensorFlow loads (`start_inprocess`)."
function connect_inprocess()
    entries = (julia_entry_pointer(), julia_on_op_pointer(), julia_call_pointer())  # compiled now
    python_loading() && COMPILE_BRIDGE[]((InProcess,), python_loading)  # a script's first call
    why = with_gil() do
        r = module_call(PY_STARTUP[], "ready", "loading TensorFlow", py_float(START_TIMEOUT[]))
        text = r == PY_NONE[] ? nothing : unsafe_string(ccall(api(:PyUnicode_AsUTF8), Ptr{UInt8},
                                                              (Ptr{Cvoid},), r))
        py_decref(r)
        text
    end
    why === nothing || (refuse_inprocess!(string("TensorFlow did not load in Julia's process (",
                                                 why, ")")); return spawn_host())
    GENERATION[] += 1
    h = with_gil() do
        bind_transport(entries)
        builtins = (PY_JULIA[], PY_JULIA_ON_OP[], PY_JULIA_CALL[])
        foreach(py_incref, builtins)  # the argument tuple takes these
        peer = module_call(PY_MODULE[], "start", "starting the peer", builtins..., py_int(BIG_PART))
        InProcess(gen = GENERATION[], peer = peer)
    end
    take_releases(h.gen)
    HOST[] = h
    return h
end

function host_lost!(h::InProcess; wait::Bool = true)
    h.alive || return nothing
    h.alive = false
    HOST[] === h && (HOST[] = nothing)
    with_gil() do
        reset = py_getattr(h.peer, "reset")
        py_decref(py_call(reset))  # the objects held for Julia go now
        foreach(py_decref, (reset, h.request, h.release, h.run_fetch, h.peer))
    end
    empty!(h.functions)
    empty!(h.errors)
    return nothing
end

"Julia exits: Python's exit functions run now, while Julia's IO still works."
function finish_python()
    PY_STARTED[] || return nothing
    with_gil() do
        finish = py_getattr(PY_STARTUP[], "finish")
        py_decref(py_call(finish))  # its exit functions say what failed in them
        py_decref(finish)
    end
    return nothing
end

"""
    shared_array(h::InProcess, T, dims, "", address, order)

The array Python sent by address (alive until its answer is released): column-major (`order`
0) or row-major (1, a numpy array as TensorFlow returns it, transposed in a copy). One that
Python lent (nothing else refers to it: a fetch's result) is used where it is, without a copy,
and released in Python when Julia collects it; it cannot be resized (`copy` it first).
Others are copied.
"""
function shared_array(h::InProcess, ::Type{T}, dims::Tuple, path::String, offset::UInt64,
                      stamp::UInt64) where {T}
    isempty(path) || throw(WireError("in process, arrays come by address, not from $path"))
    p = Ptr{T}(UInt(offset))
    k = h.next_lent += 1
    id = k <= length(h.lent) ? h.lent[k] : 0
    if stamp == 0 && id != 0
        h.lent[k] = 0  # taken: its release is the array's now
        a = unsafe_wrap(Array, p, dims; own = false)
        gen = h.gen
        lent_pressure!(sizeof(a))
        return finalizer(_ -> queue_release(gen, UInt64(id)), a)
    end
    stamp == 0 && return copy(unsafe_wrap(Array, p, dims))
    n = length(dims)
    return permutedims(unsafe_wrap(Array, p, reverse(dims)), ntuple(i -> n + 1 - i, n))
end

"""
    lent_pressure!(bytes)

Julia's collector does not see the memory of the arrays Python lent (numpy's), so it would not
run for them and they would pile up: after `LENT_GC_BYTES` of them, a quick collection frees
those no longer used (and Python frees their memory at the next call). The same for arrays
Python gave (`given_array`): the collector counts those, but its own schedule lets them pile up
and collecting them then costs more than collecting often (8 MB fetches in the benchmark's
process: 7 collections of 1.3 ms per 60 fetches on its schedule, 30 of 0.35 ms at 16 MiB).
"""
function lent_pressure!(bytes::Int)
    LENT_SINCE_GC[] += bytes
    LENT_SINCE_GC[] < LENT_GC_BYTES && return
    LENT_SINCE_GC[] = 0
    GC.gc(false)
    return
end

const LENT_GC_BYTES = 1 << 24
const LENT_SINCE_GC = Ref(0)

function flush_releases(h::InProcess)
    ids = take_releases(h.gen)
    isempty(ids) && return
    body = encode_value(ids)
    b = checked(ccall(api(:PyByteArray_FromStringAndSize), Ptr{Cvoid}, (Ptr{UInt8}, Cssize_t),
                      body, length(body)), "sending released handles")
    r = ccall(api(:PyObject_CallOneArg), Ptr{Cvoid}, (Ptr{Cvoid}, Ptr{Cvoid}), h.release, b)
    py_decref(b)
    py_decref(checked(r, "releasing handles"))
    return
end

function exchange(h::InProcess, op::UInt8, args::Tuple)
    enc = encode_request(h, op, args, Encoder(refer = true))
    body = take!(enc.buf)
    h.seq += UInt32(1)
    kind, value = with_gil() do
        flush_releases(h)
        frame = checked(ccall(api(:PyByteArray_FromStringAndSize), Ptr{Cvoid},
                              (Ptr{UInt8}, Cssize_t), body, length(body)), "sending a request")
        r = GC.@preserve enc ccall(api(:PyObject_CallOneArg), Ptr{Cvoid}, (Ptr{Cvoid}, Ptr{Cvoid}),
                                   h.request, frame)
        py_decref(frame)
        take_answer(h, checked(r, string("answering a `", op_name(op), "` request")))
    end
    return answered(h, kind, value)
end

"""
    run_fetch(h::InProcess, sess_id, fetch_ids, feeds)

`run(sess, fetches, feeds...)` as one direct call of Python's `InProcess.run_fetch`:
`fetch_ids` one tensor's or op's handle id, or a vector or tuple of them (the answer then a
vector, as narrow as decoding makes it, or a tuple); `feeds` placeholders' handle ids `=>`
values that go without a message (`direct_feed`; arrays are read where they are). No message
for the request, none for an answer of nothing, Float64, Int64 or Bool values (read with the C
API); other answers as `exchange`'s.
"""
function run_fetch(h::InProcess, sess_id::UInt64, fetch_ids::Union{UInt64,Vector{UInt64},Tuple},
                   feeds::Tuple = ())
    h.seq += UInt32(1)
    kind, value = with_gil() do
        flush_releases(h)
        s = py_int(sess_id)
        f = fetch_ids isa UInt64 ? py_int(fetch_ids) : fetch_ids isa Tuple ?
            py_tuple(map(py_int, fetch_ids)) : py_list(map(py_int, fetch_ids))
        if isempty(feeds)
            r = py_vectorcall(h.run_fetch, (s, f))
        else
            fd = py_tuple([o for (id, x) in feeds for o in (py_int(id), py_feed(x))])
            r = GC.@preserve feeds py_vectorcall(h.run_fetch, (s, f, fd))
            py_decref(fd)
        end
        py_decref(s)
        py_decref(f)
        checked(r, "answering a `run`")
        t = py_type(r)
        if t == PY_TUPLE_TYPE[]
            py_type(tuple_item(r, 0)) == PY_LONG_TYPE[] || return take_answer(h, r)
            return (REPLY, given_array(r))
        end
        try
            t == PY_LIST_TYPE[] || return (REPLY, plain_arg(r))
            n = length(fetch_ids)
            fetch_ids isa Tuple && return (REPLY, ntuple(i -> plain_arg(list_item(r, i - 1)), n))
            return (REPLY, plain_vector(r, n))
        finally
            py_decref(r)
        end
    end::Tuple{UInt8,Any}  # one tuple type, not a union of several: unpacked without a lookup
    return answered(h, kind, value)
end

"""
    direct_feed(x) -> Bool

Can `x`, a placeholder's value, go to Python in process without a message (`run_fetch`): a
Float64, Int64 or Bool, or an `Array` of a wire number type, read where it is.
"""
direct_feed(x::Union{Float64,Int64,Bool}) = true
direct_feed(x::Array{<:WireNumber}) = ndims(x) > 0
direct_feed(x) = false

"A new Python object of feed value `x` as `run_fetch` reads it (an array: code, address, shape)."
py_feed(x::Union{Float64,Int64,Bool}) = py_plain(x)
py_feed(a::Array{T}) where {T} =
    py_tuple((py_int(dtype_code(T)), py_int(UInt(pointer(a))), py_tuple(map(py_int, size(a)))))

"""
    given_array(r)

The array whose memory Python gave Julia (`numpy_memory.give`: `r` is its dtype code, address
and shape, released here): Julia's array owns that memory now, freed by Julia's collector
(`lent_pressure!`).
"""
function given_array(r::Ptr{Cvoid})
    try
        integer(o) = ccall(api(:PyLong_AsLongLong), Clonglong, (Ptr{Cvoid},), o)
        T = dtype_of(UInt8(integer(tuple_item(r, 0))))
        shape = tuple_item(r, 2)
        n = ccall(api(:PyTuple_Size), Cssize_t, (Ptr{Cvoid},), shape)
        dims = ntuple(i -> Int(integer(tuple_item(shape, i - 1))), n)
        a = unsafe_wrap(Array, Ptr{T}(UInt(integer(tuple_item(r, 1)))), dims; own = true)
        lent_pressure!(sizeof(a))
        return a
    finally
        py_decref(r)
    end
end

"`value` of an answer of `kind` (REPLY), or its error thrown (ERROR)."
function answered(h::InProcess, kind::UInt8, value)
    if kind == REPLY
        h.interrupted && (h.interrupted = false; throw(InterruptException()))
        return value
    end
    err = python_error(h, value)
    err isa InterruptException && (h.interrupted = false)
    throw(err)
end

"""
Decode the answer tuple `r` (released here): its kind and value; forget what Python released,
and release the lent arrays the value did not take.
"""
function take_answer(h::InProcess, r::Ptr{Cvoid})
    lent = tuple_item(r, 3)
    h.lent = lent == PY_NONE[] ? Int[] : Vector{Int}(decode_value(copy(bytes_of(lent))))
    h.next_lent = 0
    try
        bytes = bytes_of(tuple_item(r, 0))
        isempty(bytes) && protocol_failure(h, "an empty answer")
        value = decode_body(h, unsafe_wrap(Array, pointer(bytes) + 1, length(bytes) - 1))
        dropped = tuple_item(r, 2)
        if dropped != PY_NONE[]
            for id in decode_value(copy(bytes_of(dropped)))
                delete!(h.functions, UInt64(id))
            end
        end
        return bytes[1], value
    finally
        py_decref(r)
        for id in h.lent
            id == 0 || queue_release(h.gen, UInt64(id))
        end
        empty!(h.lent)
    end
end

"""
    julia_entry(self, arg) -> PyObject*

The C body of the Python builtin through which Python calls Julia functions: `arg` is a
CALLBACK body (bytes); the answer is a new `bytearray` (kind byte, then the REPLY or ERROR
body). Runs without the GIL, so Python's threads go on meanwhile; nothing escapes it but a
Python exception for a failure of the bridge itself.
"""
function julia_entry(self::Ptr{Cvoid}, arg::Ptr{Cvoid})::Ptr{Cvoid}
    try
        h = calling_peer()
        body = bytes_of(arg)
        kind, enc = without_gil(() -> run_callback(h, body, Encoder()))
        return py_bytearray(message_parts(enc), kind)
    catch err
        return bridge_failure(err)
    end
end

"The in-process peer a call from Python is made to."
function calling_peer()
    h = HOST[]
    h isa InProcess || throw(HostError("Python called Julia without an in-process peer"))
    return h
end

"`f()` with the GIL given back meanwhile (Python's threads go on while Julia works)."
function without_gil(f)
    saved = ccall(api(:PyEval_SaveThread), Ptr{Cvoid}, ())
    try
        return f()
    finally
        ccall(api(:PyEval_RestoreThread), Cvoid, (Ptr{Cvoid},), saved)
    end
end

"A failure of the bridge itself inside a call from Python: raised there as a RuntimeError."
function bridge_failure(err)
    message = try
        sprint(showerror, err)
    catch
        string(typeof(err))
    end
    ccall(api(:PyErr_SetString), Cvoid, (Ptr{Cvoid}, Cstring), PY_RUNTIME_ERROR[],
          "DevPlace.jl: " * message)
    return C_NULL
end

julia_entry_pointer() = @cfunction(julia_entry, Ptr{Cvoid}, (Ptr{Cvoid}, Ptr{Cvoid}))

"""
    julia_on_op(self, args, nargs) -> PyObject*

The C body of the Python builtin through which Python calls a Julia device function (the
most frequent callback: once per op built under it) without messages: `args` are the
function's id, its op's handle id and the op itself, whose name, type and device are read only
where the function asks (`LiveOp`). A `String` result comes back as a `str`; any other result
or an error as `julia_entry`'s answer (a `bytearray`).
"""
function julia_on_op(self::Ptr{Cvoid}, args::Ptr{Ptr{Cvoid}}, nargs::Cssize_t)::Ptr{Cvoid}
    try
        h = calling_peer()
        nargs == 3 || throw(WireError("a device function's call takes 3 arguments, got $nargs"))
        fid, op = (UInt64(ccall(api(:PyLong_AsLongLong), Clonglong, (Ptr{Cvoid},),
                                unsafe_load(args, i))) for i in 1:2)
        live = LiveOp(unsafe_load(args, 3))
        kind, result =
            without_gil(() -> call_function(h, fid, (make_handle(h, op),), (), live))::Tuple{UInt8,Any}
        kind == REPLY && result isa String && return py_str(result)
        encoded_kind, enc = without_gil(() -> encode_outcome(h, kind, result, Encoder()))
        return py_bytearray(message_parts(enc), encoded_kind)
    catch err
        return bridge_failure(err)
    end
end

"The op a device function runs for, held by Python while it runs: read where the function asks."
struct LiveOp
    op::Ptr{Cvoid}
end

const OP_FIELDS = ("name", "type", "device")

op_field(live::LiveOp, i::Int) = with_gil() do
    field = checked(ccall(api(:PyObject_GetAttrString), Ptr{Cvoid}, (Ptr{Cvoid}, Cstring),
                          live.op, OP_FIELDS[i]), string("reading the op's ", OP_FIELDS[i]))
    try
        return py_string(field)
    finally
        py_decref(field)
    end
end

julia_on_op_pointer() =
    @cfunction(julia_on_op, Ptr{Cvoid}, (Ptr{Cvoid}, Ptr{Ptr{Cvoid}}, Cssize_t))

"""
    julia_call(self, args, nargs) -> PyObject*

The C body of the Python builtin through which Python calls a Julia function without messages
when it has no keywords and only plain arguments (Python's `_plain_args`: None, bool, int,
float, str, one-dimensional float64 arrays): `args` are the function's id and those arguments,
read here as `run_callback` would decode them. A result of `nothing`, a `Float64`, `Int64`,
`Bool` or `String` comes back as Python's own; any other result or an error as
`julia_entry`'s answer (a `bytearray`).
"""
function julia_call(self::Ptr{Cvoid}, args::Ptr{Ptr{Cvoid}}, nargs::Cssize_t)::Ptr{Cvoid}
    try
        h = calling_peer()
        fid = UInt64(ccall(api(:PyLong_AsLongLong), Clonglong, (Ptr{Cvoid},), unsafe_load(args)))
        arg(i) = plain_arg(unsafe_load(args, i + 1))
        xs = nargs == 2 ? (arg(1),) : nargs == 3 ? (arg(1), arg(2)) : Tuple(map(arg, 1:nargs-1))
        kind, result = without_gil(() -> call_function(h, fid, xs, (), nothing))::Tuple{UInt8,Any}
        kind == REPLY && result isa PlainResult && return py_plain(result)
        encoded_kind, enc = without_gil(() -> encode_outcome(h, kind, result, Encoder()))
        return py_bytearray(message_parts(enc), encoded_kind)
    catch err
        return bridge_failure(err)
    end
end

julia_call_pointer() = @cfunction(julia_call, Ptr{Cvoid}, (Ptr{Cvoid}, Ptr{Ptr{Cvoid}}, Cssize_t))

"The results `julia_call` hands Python as Python's own objects."
const PlainResult = Union{Nothing,Float64,Int64,Bool,String}

"""
    plain_vector(r, n)

The `n` values of Python list `r`, each None, a float, an int or a bool (`run_fetch`'s answer
of several fetches), as the vector decoding makes of them (`narrow`: the element type joins
the types present), its element type found from the Python types without a widening copy.
"""
function plain_vector(r::Ptr{Cvoid}, n::Int)
    present = 0
    for i in 0:n-1
        o = list_item(r, i)
        t = py_type(o)
        present |= o == PY_NONE[] ? 1 : t == PY_FLOAT_TYPE[] ? 2 : t == PY_LONG_TYPE[] ? 4 : 8
    end
    v = similar(PLAIN_VECTORS[present + 1], n)
    for i in 1:n
        v[i] = plain_arg(list_item(r, i - 1))
    end
    return v
end

# By the set of types present (bit k - 1 for the k-th of `PLAIN_TYPES`), an empty vector of the
# element type `narrow` makes (`similar` of it is fast; making `Vector{T}` of a `T` known only at
# run time looks the type up: 10 µs for a union).
const PLAIN_TYPES = (Nothing, Float64, Int64, Bool)
const PLAIN_VECTORS = [Vector{mask == 0 ? Union{} : reduce(Base.promote_typejoin,
                       [T for (k, T) in enumerate(PLAIN_TYPES) if mask & (1 << (k - 1)) != 0])}()
                       for mask in 0:(1 << length(PLAIN_TYPES)) - 1]

"A plain Python object (`julia_call`'s argument, `run_fetch`'s value) as `decode_value` gives it."
function plain_arg(o::Ptr{Cvoid})
    o == PY_NONE[] && return nothing
    t = py_type(o)
    t == PY_FLOAT_TYPE[] && return ccall(api(:PyFloat_AsDouble), Cdouble, (Ptr{Cvoid},), o)
    t == PY_BOOL_TYPE[] && return o == PY_TRUE[]
    t == PY_LONG_TYPE[] && return Int64(ccall(api(:PyLong_AsLongLong), Clonglong, (Ptr{Cvoid},), o))
    t == PY_STR_TYPE[] && return py_string(o)
    return py_float_vector(o)
end

"A new Python object of a plain result."
function py_plain(x::PlainResult)
    # one method, not one per type: a value of the union is not dispatched on at run time
    x === nothing && return (py_incref(PY_NONE[]); PY_NONE[])
    x isa Float64 && return py_float(x)
    x isa Int64 && return py_int(x)
    x isa Bool && return ccall(api(:PyBool_FromLong), Ptr{Cvoid}, (Clong,), x)
    return py_str(x::String)
end
