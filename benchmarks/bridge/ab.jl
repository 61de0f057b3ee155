# A/B of two versions of DevPlace.jl on the per-call rows of bench.jl: the training step, the
# step with its loss, the scalar fetch and `BFGS!`, each against Python in the same minutes,
# in both transports. Run it alternately for two trees (e.g. a `git worktree` of the old commit
# and this one) and compare the speeds:
#
#     julia --project=TREE/julia/DevPlace benchmarks/bridge/ab.jl TREE [rounds]
#
# TREE's own bench.jl and host_calls.py are used (its functions, not its `main`), so the two
# versions are measured by the same code. Prints, per row, the median of `rounds` (default 4)
# speeds (Python's time over Julia's) and each round's.
root = abspath(ARGS[1])
rounds = length(ARGS) >= 2 ? parse(Int, ARGS[2]) : 4
bench = joinpath(root, "benchmarks", "bridge", "bench.jl")
source = read(bench, String)
include_string(Main, source[1:findlast("\nmain(", source).start], bench)  # without its `main` call

speeds = Dict{String,Vector{Float64}}()
for round in 1:rounds, t in (:inprocess, :process)
    D.set_transport(t)
    D.host()
    pyimport("site").addsitedir(dirname(bench))
    py = pyimport("host_calls")
    sess, cases = run_cases(py)
    for (label, f, feed, pyfeed, reps) in cases[1:3]  # step, step and loss, scalar fetch
        julia_run(sess, f, feed, 1)
        jl = best(() -> julia_run(sess, f, feed, reps))
        push!(get!(speeds, "$(TRANSPORT_NAMES[t]): $label", Float64[]),
              best(() -> py.time_run(sess, f, pyfeed, reps)) / jl)
    end
    bsess, loss = rosenbrock(200)
    jl = best(() -> julia_bfgs(bsess, loss, 400), 2)
    push!(get!(speeds, "$(TRANSPORT_NAMES[t]): BFGS!", Float64[]),
          best(() -> python_bfgs(py, bsess, loss, 400), 2) / jl)
end
println("load average: ", strip(read("/proc/loadavg", String)))
for label in sort(collect(keys(speeds)))
    v = speeds[label]
    println(rpad(label, 34), @sprintf("%.2f×", median(v)), "  ", join((@sprintf("%.2f", x) for x in v), " "))
end
