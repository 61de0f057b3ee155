# libpython in Julia's own process: finding it, loading it, and the few C API calls the
# in-process transport makes (inprocess.jl). Every call that touches Python objects is made
# holding the GIL (`with_gil`); the pointers are looked up once, when libpython is loaded.

# dlopen's flags (Linux's values; macOS's RTLD_GLOBAL is 0x8). Libdl is not a dependency: a
# stdlib in Julia 1.5 that the package would have to declare.
const RTLD_NOW = Cint(2)
const RTLD_GLOBAL = Sys.islinux() ? Cint(0x100) : Cint(0x8)

"""
    PythonFacts

What the chosen interpreter says of itself (`python_facts`): its shared library, its prefix (where
its standard library lives), its version, and Python code that gives an interpreter started in
Julia's process the same `sys.executable` (`set_executable`) and `sys.path` (`set_path`, the
repository's `python/` first), written by the interpreter itself (Julia builds no Python
literals).
"""
struct PythonFacts
    executable::String
    libpython::String  # "" when the interpreter has no shared libpython
    home::String
    version::String
    set_executable::String
    set_path::String
end

const FACTS_SCRIPT = """
import os, sys, sysconfig
lib = ""
if sysconfig.get_config_var("Py_ENABLE_SHARED"):
    name = sysconfig.get_config_var("LDLIBRARY") or ""
    for folder in (sysconfig.get_config_var("LIBDIR") or "", os.path.join(sys.base_prefix, "lib")):
        if name and os.path.isfile(os.path.join(folder, name)):
            lib = os.path.join(folder, name)
            break
path = ([sys.argv[1]] if sys.argv[1] else []) + [p for p in sys.path[1:] if p]
facts = [sys.executable, lib, sys.base_prefix, "%d.%d.%d" % sys.version_info[:3]]
code = ["sys.executable = " + ascii(sys.executable), "sys.path[:] = " + ascii(path)]
print("\\0".join(facts + code))
"""

"""
    python_facts(py, folder) -> PythonFacts

Ask the interpreter `py` about itself, `folder` (\"\": none) first on its path; a `HostError`
naming it if it does not answer (what it said is on stderr). A plain `read` of one line split
once: this comes before TensorFlow's import can begin, and Julia compiles little for it.
"""
function python_facts(py::String, folder::String)
    out = try
        read(Cmd([py, "-c", FACTS_SCRIPT, folder]), String)
    catch
        ""
    end
    fields = split(chomp(out), '\0')
    length(fields) == 6 || throw(HostError(string(
        "could not ask the Python interpreter `", py, "` about itself (what it said, if ",
        "anything, is above). ", HINT_PYTHON)))
    return PythonFacts(fields...)
end

"""
    unwinder_library() -> String

The file of the `_Unwind_RaiseException` that C++ exceptions thrown in this process will use
(what the global symbol scope finds first), or "" if none is loaded.
"""
function unwinder_library()
    sym = ccall(:dlsym, Ptr{Cvoid}, (Ptr{Cvoid}, Cstring), C_NULL, "_Unwind_RaiseException")
    sym == C_NULL && return ""
    info = Ref{NTuple{4,Ptr{Cvoid}}}((C_NULL, C_NULL, C_NULL, C_NULL))
    ccall(:dladdr, Cint, (Ptr{Cvoid}, Ptr{NTuple{4,Ptr{Cvoid}}}), sym, info) == 0 && return ""
    name = info[][1]
    return name == C_NULL ? "" : unsafe_string(Ptr{UInt8}(name))
end

const PY_NONE = Ref(C_NULL)
const PY_SET_PROGRAM_NAME = Ref(C_NULL)  # where this libpython still has it (deprecated in 3.11)
const PY_TRUE = Ref(C_NULL)
const PY_FLOAT_TYPE = Ref(C_NULL)
const PY_LONG_TYPE = Ref(C_NULL)
const PY_BOOL_TYPE = Ref(C_NULL)
const PY_TUPLE_TYPE = Ref(C_NULL)
const PY_LIST_TYPE = Ref(C_NULL)
const PY_STR_TYPE = Ref(C_NULL)
const PY_RUNTIME_ERROR = Ref(C_NULL)

