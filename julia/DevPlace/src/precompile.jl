# The request path compiled ahead of the first call: its type inference cached when DevPlace is
# precompiled, and in process its native code made while TensorFlow loads on Python's thread
# (Julia 1.5 caches no native code: the first call would spend a second or two compiling the
# bridge after TensorFlow's import instead of beside it; benchmarks/bridge/startup.jl).

"""
    precompile_bridge(peers = (Host, InProcess), go_on = () -> true) -> Vector

Compile the first calls most programs make (`constant`, `Session`, `run`), then the request
path for the peer types `peers`, each method while `go_on()`, asked before it, says so (in
process: while TensorFlow loads, with a `yield` so that a REPL stays responsive). Returns the
signatures that named no method (none, unless one was renamed).
"""
function precompile_bridge(peers = (Host, InProcess), go_on = () -> true)
    # a program's first calls, with what they reach by dynamic dispatch, first
    sigs = Any[(constant, (Float64,)), (Session, ()), (run, (PyObject, PyObject)), (sin, (PyObject,)),
               (dpfunction, (String,)), (getattribute, (PyObject, String)),
               (merge, (NamedTuple{(),Tuple{}}, Dict{Symbol,Any}))]
    for x in (UInt8, UInt64, Float64)  # a tag and a value, as `encode!` writes them
        push!(sigs, (write, (IOBuffer, UInt8, x)))
    end
    foreach(P -> push!(sigs, (encode!, (Encoder, P, typeof(pairs((dtype = Float64,)))))), peers)
    for T in (Tuple{}, Tuple{String}, Tuple{PyObject}, Tuple{PyObject,String},
              Tuple{PyObject,Tuple{}}, Tuple{PyObject,Tuple{Float64}},
              Tuple{PyObject,Tuple{PyObject}}, Tuple{PyObject,Tuple{PyObject,PyObject}},
              Tuple{PyObject,Tuple{Float64},PyDict}, Tuple{PyObject,Tuple{String,PyObject,PyObject}},
              Tuple{PyObject,Tuple{Float64},typeof(pairs((dtype = Float64,)))})
        push!(sigs, (request, (UInt8, T)), (roundtrip, (UInt8, T)))
        foreach(P -> push!(sigs, (encode!, (Encoder, P, T))), peers)
        InProcess in peers && push!(sigs, (exchange, (InProcess, UInt8, T)))
    end
    push!(sigs, (release_later, (PyObject,)))
    Host in peers && append!(sigs, (
        (host, ()), (spawn_host, ()), (await_hello, (Host,)), (wait_reply, (Host, UInt32)),
        (serve_callback, (Host, UInt32, Vector{UInt8})), (send, (Host, UInt8, UInt32, Vector{Any})),
        (decode_value, (Vector{UInt8}, Host)), (decode_value, (Vector{UInt8},)),
        (read_frame, (FramePipes,)), (write_frame, (FramePipes, UInt8, UInt32, Vector{Any})),
        (python_error, (Host, Tuple{String,String,String,Nothing})), (prestart_host, ()),
        (python_command, ()), (host_lost!, (Host,))))
    InProcess in peers && append!(sigs, (
        (take_answer, (InProcess, Ptr{Cvoid})), (julia_entry, (Ptr{Cvoid}, Ptr{Cvoid})),
        (julia_on_op, (Ptr{Cvoid}, Ptr{Ptr{Cvoid}}, Cssize_t)),
        (run_fetch, (InProcess, UInt64, UInt64)), (run_callback, (InProcess, Vector{UInt8}, Encoder)),
        (answered, (InProcess, UInt8, PyObject)), (answered, (InProcess, UInt8, Float64)),
        (encode!, (Encoder, InProcess, Type{Float64})), (host_pid, ())))
    missed = Any[]
    for (f, types) in sigs
        go_on() || break
        precompile(f, types) || push!(missed, (f, types))
    end
    return missed
end

precompile_bridge()
