# TF1 code as it is: servers, a ClusterSpec, replica_device_setter and a shared queue.
#
# Chapter 12 of Géron's "Hands-On Machine Learning" (1st edition) in Julia: the TF1 API through
# DevPlace's `tf` (the host's `tensorflow.compat.v1`), as tf1_chapter12.py writes it in Python.
# DevPlace then adds what ran where (`placement`), a profile (`run_profile`, `save_profile`) and
# its picture.
#
#     julia --project=julia/DevPlace examples/julia/tf1_chapter12.jl [OUT]  # OUT/queue.json, .png
#
# OUT defaults to `out/tf1_chapter12` under the current folder (git ignores `out/`).
#
# The servers run in the Python host, as in the book; like every TF server they listen on all
# interfaces without authentication, for as long as the script runs (`LocalCluster` runs them in
# a loopback-only namespace instead).
using DevPlace
using Sockets

const OUT = mkpath(abspath(isempty(ARGS) ? joinpath("out", "tf1_chapter12") : ARGS[1]))

"A loopback port that is free now."
function free_port()
    server = listen(ip"127.0.0.1", 0)
    _, port = getsockname(server)
    close(server)
    return Int(port)
end

cluster_spec = tf.train.ClusterSpec(Dict(
    "ps" => ["127.0.0.1:$(free_port())", "127.0.0.1:$(free_port())"],
    "worker" => ["127.0.0.1:$(free_port())", "127.0.0.1:$(free_port())"]))
task_ps0 = tf.train.Server(cluster_spec, job_name = "ps", task_index = 0)
task_ps1 = tf.train.Server(cluster_spec, job_name = "ps", task_index = 1)
task_worker0 = tf.train.Server(cluster_spec, job_name = "worker", task_index = 0)
task_worker1 = tf.train.Server(cluster_spec, job_name = "worker", task_index = 1)

# Variables on the ps tasks in turn, everything else on the workers.
@pywith tf.device(tf.train.replica_device_setter(
        ps_tasks = 2, ps_device = "/job:ps", worker_device = "/job:worker")) begin
    global w = tf.Variable(reshape(Float32[1, 2], 2, 1), name = "w")  # /job:ps/task:0
    global b = tf.Variable(0.5f0, name = "b")  # /job:ps/task:1
end

# A queue on ps 0, shared by name: worker 0 fills it, worker 1 reads it.
@pywith tf.device("/job:ps/task:0") begin
    global q = tf.FIFOQueue(capacity = 10, dtypes = [tf.float32], shapes = [(2,)], name = "q",
                            shared_name = "shared_q")
    global training_instance = tf.placeholder(tf.float32, shape = (2,))
    global enqueue = q.enqueue([training_instance])
end
@pywith tf.device("/job:worker/task:1/cpu:0") begin
    global batch = q.dequeue_many(2, name = "batch")
    global y = tf.add(tf.matmul(batch, w), b, name = "y")
end

init_op = tf.global_variables_initializer()

# `timeout`: a bound on every wait, a dequeue on an empty queue fails after 60 s instead of hanging
@pywith Session(target = task_worker0.target, timeout = 60) as sess begin
    run(sess, init_op)
    for i in 0:5  # the rows of 0:11 as a 6×2 matrix
        run(sess, enqueue, training_instance => Float32[2i, 2i + 1])
    end
    println("queued: ", run(sess, q.size()))
end

@pywith Session(target = task_worker1.target, timeout = 60) as sess begin
    # (Float64 prints as [2.5, 8.5], as Python does, where Float32 prints Float32[2.5, 8.5])
    println("y = ", Float64.(vec(run(sess, y))))  # rows [0, 1], [2, 3]
    # what DevPlace adds, each a run of its own (each dequeues the next two rows):
    report = placement(sess, y)  # requested and actual device per op, transfers
    println(report)
    println("y = ", Float64.(vec(run_profile(sess, y))))  # rows [8, 9], [10, 11]
    save_profile(joinpath(OUT, "queue.json"))  # chrome://tracing, Perfetto, `devplace profile show`
    trace = pyimport("devplace").plot_profile(joinpath(OUT, "queue.json"),
                                            joinpath(OUT, "queue.png"))
    println("profile: ", length(trace.ops), " ops on ", length(trace.devices),
            " devices, picture ", joinpath(OUT, "queue.png"))
end