const API_NAMES = (:Py_InitializeEx, :Py_IsInitialized, :PyEval_SaveThread,
    :PyEval_RestoreThread, :PyGILState_Ensure, :PyGILState_Release, :PyRun_SimpleString,
    :PyImport_ImportModule, :PyObject_GetAttrString, :PyObject_CallOneArg, :PyObject_CallObject,
    :PyTuple_New, :PyTuple_SetItem, :PyTuple_GetItem, :PyTuple_Size, :PyBytes_AsString, :PyBytes_Size,
    :PyByteArray_FromStringAndSize, :PyByteArray_AsString, :PyLong_FromLongLong,
    :PyFloat_FromDouble, :PyUnicode_AsUTF8, :PyObject_Str, :Py_IncRef,
    :Py_DecRef, :PyErr_Fetch, :PyErr_Occurred, :PyErr_SetString, :PyCFunction_NewEx,
    :PyObject_Vectorcall, :PyFloat_AsDouble, :PyLong_AsLongLong, :PyUnicode_AsUTF8AndSize,
    :PyUnicode_FromStringAndSize, :PyObject_GetBuffer, :PyBuffer_Release, :PyBool_FromLong,
    :PyList_New, :PyList_SetItem, :PyList_GetItem)

"Function pointers of the loaded libpython: a field per name in `API_NAMES`."
const PYAPI = NamedTuple{API_NAMES}(ntuple(_ -> Ref(C_NULL), length(API_NAMES)))

# Inlined with its literal name, the lookup folds to one load (no hashing per C call).
@inline api(name::Symbol) = getfield(PYAPI, name)[]

"""
    load_libpython(path)

`dlopen` libpython into the global symbol scope (Python's extension modules link against its
symbols) and look up the API.
"""
function load_libpython(path::String)
    lib = ccall(:dlopen, Ptr{Cvoid}, (Cstring, Cint), path, RTLD_NOW | RTLD_GLOBAL)
    lib == C_NULL && throw(HostError(string("cannot load ", path, ": ",
                                            unsafe_string(ccall(:dlerror, Cstring, ())))))
    symbol(name) = (p = ccall(:dlsym, Ptr{Cvoid}, (Ptr{Cvoid}, Cstring), lib, name);
                    p == C_NULL ? throw(HostError("$path has no $name")) : p)
    for name in API_NAMES
        getfield(PYAPI, name)[] = symbol(string(name))
    end
    PY_SET_PROGRAM_NAME[] =  # C_NULL where this libpython no longer has it
        ccall(:dlsym, Ptr{Cvoid}, (Ptr{Cvoid}, Cstring), lib, "Py_SetProgramName")
    PY_NONE[] = symbol("_Py_NoneStruct")
    PY_TRUE[] = symbol("_Py_TrueStruct")
    PY_FLOAT_TYPE[] = symbol("PyFloat_Type")
    PY_LONG_TYPE[] = symbol("PyLong_Type")
    PY_BOOL_TYPE[] = symbol("PyBool_Type")
    PY_TUPLE_TYPE[] = symbol("PyTuple_Type")
    PY_LIST_TYPE[] = symbol("PyList_Type")
    PY_STR_TYPE[] = symbol("PyUnicode_Type")
    PY_RUNTIME_ERROR[] = unsafe_load(Ptr{Ptr{Cvoid}}(symbol("PyExc_RuntimeError")))
    return nothing
end

"""
    with_gil(f)

Run `f()` holding Python's GIL (re-entrant: a callback from Python already holds it).
"""
function with_gil(f)
    state = ccall(api(:PyGILState_Ensure), Cint, ())
    try
        return f()
    finally
        ccall(api(:PyGILState_Release), Cvoid, (Cint,), state)
    end
end

py_decref(o::Ptr{Cvoid}) = o == C_NULL || ccall(api(:Py_DecRef), Cvoid, (Ptr{Cvoid},), o)
py_incref(o::Ptr{Cvoid}) = ccall(api(:Py_IncRef), Cvoid, (Ptr{Cvoid},), o)

