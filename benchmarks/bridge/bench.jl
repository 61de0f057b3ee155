# DevPlace.jl bridge benchmarks.
#
#     julia --project=julia/DevPlace benchmarks/bridge/bench.jl [iterations]
#
# Round-trip time per call; graph-building ops/s from Julia and, interleaved in the same run,
# from Python inside the host (graph_build.py, the same graph); the cost per op of a Julia and
# of a Python device function; MB/s for a 100 MB array each way. Every figure is the best of 5
# runs (the machine is shared). `DEVPLACE_SPIN_US=0` measures the bridge without spinning.
using DevPlace
const D = DevPlace

best(f, runs = 5) = minimum(f() for _ in 1:runs)

function per_call(f, n)
    t = time_ns()
    for _ in 1:n
        f()
    end
    return (time_ns() - t) / n / 1e3  # µs
end

function build(n)
    tf.reset_default_graph()
    return build_in_scope(n)
end

function build_in_scope(n)
    graph = tf.get_default_graph()
    x = constant(1.0)
    before = length(graph.get_operations())
    t = time_ns()
    for _ in 1:n
        x = sin(x) * 0.5 + 1.0
    end
    elapsed = (time_ns() - t) / 1e9
    return elapsed / (length(graph.get_operations()) - before)  # s per op
end

on_cpu(op) = "/device:CPU:0"

function build_with_device_function(n)
    tf.reset_default_graph()
    @pywith tf.device(on_cpu) begin
        build_in_scope(n)
    end
end

function main(n)
    D.host()  # start the host outside the timings
    obj = pybuiltin("object")()
    len = pybuiltin("len")
    per_call(() -> D.request(D.OP_ECHO, (1,)), 1000)
    println("round trip, echo of an Int:        ", round(best(() -> per_call(() -> D.request(D.OP_ECHO, (1,)), 5000)), digits = 1), " us")
    println("round trip, attribute (tf.float32): ", round(best(() -> per_call(() -> tf.float32, 5000)), digits = 1), " us")
    println("round trip, call len([1, 2, 3]):    ", round(best(() -> per_call(() -> len(["a", "b", "c"]), 5000)), digits = 1), " us")
    println("round trip, repr of an object:      ", round(best(() -> per_call(() -> D.pyrepr(obj), 5000)), digits = 1), " us")

    pyimport("site").addsitedir(@__DIR__)  # puts this folder on the host's sys.path
    py = pyimport("graph_build")  # the Python baseline, run by the host itself
    build(50)
    py.build(50)
    times = Dict(k => Float64[] for k in ("jl", "py", "jl_fn", "py_fn"))
    for _ in 1:5  # interleaved, so both languages see the same machine
        push!(times["jl"], build(n))
        push!(times["py"], py.build(n))
        push!(times["jl_fn"], build_with_device_function(n))
        push!(times["py_fn"], py.build_with_device_function(n))
    end
    jl, pyb = minimum(times["jl"]), minimum(times["py"])
    println("python graph building (in the host): ", round(Int, 1 / pyb), " ops/s (", round(pyb * 1e6, digits = 1), " us/op)")
    println("julia graph building: ", round(Int, 1 / jl), " ops/s (", round(jl * 1e6, digits = 1), " us/op) = ", round(pyb / jl, digits = 2), " x python")
    println("python device function: ", round((minimum(times["py_fn"]) - pyb) * 1e6, digits = 1), " us/op extra")
    println("julia device function: ", round((minimum(times["jl_fn"]) - jl) * 1e6, digits = 1), " us/op extra")

    np = pyimport("numpy")
    A = rand(100 * 1024 * 1024 ÷ 8)  # 100 MiB of Float64
    len(A)
    to_python = best(() -> @elapsed(len(A)))
    remote = pycall(np.ones, PyObject, length(A))
    from_python = best(() -> @elapsed(D.request(D.OP_ECHO, (remote,))))
    println("100 MiB array Julia -> Python: ", round(Int, 100 / to_python), " MiB/s")
    println("100 MiB array Python -> Julia: ", round(Int, 100 / from_python), " MiB/s")
end

main(length(ARGS) >= 1 ? parse(Int, ARGS[1]) : 1000)
