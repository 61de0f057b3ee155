# Multiple devices across multiple machines: one `devplace cluster serve` per host, a chief.
#
# On each host of the cluster (docs/cluster.md, "Across machines", for Slurm, ssh, containers):
#
#     devplace cluster serve --spec cluster.json --job worker --task I    # or TF_CONFIG, or Slurm
#
# The chief (this script) waits until every task answers, runs a graph across the hosts, shows
# where each op ran, and stops. By default it starts two "hosts" itself, on loopback ports of
# this machine (one task named by the spec file, one by TF_CONFIG), and stops them at the end.
#
#     julia --project=julia/DevPlace examples/julia/cluster_across_hosts.jl              # own hosts
#     julia --project=julia/DevPlace examples/julia/cluster_across_hosts.jl --spec c.json
using DevPlace
using Sockets

const dpc = DevPlace.cluster  # Python's devplace.cluster: serve, wait_ready, spec_dict, ...
spec_file = length(ARGS) >= 2 && ARGS[1] == "--spec" ? ARGS[2] : nothing

"Two free loopback ports (both held until both are found, so they differ)."
function two_free_ports()
    first, a = listenany(ip"127.0.0.1", 20000)
    second, b = listenany(ip"127.0.0.1", first + 1)
    close(a)
    close(b)
    return Int(first), Int(second)
end

"Start `devplace cluster serve ARGS` with the host's Python, as a shell on another host would."
function start_host(args, tf_config = nothing)
    python, os = pyimport("sys").executable, pyimport("os")
    env = copy(ENV)
    env["PYTHONPATH"] = os.environ.get("PYTHONPATH", "")
    tf_config === nothing || (env["TF_CONFIG"] = pyimport("json").dumps(tf_config))
    cmd = setenv(`$python -m devplace cluster serve $args`, env)
    return run(pipeline(cmd, stdout = stdout, stderr = stderr); wait = false)  # else devnull
end

hosts = Base.Process[]
workdir = mktempdir()
if spec_file === nothing
    spec = Dict("worker" => ["127.0.0.1:$port" for port in two_free_ports()])
    spec_file = joinpath(workdir, "cluster.json")
    dpc.write_spec(spec, spec_file)
    push!(hosts, start_host(`--spec $spec_file --job worker --task 0`))
    tf_config = Dict("cluster" => spec, "task" => Dict("type" => "worker", "index" => 1))
    push!(hosts, start_host(``, tf_config))
else
    spec = dpc.spec_dict(spec_file)
end
try
    println("cluster spec: ", spec)
    println("every task answers after ", round(dpc.wait_ready(spec, timeout = 180), digits = 1), " s")

    # Half of the work on each host; the sum back on the first.
    x, left = @pywith DevPlace.device("/job:worker/task:0/cpu:0") begin
        x = constant([1.0 2.0; 3.0 4.0], name = "x")
        x, tf.matmul(x, x, name = "left")
    end
    right = @pywith DevPlace.device("/job:worker/task:1/cpu:0") begin
        tf.matmul(x, x, transpose_b = true, name = "right")
    end
    total = @pywith DevPlace.device("/job:worker/task:0/cpu:0") begin
        tf.add(left, right, name = "total")
    end

    # A session on worker 0 (the master); a dead or hung host is named in its errors.
    sess = ClusterSession(spec, "worker", 0; timeout = 30, optimize = false)
    println("total = ", run(sess, total))
    report = placement(sess, total)
    for name in ("left", "right", "total")
        println(name, " ran on ", report.actual(name))
    end
    sess.close()
finally
    for host in hosts  # what Ctrl-C or `kill` does on a real host: a clean stop
        kill(host)  # SIGTERM
        wait(host)
    end
    rm(workdir; recursive = true)
end