"The pending Python exception as one line, cleared (\"\" if none)."
function take_py_error()
    ccall(api(:PyErr_Occurred), Ptr{Cvoid}, ()) == C_NULL && return ""
    t, v, tb = Ref(C_NULL), Ref(C_NULL), Ref(C_NULL)
    ccall(api(:PyErr_Fetch), Cvoid, (Ref{Ptr{Cvoid}}, Ref{Ptr{Cvoid}}, Ref{Ptr{Cvoid}}), t, v, tb)
    text = "unknown Python error"
    for o in (v[], t[])
        o == C_NULL && continue
        s = ccall(api(:PyObject_Str), Ptr{Cvoid}, (Ptr{Cvoid},), o)
        if s != C_NULL
            u = ccall(api(:PyUnicode_AsUTF8), Ptr{UInt8}, (Ptr{Cvoid},), s)
            u == C_NULL || (text = unsafe_string(u))
            py_decref(s)
            break
        end
    end
    foreach(py_decref, (t[], v[], tb[]))
    return text
end

"`o`, a new reference, or a `HostError` saying what `doing` failed with."
function checked(o::Ptr{Cvoid}, doing::AbstractString)
    o == C_NULL && throw(HostError(string("Python in Julia's process failed while ", doing, ": ",
                                          take_py_error())))
    return o
end

py_getattr(o::Ptr{Cvoid}, name::String) =
    checked(ccall(api(:PyObject_GetAttrString), Ptr{Cvoid}, (Ptr{Cvoid}, Cstring), o, name),
            "looking up `$name`")

py_import(name::String) =
    checked(ccall(api(:PyImport_ImportModule), Ptr{Cvoid}, (Cstring,), name), "importing $name")

"A new Python tuple of `items`, new references that it takes over."
py_tuple(items) = py_sequence(api(:PyTuple_New), api(:PyTuple_SetItem), items)

"A new Python list of `items`, new references that it takes over."
py_list(items) = py_sequence(api(:PyList_New), api(:PyList_SetItem), items)

function py_sequence(new::Ptr{Cvoid}, set::Ptr{Cvoid}, items)
    q = checked(ccall(new, Ptr{Cvoid}, (Cssize_t,), length(items)), "making a tuple or list")
    for (i, a) in enumerate(items)
        ccall(set, Cint, (Ptr{Cvoid}, Cssize_t, Ptr{Cvoid}), q, i - 1, a)
    end
    return q
end

"Call `f(args...)`; each argument a new reference that the call takes over."
function py_call(f::Ptr{Cvoid}, args::Ptr{Cvoid}...)
    t = py_tuple(args)
    r = ccall(api(:PyObject_CallObject), Ptr{Cvoid}, (Ptr{Cvoid}, Ptr{Cvoid}), f, t)
    py_decref(t)
    return r
end

"The type of Python object `o` (`Py_TYPE`: the field after the reference count)."
py_type(o::Ptr{Cvoid}) = unsafe_load(Ptr{Ptr{Cvoid}}(o + sizeof(Cssize_t)))

"Call `f(args...)` (vectorcall); the arguments stay the caller's."
py_vectorcall(f::Ptr{Cvoid}, args::NTuple{N,Ptr{Cvoid}}) where {N} =
    ccall(api(:PyObject_Vectorcall), Ptr{Cvoid}, (Ptr{Cvoid}, Ref{NTuple{N,Ptr{Cvoid}}}, Csize_t,
                                                  Ptr{Cvoid}), f, args, N, C_NULL)

py_int(x::Integer) = ccall(api(:PyLong_FromLongLong), Ptr{Cvoid}, (Clonglong,), x)
py_float(x::Real) = ccall(api(:PyFloat_FromDouble), Ptr{Cvoid}, (Cdouble,), x)

"A new Python `bytearray` holding `parts` (byte vectors and numeric arrays) one after another."
function py_bytearray(parts::Vector{Any}, first::UInt8)
    n = 1
    for p in parts
        n += nbytes(p)
    end
    b = checked(ccall(api(:PyByteArray_FromStringAndSize), Ptr{Cvoid}, (Ptr{UInt8}, Cssize_t),
                      C_NULL, n), "making a bytearray of $n bytes")
    dest = ccall(api(:PyByteArray_AsString), Ptr{UInt8}, (Ptr{Cvoid},), b)
    unsafe_store!(dest, first)
    at = 1
    for p in parts
        GC.@preserve p unsafe_copyto!(dest + at, Ptr{UInt8}(pointer(p)), nbytes(p))
        at += nbytes(p)
    end
    return b
