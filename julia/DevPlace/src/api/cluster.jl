# Clusters of real TensorFlow servers from Julia: `LocalCluster` and `ClusterSession` forward
# to Python's `devplace.cluster` (servers, spec, peer-aware sessions); `DevPlace.cluster` is
# that module, for the rest (`devices`, `Checkpointer`, `read_spec`, ...).

"""
    DevPlace.cluster

The host's `devplace.cluster` module: `cluster.devices(spec, "ps")` (one device string per
task of a job), `cluster.Checkpointer(dir; every=3)`, `cluster.read_spec(path)`,
`cluster.target(spec, "worker", 0)`, ... Resolved on first use.

Across machines: `cluster.serve("cluster.json", "worker", 1)` serves this host's task until
Ctrl-C (also `cluster.serve()` from `TF_CONFIG`, `cluster.serve(from_slurm=true)` in a Slurm
step, `cores=4` to pin it); the TF server runs in a child process that stops with it.
`cluster.wait_ready(spec, timeout=60)` returns once every task answers, else throws a `PyError`
(`ClusterNotReadyError`) naming those that do not. See `examples/julia/cluster_across_hosts.jl`.
"""
const cluster = lazy_pyobject(() -> request(OP_IMPORT | BY_HANDLE, ("devplace.cluster",)))

"""
    LocalCluster(; ps=1, workers=2, cpus=1, cores_per_task=nothing, start_timeout=60, kwargs...)
    LocalCluster(f; kwargs...)

Real TensorFlow server processes, `ps` parameter-server tasks and `workers` worker tasks, on
loopback ports of this machine (Python's `devplace.cluster.LocalCluster`; every keyword goes
there; `cores_per_task=K` pins each server to its own K cores, with K threads per pool). It
is a Python context manager: the servers start when the block is entered (waiting
at most `start_timeout` seconds) and are stopped when it is left, also when it throws:

```julia
@pywith LocalCluster(ps=1, workers=2) as c begin
    sess = ClusterSession(c, "worker", 0)
    ...
end
```

The do-block form starts the servers, calls `f(c)`, stops them and returns `f`'s value:
`LocalCluster(ps=1, workers=1) do c ... end`. On a started cluster, `c.spec` is the cluster
spec (a Dict job => addresses); `c.kill("ps", 0)`, `c.restart("ps", 0)`, `c.pid("worker", 1)`
and `c.stop()` act on single servers or all of them.
"""
LocalCluster(; kwargs...) = dpcall("LocalCluster"; kwargs...)

function LocalCluster(f::Function; kwargs...)
    c = LocalCluster(; kwargs...)
    @pywith c begin
        f(c)
    end
end

LocalCluster(args...; kwargs...) = throw(ArgumentError(string(
    "LocalCluster takes keyword arguments only (and an optional do-block), got ",
    summary_of(args), ". Hint: LocalCluster(ps=1, workers=2)")))

"""
    ClusterSession(cluster, job="worker", task=0; timeout, kwargs...) -> PyObject

A session on task `task` of job `job` of a cluster (`grpc://` of `/job:<job>/task:<task>`), as
Python's `devplace.cluster.ClusterSession`. `cluster` is a `LocalCluster`, a spec Dict (job =>
addresses) or a spec file name. The other keywords are `Session`'s; `timeout` (seconds) bounds
every `run`. A dead, hung or restarted peer throws a `PyError` whose type ends in
`PeerUnavailableError`, `PeerDeadlineError` or `PeerAbortedError`, naming the task at fault.
Use it like any session: `init(sess)`, `run(sess, y)`, `placement(sess, y)`, `sess.close()`.
"""
function ClusterSession(cluster, job = "worker", task = 0; kwargs...)
    job isa Union{AbstractString,Symbol} || wrong_argument(
        "ClusterSession", "job", job, "a job name such as \"worker\" or \"ps\"",
        "ClusterSession(cluster, \"worker\", 0)")
    (task isa Integer && !(task isa Bool) && task >= 0) || wrong_argument(
        "ClusterSession", "task", task, "a non-negative integer task index",
        "ClusterSession(cluster, \"worker\", 1) for the second worker")
    dpcall("ClusterSession", cluster, String(job), Int(task); kwargs...)
end
