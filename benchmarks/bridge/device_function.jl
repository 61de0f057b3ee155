# What a device function costs per op, apart from the noise of whole builds (bench.jl's row is
# the difference of two builds of ~150 µs per op): a Julia device function against a Python one
# doing the same (`on_cpu`), both checked as DevPlace.jl's `tf.device(f)` checks them.
#
#     julia --project=julia/DevPlace benchmarks/bridge/device_function.jl [rounds]
#
# Two measures, each the median of `rounds` (default 7): TensorFlow's application of a device
# scope to 5000 ops already built (`Graph._apply_device_functions`: a scope of no device, a
# device string, the Python function, the Julia function), hot; and the time inside the
# function (Python's wrapper around the checked function) per op while `iterations` of
# `x = sin(x) * 0.5 + 1.0` are built from Julia, as bench.jl builds them.
using DevPlace
using Printf
using Statistics: median

rounds = isempty(ARGS) ? 7 : parse(Int, ARGS[1])
pyimport("site").addsitedir(@__DIR__)
py = pyimport("host_calls")
checked = pyimport("devplace.bridge.julia_semantics").checked_device_function
on_cpu(op) = "/device:CPU:0"

"Seconds inside `fn` (a checked device function) per op of a build of 300 iterations."
function inside_per_op(fn)
    timed = py.Timed(fn)
    tf.reset_default_graph()
    @pywith tf.device(timed) begin
        x = constant(1.0)
        for _ in 1:300
            x = sin(x) * 0.5 + 1.0
        end
    end
    return timed.per_call()
end

scopes = [("no device (None)", nothing), ("device string", "/device:CPU:0"),
          ("Python function", checked(py.on_cpu)), ("Julia function", checked(on_cpu))]
applied = Dict(label => Float64[] for (label, _) in scopes)
inside = Dict(label => Float64[] for label in ("Python function", "Julia function"))
for _ in 1:rounds
    for (label, spec) in scopes
        push!(applied[label], py.apply_per_op(spec))
    end
    push!(inside["Python function"], inside_per_op(checked(py.on_cpu)))
    push!(inside["Julia function"], inside_per_op(checked(on_cpu)))
end
println("load average: ", strip(read("/proc/loadavg", String)), "  transport: ", DevPlace.transport())
println("| device scope | applied to an op (alone) | inside the function while building |")
println("|---|---|---|")
for (label, _) in scopes
    @printf("| %s | %.2f µs | %s |\n", label, 1e6 * median(applied[label]),
            haskey(inside, label) ? @sprintf("%.2f µs", 1e6 * median(inside[label])) : "")
end
