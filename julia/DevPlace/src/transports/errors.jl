# Python exceptions in Julia: `PyError` and how it shows. The host makes the text short
# (python/devplace/bridge/error_text.py): the message with TensorFlow's stack listings cut to
# the frames worth reading, a hint where devplace knows the usual cause, and only the Python
# frames outside the bridge, devplace and TensorFlow. Here the Julia stack trace keeps only the
# caller's own frames. `DevPlace.last_error()` prints the full text; `ENV["DEVPLACE_DEBUG"]`
# set before `using DevPlace` shows everything, the bridge's own frames included.

"""
    PyError

A Python exception raised in the host: `type` (qualified name), `message` (with a hint where
devplace knows one), `traceback` (the Python frames outside the bridge, devplace and
TensorFlow; all but the bridge's own with `ENV["DEVPLACE_DEBUG"]` set when the host started).
`DevPlace.last_error()` prints the latest one in full. If a Julia function called from Python
threw, `julia_exception` is that exception and `julia_backtrace` its stack trace; a `PyError`
thrown inside such a function comes back as itself.
"""
struct PyError <: Exception
    type::String
    message::String
    traceback::String
    julia_exception::Any
    julia_backtrace::String
end

PyError(type::String, message::String, traceback::String, cause = nothing) =
    PyError(type, message, traceback, cause, "")

debugging() = !(get(ENV, "DEVPLACE_DEBUG", "") in ("", "0"))

function Base.showerror(io::IO, e::PyError)
    if e.julia_exception === nothing
        print(io, "PyError: ", e.type, ": ", e.message)
    else
        print(io, "PyError: a Julia function called from Python threw:\n")
        showerror(io, e.julia_exception)
        isempty(e.julia_backtrace) || print(io, "\nStacktrace:\n", rstrip(e.julia_backtrace))
    end
    isempty(e.traceback) || print(io, "\n\nPython ", rstrip(e.traceback))
end

# The REPL and uncaught errors show `err` with its stack trace `bt`: only the frames below
# DevPlace's own (the caller's code), all of them with DEVPLACE_DEBUG.
function Base.showerror(io::IO, e::PyError, bt; backtrace = true)
    showerror(io, e)
    backtrace || return
    # showing an error must not throw: the whole trace if the caller's cannot be told apart
    frames = debugging() ? bt : try callers_frames(bt) catch; bt end
    Base.show_backtrace(io, frames)
end

const SOURCE_DIR = normpath(joinpath(@__DIR__, "..", ""))  # src/, with a trailing separator

"""
The frames of backtrace `bt` (instruction pointers, or frames already looked up as a
`LoadError` passes them on) below the last one in DevPlace's `src/`: the caller's.
"""
function callers_frames(bt)
    frames = StackTraces.StackFrame[]
    for ip in bt
        ip isa StackTraces.StackFrame ? push!(frames, ip) : append!(frames, StackTraces.lookup(ip))
    end
    own = findlast(f -> startswith(string(f.file), SOURCE_DIR), frames)
    return own === nothing ? frames : frames[own+1:end]
end
