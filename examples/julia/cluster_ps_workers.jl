# Multiple devices across multiple servers: parameter servers, workers, and a ps crash.
#
# Starts a local cluster of real TF servers (2 ps tasks, 2 workers), puts the variables on the
# ps tasks in turn (round robin, `replica_device_setter` semantics) and the computation on the
# workers, shows where every op ran, trains with a checkpoint every 3 steps, kills a ps, starts
# it again, restores, and trains on from the restored values.
#
#     julia --project=julia/DevPlace examples/julia/cluster_ps_workers.jl              # own cluster
#     devplace cluster up --ps 2 --workers 2 --spec-file c.json                       # or use that
#     julia --project=julia/DevPlace examples/julia/cluster_ps_workers.jl --spec c.json
using DevPlace

const dpc = DevPlace.cluster  # Python's devplace.cluster: devices, Checkpointer, read_spec, ...
spec_file = length(ARGS) >= 2 && ARGS[1] == "--spec" ? ARGS[2] : nothing

function build(spec)
    # Variables on the ps tasks in turn; everything else on worker 1.
    @pywith DevPlace.device("/job:worker/task:1/cpu:0") begin
        @pywith DevPlace.device(DevPlace.round_robin(dpc.devices(spec, "ps"))) begin
            w = Variable(zeros(Float32, 3, 1), name="w")
            b = Variable(0f0, name="b")  # Float32 like w: a Julia Float64 makes float64
            x = constant(Float32[1 2 3; 4 5 6], name="x")
            y_true = constant(reshape(Float32[1, 2], 2, 1), name="y_true")
            loss = tf.reduce_mean((x * w + b - y_true) .^ 2, name="loss")
            train = tf.train.GradientDescentOptimizer(0.02).minimize(loss)
            return loss, train
        end
    end
end

function train_until!(state, last)
    while state.step < last
        state.sess.run(state.train)
        state.step += 1
        state.checkpoints.after_step(state.sess, state.step)
        println("step ", state.step, ": loss = ", round(state.sess.run(state.loss), digits=5))
    end
end

mutable struct Training
    sess::PyObject
    step::Int
    loss::PyObject
    train::PyObject
    checkpoints::PyObject
end

function main(spec, cluster)
    println("cluster spec: ", spec)
    loss, train = build(spec)
    checkpoints = dpc.Checkpointer(mktempdir(), every=3)
    session() = ClusterSession(spec, "worker", 0; timeout=10)
    sess = session()
    state = Training(sess, checkpoints.restore_or_init(sess), loss, train, checkpoints)
    println(placement(sess, loss).table())
    train_until!(state, 5)
    if cluster !== nothing
        println("killing /job:ps/task:1 (pid ", cluster.pid("ps", 1), ")")
        cluster.kill("ps", 1)
        try
            state.sess.run(train)
        catch err
            err isa PyError && endswith(err.type, "PeerUnavailableError") || rethrow()
            println("error: ", split(err.message, ". Hint")[1])
        end
        state.sess.close()
        cluster.restart("ps", 1)
        state.sess, state.step = checkpoints.reconnect(session, timeout=60)
        println("restarted /job:ps/task:1; restored the checkpoint of step ", state.step)
        train_until!(state, 8)
    end
    state.sess.close()
end

if spec_file === nothing
    @pywith LocalCluster(ps=2, workers=2) as cluster begin
        println("started ", cluster, " in ", round(cluster.start_seconds["total"], digits=1), " s")
        main(cluster.spec, cluster)
    end
else
    main(dpc.read_spec(spec_file).as_dict(), nothing)
end
