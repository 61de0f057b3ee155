# `@pywith` (any Python context manager), the device scopes `cpu(i)`, `gpu(i)` and their
# shorthands `@cpu`, `@gpu`.
# The body runs in the caller's scope, not in a closure, so `global a = ...` works as written
# in the seeds and the value of the block is the value of its last expression.

"""
    pyenter(manager, file="", line=0)

Enter a Python context manager; returns what its `__enter__` returns. A device scope it opens
records `file:line` as where it was opened: a placement error names it for the ops made in it.
"""
pyenter(manager, file::String = "", line::Int = 0) = request(OP_ENTER, (manager, file, line))

"""
    pyexit(manager, err, backtrace=nothing) -> Bool

Leave a Python context manager. `err` is the Julia exception that ended the block (or
`nothing`); it reaches `__exit__` as a `JuliaError` (with `backtrace` as its traceback text).
Returns true if `__exit__` suppressed it. A manager whose host died in the block (e.g. the
block was interrupted, or it killed the host) is not left: that scope is gone with its host.
"""
function pyexit(manager, err, backtrace = nothing)
    in_live_host(manager) || return false  # the host died in the block, the scope with it
    err === nothing && return request(OP_EXIT, (manager, nothing))::Bool
    bt = backtrace === nothing ? "" : sprint(Base.show_backtrace, backtrace)
    info = (string(typeof(err)), sprint(showerror, err), bt)
    return request(OP_EXIT, (manager, info))::Bool
end

"""
    @pywith manager begin ... end
    @pywith manager as x begin ... end

Run the block inside the Python context manager `manager` (e.g. `tf.device("/cpu:0")`), like
Python's `with`; the value is the block's value. A Julia exception in the block reaches
`__exit__` and is rethrown unless `__exit__` suppresses it; `return`, `break` and `continue` in
the block leave the manager as well. The block is a `try` block: at top level write
`global a = ...` (as the seeds do); inside a function, names first assigned in the block are
local to it, so declare them `local a` before it or use the block's value.
"""
macro pywith(args...)
    if length(args) == 2
        return pywith_block(esc(args[1]), nothing, args[2], __source__)
    elseif length(args) == 4 && args[2] === :as
        return pywith_block(esc(args[1]), args[3], args[4], __source__)
    end
    got = isempty(args) ? "nothing" : string(length(args), " arguments")
    throw(ArgumentError(string("@pywith needs a context manager and a block, got ", got,
                               ". Hint, usage: @pywith tf.device(\"/cpu:0\") begin ... end, ",
                               "or @pywith manager as x begin ... end")))
end

# The body runs in a `try` whose `finally` leaves the manager, so `return`, `break` and
# `continue` inside the block leave it too; an exception goes to `__exit__` instead (once).
# `source` is where the block is written (the macro's `__source__`), or an expression giving
# (file, line) when the block is a library's that runs on its caller's behalf.
function pywith_block(manager, var, body, source)
    bind = var === nothing ? nothing : :($(esc(var)) = value)
    site = source isa LineNumberNode ? (string(something(source.file, "")), source.line) : source
    quote
        local manager = $manager
        local value = $pyenter(manager, $site...)
        local failed = false
        try
            $bind
            $(esc(body))
        catch err
            failed = true
            $pyexit(manager, err, catch_backtrace()) || rethrow()
            nothing
        finally
            failed || $pyexit(manager, nothing)
        end
    end
end

"Where the code that called into DevPlace is, as (file, line): the first Julia frame after DevPlace's own."
function caller_site()
    inside = false
    for ip in backtrace(), frame in StackTraces.lookup(ip)
        own = startswith(string(frame.file), SOURCE_DIR)
        inside |= own
        inside && !own && !frame.from_c && return (string(frame.file), frame.line)
    end
    return ("", 0)
end

# `@pywith` in a DevPlace function that opens a scope for its caller (`device(f, spec)`): the
# scope says it was opened at the caller's line, not in DevPlace.
macro pywith_for_caller(manager, body)
    return pywith_block(esc(manager), nothing, body, :($caller_site()))
end

"""
    cpu(i=0) -> PyObject

A device scope for `/device:CPU:i` (a Python context manager, for `@pywith`).
"""
cpu(i = 0) = call_python(DP_CPU, "cpu", (i,), ())

"""
    gpu(i=0) -> PyObject

A device scope for `/device:GPU:i` (a Python context manager, for `@pywith`).
"""
gpu(i = 0) = call_python(DP_GPU, "gpu", (i,), ())

const DP_CPU = attribute(DP_MODULE, "cpu")
const DP_GPU = attribute(DP_MODULE, "gpu")

"The largest device index (TensorFlow's, as Python's `devplace.adapter.devices.MAX_INDEX`)."
const MAX_DEVICE_INDEX = 2^31 - 1

function device_index(kind::String, id)
    id isa Integer && !(id isa Bool) && 0 <= id <= MAX_DEVICE_INDEX && return Int(id)
    throw(ArgumentError(string("@", kind, " needs an integer device index from 0 to ",
                               MAX_DEVICE_INDEX, ", got ", summary_of(id), " (", typeof(id),
                               "). Hint: @", kind, " 1 begin ... end, or @", kind,
                               " i begin ... end with i::Int")))
end

function device_macro(kind::String, scope, args, source::LineNumberNode)
    if length(args) == 1
        id, body = 0, args[1]
    elseif length(args) == 2
        id, body = args
    else
        throw(ArgumentError("usage: @$kind [device_id] expr"))
    end
    return pywith_block(:($scope($device_index($kind, $(esc(id))))), nothing, body, source)
end

"""
    @cpu [device_id] expr

Place the ops (and variables) built in `expr` on `/device:CPU:device_id`. `device_id` is any
expression giving an integer from 0 to 2^31-1, evaluated when the block runs; it defaults to 0.
The scope belongs to the task running the block: other `@async` tasks are not placed by it.
"""
macro cpu(args...)
    device_macro("cpu", cpu, args, __source__)
end

"""
    @gpu [device_id] expr

Place the ops (and variables) built in `expr` on `/device:GPU:device_id`; `device_id` is any
expression giving an integer from 0 to 2^31-1 (default 0); the scope is the running task's.
Without a GPU, run the graph in a `Session(soft=true)` so TensorFlow falls back to the CPU.
"""
macro gpu(args...)
    device_macro("gpu", gpu, args, __source__)
end
