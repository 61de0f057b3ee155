# Where the first DevPlace call's seconds go. Run each case in a fresh Julia:
#
#     julia --project=julia/DevPlace benchmarks/bridge/startup.jl [pause]
#     DEVPLACE_PRESTART=0 julia --project=julia/DevPlace benchmarks/bridge/startup.jl [pause]
#
# `pause` (seconds, default 0) passes between `using DevPlace` and the first call, as when a
# user types it at the REPL. Prints one line: the time of `using`, of waiting for the host
# (spawn, `import tensorflow`, devplace), of the first call `constant(1.0)` (Julia compiling
# the request path, the host's first graph op), of a second, different call (`sin`), of the
# first `Session()`, and the total from the start of `using` to the first result and the first
# `Session()`, the pause and the second call left out (what is done while the script pauses,
# e.g. Python's start in the task `using` schedules, counts). The transport is the default (in
# process where it can serve) or `DEVPLACE_TRANSPORT`'s.
t0 = time()
using DevPlace
t_using = time() - t0
pause = isempty(ARGS) ? 0.0 : parse(Float64, ARGS[1])
sleep(pause)
t1 = time()
DevPlace.host_pid()
t_host = time() - t1
t2 = time()
x = constant(1.0)
t_first = time() - t2
t3 = time()
sin(x)
t_second = time() - t3
t4 = time()
Session()
t_session = time() - t4
prestart = get(ENV, "DEVPLACE_PRESTART", "1") != "0"
println(DevPlace.transport(), " prestart=", prestart, " pause=", pause, " s: using ", round(t_using, digits = 2),
        " s, wait for host ", round(t_host, digits = 2), " s, first call ",
        round(t_first, digits = 2), " s, second call ", round(t_second, digits = 2),
        " s, first Session() ", round(t_session, digits = 2),
        " s; first result ", round(t_host + t_first, digits = 2), " s after the pause; ",
        round(time() - t0 - t_second - pause, digits = 2),
        " s in all to the first result and first Session()")
