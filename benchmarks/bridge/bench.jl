# DevPlace.jl bridge benchmarks: what each kind of call costs from Julia against the same call
# made by Python inside the host (host_calls.py), interleaved in one run.
#
#     julia --project=julia/DevPlace benchmarks/bridge/bench.jl [iterations] [rounds]
#
# Calls: a training step (`run(sess, opt)`, a 10-element variable), a scalar fetch, fetches and
# feeds of 8 MB and 100 MiB Float64 arrays, graph building (`iterations` times
# `x = sin(x) * 0.5 + 1.0`, 5 ops each) and what a device function adds per op. Each figure is
# the best of 3 repeats; `rounds` (default 3) rounds alternate Julia and Python, and the table
# shows the medians. Then the peak memory of a 100 MiB fetch (host and Julia together) and the
# echo round trip. `DEVPLACE_SPIN_US=0` measures the bridge without spinning,
# `DEVPLACE_SHM_MIN=0` without shared memory.
using DevPlace
using Printf
using Statistics: median
const D = DevPlace

best(f, runs = 3) = minimum(f() for _ in 1:runs)

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

"The session, fetches and feeds of the `run` cases, in a fresh graph."
function run_cases(np)
    tf.reset_default_graph()
    w = Variable(ones(10))
    loss = sum(w .^ 2)
    opt = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
    cases = Any[("training step", opt, nothing, 1000), ("scalar fetch", loss, nothing, 1000)]
    for (label, n, reps) in (("8 MB", 1 << 20, 20), ("100 MiB", 100 << 17, 3))
        a = rand(n)
        push!(cases, ("fetch $label", constant(a), nothing, reps))
        p = placeholder(Float64; shape = [n])
        push!(cases, ("feed $label", sum(p), p => a, reps))
    end
    sess = Session()
    init(sess)
    # Python's feeds are its own numpy arrays, already in the host.
    py_feed(feed) = feed === nothing ? nothing :
                    D.PyDict(Pair[feed.first => pycall(np.array, PyObject, feed.second)])
    return sess, [(label, f, feed, py_feed(feed), reps) for (label, f, feed, reps) in cases]
end

julia_run(sess, f, feed, reps) = per_call(() -> feed === nothing ? run(sess, f) : run(sess, f, feed), reps)

function rss_kib(pid, field)
    for line in eachline("/proc/$pid/status")
        startswith(line, field) && return parse(Int, split(line)[2])
    end
    return 0
end

"Peak memory (KiB) above the resting size of the host and of Julia for one fetch of `t`."
function peak_fetch_memory(sess, t)
    GC.gc()
    pids = (getpid(), D.host_pid())
    foreach(pid -> write("/proc/$pid/clear_refs", "5"), pids)  # resets the peak to now
    rest = map(pid -> rss_kib(pid, "VmRSS:"), pids)
    v = run(sess, t)
    sum(v)  # every page touched
    peak = map(pid -> rss_kib(pid, "VmHWM:"), pids)
    return sum(peak) - sum(rest), sizeof(v) ÷ 1024
end

function main(n, rounds)
    shm = isdefined(D, :SHM_MIN) ? string(D.SHM_MIN[], " bytes up in ", D.SHM_DIR[]) : "none"
    println("load average: ", strip(read("/proc/loadavg", String)), "  Julia ", VERSION,
            "  shared memory: ", shm)
    D.host()  # start the host outside the timings
    np = pyimport("numpy")
    pyimport("site").addsitedir(@__DIR__)  # puts this folder on the host's sys.path
    py = pyimport("host_calls")  # the Python baseline, run by the host itself
    sess, cases = run_cases(np)
    build(50)
    py.build(50)
    times = Dict{String,Vector{Tuple{Float64,Float64}}}()
    for label in ("graph building (per op)", "device function (extra per op)", first.(cases)...)
        times[label] = Tuple{Float64,Float64}[]
    end
    for _ in 1:rounds  # interleaved, so both languages see the same machine
        for (label, f, feed, pyfeed, reps) in cases
            julia_run(sess, f, feed, 1)
            jl = best(() -> julia_run(sess, f, feed, reps))
            pyt = best(() -> py.time_run(sess, f, pyfeed, reps))
            push!(times[label], (jl, pyt))
        end
        jl, pyb = best(() -> build(n)), best(() -> py.build(n))
        push!(times["graph building (per op)"], (jl, pyb))
        jlf, pyf = best(() -> build_with_device_function(n)), best(() -> py.build_with_device_function(n))
        push!(times["device function (extra per op)"], (jlf - jl, pyf - pyb))
    end
    println("\n| call | Julia | Python in the host | Julia / Python speed |\n|---|---|---|---|")
    for label in (first.(cases)..., "graph building (per op)", "device function (extra per op)")
        jl = median(first.(times[label]))
        pyt = median(last.(times[label]))
        speed = label == "device function (extra per op)" ? "—" :
                @sprintf("%.2f×", median([p / j for (j, p) in times[label]]))
        println("| ", label, " | ", show_time(jl), " | ", show_time(pyt), " | ", speed, " |")
    end
    t100 = cases[findfirst(c -> c[1] == "fetch 100 MiB", cases)][2]
    peak, size_kib = peak_fetch_memory(sess, t100)
    @printf("\npeak memory of a 100 MiB fetch (host + Julia, above resting): %.0f MiB = %.2f× the array\n",
            peak / 1024, peak / size_kib)
    echo = best(() -> per_call(() -> D.request(D.OP_ECHO, (1,)), 5000))
    println("round trip, echo of an Int: ", show_time(echo))
    println("load average: ", strip(read("/proc/loadavg", String)))
end

show_time(s) = s >= 1e-3 ? @sprintf("%.2f ms", s * 1e3) : @sprintf("%.1f µs", s * 1e6)

main(length(ARGS) >= 1 ? parse(Int, ARGS[1]) : 300, length(ARGS) >= 2 ? parse(Int, ARGS[2]) : 3)
