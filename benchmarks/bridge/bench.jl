# DevPlace.jl bridge benchmarks: what each kind of call costs from Julia against the same call
# made by Python where DevPlace.jl's Python runs (host_calls.py), for both transports (in
# Julia's own process, and the host process), interleaved in one run.
#
#     julia --project=julia/DevPlace benchmarks/bridge/bench.jl [iterations] [rounds] [bfgs_iterations]
#
# Calls: a training step (`run(sess, opt)`, a 10-element variable), the step with its loss
# (`run(sess, [opt, loss])`), a scalar fetch, fetches and feeds of 8 MB and 100 MiB Float64
# arrays (Python's feeds aligned as Julia's are), graph building (`iterations` times
# `x = sin(x) * 0.5 + 1.0`, 5 ops each) and what a device function adds per op (the median of
# 7 differences of builds with and without it, made in pairs: one build's noise is larger than
# the difference). A reference beside the fetches: a new 8 MB array made and filled by each
# language's own code (`copyto!(similar(a), a)`, numpy's `empty_like` and a copy), what any
# program pays for a fresh array in that language. Each other figure is the best of 3 repeats,
# Julia's and Python's by turns; `rounds` (default 3) rounds, and the table shows the medians. A
# whole program with callbacks: `BFGS!` on a 200-variable Rosenbrock loss,
# `bfgs_iterations` (default 400) iterations of scipy's L-BFGS-B, printing each evaluation and
# step, against the same minimization driven from Python (best of 2, each on a fresh graph). Then the peak memory of a
# 100 MiB fetch (Python and Julia together) and the echo round trip. Each round runs the
# in-process transport, then the host process. `DEVPLACE_SPIN_US=0` measures the bridge without spinning,
# `DEVPLACE_SHM_MIN=0` without shared memory.
using DevPlace
using Logging: NullLogger, with_logger
using Printf
using Statistics: median
const D = DevPlace

best(f, runs = 3) = minimum(f() for _ in 1:runs)

"The best of `runs` of Julia's `f` and of Python's `g`, run by turns: both see the same minutes."
function best_pair(f, g, runs = 3)
    a, b = Inf, Inf
    for _ in 1:runs
        a, b = min(a, f()), min(b, g())
    end
    return a, b
end

function per_call(f, n)
    t = time_ns()
    for _ in 1:n
        f()
    end
    return (time_ns() - t) / n / 1e9  # s
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

"Seconds per op that building with a device function adds: the median of `pairs` differences."
extra_per_op(plain, with_function, pairs = 7) = median([with_function() - plain() for _ in 1:pairs])

"The session, fetches and feeds of the `run` cases, in a fresh graph."
function run_cases(py)
    tf.reset_default_graph()
    w = Variable(ones(10))
    loss = sum(w .^ 2)
    opt = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
    cases = Any[("training step", opt, nothing, 1000), ("step and loss", [opt, loss], nothing, 1000),
                ("scalar fetch", loss, nothing, 1000)]
    for (label, n, reps) in (("8 MB", 1 << 20, 20), ("100 MiB", 100 << 17, 3))
        a = rand(n)
        push!(cases, ("fetch $label", constant(a), nothing, reps))
        p = placeholder(Float64; shape = [n])
        push!(cases, ("feed $label", sum(p), p => a, reps))
    end
    sess = Session()
    init(sess)
    # Python's feeds are its own numpy arrays, already in the host, aligned as TensorFlow needs
    # to read them where they are (Julia's are).
    py_feed(feed) = feed === nothing ? nothing :
                    D.PyDict(Pair[feed.first => pycall(py.aligned, PyObject, feed.second)])
    return sess, [(label, f, feed, py_feed(feed), reps) for (label, f, feed, reps) in cases]
end

julia_run(sess, f, feed, reps) = per_call(() -> feed === nothing ? run(sess, f) : run(sess, f, feed), reps)

function rss_kib(pid, field)
    for line in eachline("/proc/$pid/status")
        startswith(line, field) && return parse(Int, split(line)[2])
    end
    return 0
end

"Peak memory (KiB) above the resting size of Python's process and Julia's for one fetch of `t`."
function peak_fetch_memory(sess, t)
    GC.gc()
    pids = unique([getpid(), D.host_pid()])  # one process in process
    foreach(pid -> write("/proc/$pid/clear_refs", "5"), pids)  # resets the peak to now
    rest = map(pid -> rss_kib(pid, "VmRSS:"), pids)
    v = run(sess, t)
    sum(v)  # every page touched
    peak = map(pid -> rss_kib(pid, "VmHWM:"), pids)
    return sum(peak) - sum(rest), sizeof(v) ÷ 1024
end

"Rosenbrock's function of `n` variables, ADCME style; the session and the loss, initialised."
function rosenbrock(n)
    tf.reset_default_graph()
    x = Variable(zeros(n))
    loss = sum(100 * (x[2:end] - x[1:end-1]^2)^2 + (1 - x[1:end-1])^2)
    sess = Session()
    init(sess)
    return sess, loss
end

"""
`program(sess, loss)` on a fresh 200-variable Rosenbrock problem, its session closed after:
each minimization adds its gradients' ops to the graph, and TensorFlow's work grows with the
graph, so each program (Julia's or Python's) starts from a graph of the same size.
"""
function on_fresh_rosenbrock(program)
    sess, loss = rosenbrock(200)
    try
        return program(sess, loss)
    finally
        sess.close()
    end