end

"Python `str` `o` as a Julia `String` (a `WireError` if it is not one)."
function py_string(o::Ptr{Cvoid})
    n = Ref{Cssize_t}(0)
    p = ccall(api(:PyUnicode_AsUTF8AndSize), Ptr{UInt8}, (Ptr{Cvoid}, Ref{Cssize_t}), o, n)
    p == C_NULL && throw(WireError("expected a str from Python: " * take_py_error()))
    return unsafe_string(p, n[])
end

"""
    py_float_vector(o) -> Vector{Float64}

A copy of the float64 numbers of Python object `o` (a one-dimensional C-contiguous float64
numpy array), read through the buffer protocol.
"""
function py_float_vector(o::Ptr{Cvoid})
    view = zeros(UInt8, 128)  # a Py_buffer (80 bytes on 64-bit CPython)
    GC.@preserve view begin
        got = ccall(api(:PyObject_GetBuffer), Cint, (Ptr{Cvoid}, Ptr{UInt8}, Cint), o, view, 0)
        got == 0 || throw(WireError("expected an array from Python: " * take_py_error()))
        data = unsafe_load(Ptr{Ptr{UInt8}}(pointer(view)))
        bytes = unsafe_load(Ptr{Cssize_t}(pointer(view) + 2 * sizeof(Ptr{Cvoid})))
        v = Vector{Float64}(undef, bytes ÷ sizeof(Float64))
        # byte by byte: numpy's array may start anywhere (a view into a message is unaligned)
        GC.@preserve v unsafe_copyto!(Ptr{UInt8}(pointer(v)), data, sizeof(v))
        ccall(api(:PyBuffer_Release), Cvoid, (Ptr{UInt8},), view)
        return v
    end
end

"A new Python `str` of `s`."
py_str(s::String) = checked(ccall(api(:PyUnicode_FromStringAndSize), Ptr{Cvoid},
                                  (Ptr{UInt8}, Cssize_t), s, sizeof(s)), "making a str")

"The bytes of Python `bytes` object `o` (valid while `o` lives), without a copy."
function bytes_of(o::Ptr{Cvoid})
    ptr = ccall(api(:PyBytes_AsString), Ptr{UInt8}, (Ptr{Cvoid},), o)
    ptr == C_NULL && throw(WireError("expected bytes from Python: " * take_py_error()))
    n = ccall(api(:PyBytes_Size), Cssize_t, (Ptr{Cvoid},), o)
    return unsafe_wrap(Array, ptr, n)
end

tuple_item(t::Ptr{Cvoid}, i::Integer) =
    ccall(api(:PyTuple_GetItem), Ptr{Cvoid}, (Ptr{Cvoid}, Cssize_t), t, i)  # borrowed
list_item(l::Ptr{Cvoid}, i::Integer) =
    ccall(api(:PyList_GetItem), Ptr{Cvoid}, (Ptr{Cvoid}, Cssize_t), l, i)  # borrowed

# A Python builtin function whose C body is a Julia function (METH_O: one argument), as
# PythonCall.jl makes its callbacks: Python calls it as fast as any builtin.
struct PyMethodDef
    name::Ptr{UInt8}
    meth::Ptr{Cvoid}
    flags::Cint
    doc::Ptr{UInt8}
end

const METH_O = Cint(0x0008)
const METH_FASTCALL = Cint(0x0080)

"""
    py_builtin(name, fptr, flags) -> Ptr

A Python callable whose body is C function `fptr`: `fptr(self, arg)` with `METH_O` (one
argument), `fptr(self, args, nargs)` with `METH_FASTCALL` (its definition lives as long as the
process).
"""
function py_builtin(name::String, fptr::Ptr{Cvoid}, flags::Cint)
    def = Ptr{PyMethodDef}(Libc.malloc(sizeof(PyMethodDef)))
    cname = ccall(:strdup, Ptr{UInt8}, (Cstring,), name)
    unsafe_store!(def, PyMethodDef(cname, fptr, flags, C_NULL))
    return checked(ccall(api(:PyCFunction_NewEx), Ptr{Cvoid}, (Ptr{PyMethodDef}, Ptr{Cvoid},
                                                                Ptr{Cvoid}), def, C_NULL, C_NULL),
                   "making the Julia callback")
end
