# Type inference for the request path, cached when DevPlace is precompiled, so that the first
# call does not spend seconds compiling the bridge (benchmarks/bridge/startup.jl).

for T in (Tuple{}, Tuple{String}, Tuple{PyObject}, Tuple{PyObject,String},
          Tuple{PyObject,Tuple{}}, Tuple{PyObject,Tuple{Float64}}, Tuple{PyObject,Tuple{PyObject}},
          Tuple{PyObject,Tuple{PyObject,PyObject}}, Tuple{PyObject,Tuple{Float64},PyDict},
          Tuple{PyObject,Tuple{String,PyObject,PyObject}})
    precompile(request, (UInt8, T))
    precompile(roundtrip, (UInt8, T))
    precompile(encode!, (Encoder, Host, T))
    precompile(encode!, (Encoder, InProcess, T))
    precompile(exchange, (InProcess, UInt8, T))
end
precompile(host, ())
precompile(spawn_host, ())
precompile(await_hello, (Host,))
precompile(wait_reply, (Host, UInt32))
precompile(serve_callback, (Host, UInt32, Vector{UInt8}))
precompile(send, (Host, UInt8, UInt32, Vector{Any}))
precompile(decode_value, (Vector{UInt8}, Host))
precompile(decode_value, (Vector{UInt8},))
precompile(read_frame, (FramePipes,))
precompile(write_frame, (FramePipes, UInt8, UInt32, Vector{Any}))
precompile(python_error, (Host, Tuple{String,String,String,Nothing}))
precompile(prestart_host, ())
precompile(python_command, ())
precompile(host_lost!, (Host,))
precompile(take_answer, (InProcess, Ptr{Cvoid}))
precompile(julia_entry, (Ptr{Cvoid}, Ptr{Cvoid}))
precompile(julia_on_op, (Ptr{Cvoid}, Ptr{Ptr{Cvoid}}, Cssize_t))
precompile(run_fetch, (InProcess, UInt64, UInt64))
precompile(run_callback, (InProcess, Vector{UInt8}, Encoder))