end

"Seconds for `BFGS!(sess, loss, iterations)`, what it prints going to /dev/null."
function julia_bfgs(sess, loss, iterations)
    init(sess)
    open("/dev/null", "w") do sink
        redirect_stdout(sink) do
            with_logger(NullLogger()) do
                t = time_ns()
                BFGS!(sess, loss, iterations)
                return (time_ns() - t) / 1e9
            end
        end
    end
end

python_bfgs(py, sess, loss, iterations) = (init(sess); py.bfgs(sess, loss, iterations, "/dev/null"))

"One round of every case in the running transport: (Julia, Python) seconds by label."
function measure_round(n, bfgs_iterations)
    pyimport("site").addsitedir(@__DIR__)  # puts this folder on Python's sys.path
    py = pyimport("host_calls")  # the Python baseline, run by DevPlace.jl's Python itself
    sess, cases = run_cases(py)
    build(50)
    py.build(50)
    times = Dict{String,Tuple{Float64,Float64}}()
    for (label, f, feed, pyfeed, reps) in cases
        julia_run(sess, f, feed, 1)
        times[label] = best_pair(() -> julia_run(sess, f, feed, reps),
                                 () -> py.time_run(sess, f, pyfeed, reps))
    end
    jl, pyb = best_pair(() -> build(n), () -> py.build(n))
    times["graph building (per op)"] = (jl, pyb)
    values = rand(1 << 20)
    py_values = pycall(py.aligned, PyObject, values)
    times[NEW_ARRAYS] = best_pair(() -> per_call(() -> copyto!(similar(values), values), 20),
                                  () -> py.time_new_arrays(py_values, 20))
    GC.gc()  # its garbage collected now, not inside the next round's timings
    times["device function (extra per op)"] =
        (extra_per_op(() -> build(n), () -> build_with_device_function(n)),
         extra_per_op(() -> py.build(n), () -> py.build_with_device_function(n)))
    times["BFGS! program"] =
        best_pair(() -> on_fresh_rosenbrock((s, l) -> julia_bfgs(s, l, bfgs_iterations)),
                  () -> on_fresh_rosenbrock((s, l) -> python_bfgs(py, s, l, bfgs_iterations)), 2)
    t100 = cases[findfirst(c -> c[1] == "fetch 100 MiB", cases)][2]
    peak, size_kib = peak_fetch_memory(sess, t100)
    times["peak memory of a 100 MiB fetch (× the array)"] = (peak / size_kib, NaN)
    times["echo round trip"] = (best(() -> per_call(() -> D.request(D.OP_ECHO, (1,)), 5000)), NaN)
    return [first.(cases); EXTRA_LABELS...], times
end

const NEW_ARRAYS = "new 8 MB array, each language's own (reference)"
const EXTRA_LABELS = [NEW_ARRAYS, "graph building (per op)", "device function (extra per op)", "BFGS! program",
                      "peak memory of a 100 MiB fetch (× the array)", "echo round trip"]
const TRANSPORT_NAMES = Dict(:inprocess => "in process", :process => "host process")

function main(n, rounds, bfgs_iterations = 400)
    println("load average: ", strip(read("/proc/loadavg", String)), "  Julia ", VERSION,
            "  shared memory (host process): ", D.SHM_MIN[], " bytes up in ", D.SHM_DIR[])
    transports = (:inprocess, :process)
    labels = String[]
    times = Dict(t => Dict{String,Vector{Tuple{Float64,Float64}}}() for t in transports)
    for round in 1:rounds, t in transports  # interleaved: both see the same minutes
        D.set_transport(t)
        D.host()  # started outside the timings
        D.transport() == t || error("the $t transport did not start here")
        labels, got = measure_round(n, bfgs_iterations)
        for (label, v) in got
            push!(get!(times[t], label, Tuple{Float64,Float64}[]), v)
        end
        println("round $round, $(TRANSPORT_NAMES[t]) done; load average: ",
                strip(read("/proc/loadavg", String)))
    end
    head = join((string(TRANSPORT_NAMES[t], ": Julia | Python | speed") for t in transports), " | ")
    println("\n| call | ", head, " |\n|---", repeat("|---", 3 * length(transports)), "|")
    for label in labels
        cells = String[]
        for t in transports
            v = times[t][label]
            jl, pyt = median(first.(v)), median(last.(v))
            if isnan(pyt)
                push!(cells, label == "echo round trip" ? show_time(jl) : @sprintf("%.2f×", jl), "", "")
            else
                speed = label == "device function (extra per op)" ? "—" :
                        @sprintf("%.2f×", median([p / j for (j, p) in v]))
                push!(cells, show_time(jl), show_time(pyt), speed)
            end
        end
        println("| ", label, " | ", join(cells, " | "), " |")
    end
    println("load average: ", strip(read("/proc/loadavg", String)))
end

show_time(s) = s >= 1e-3 ? @sprintf("%.2f ms", s * 1e3) : @sprintf("%.1f µs", s * 1e6)

main(length(ARGS) >= 1 ? parse(Int, ARGS[1]) : 300, length(ARGS) >= 2 ? parse(Int, ARGS[2]) : 3,
     length(ARGS) >= 3 ? parse(Int, ARGS[3]) : 400)
