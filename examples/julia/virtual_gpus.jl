# Seeds: multi-GPU training code, run on one GPU split into four logical GPUs.
#
# Variables pinned round-robin across /gpu:0 to /gpu:3, one tower per GPU computing its slice
# of the batch with gradients colocated with the tower's ops, batch-norm moving averages kept
# (and updated) on the CPU, the towers' gradients averaged on the CPU. `virtual_gpus=4` makes
# the four GPUs out of one; where TensorFlow sees no GPU the same graph runs with soft
# placement, every op on the CPU, and the script says so. Which device ran each op comes from
# the run's metadata.
using DevPlace
using DevPlace: assign_to_device, round_robin, with_updates
using Random

const TOWERS = 4
rng = MersenneTwister(0)

x = placeholder(Float32, shape=[nothing, 8], name="x")
y = placeholder(Float32, shape=[nothing, 1], name="y")
@pywith DevPlace.device(round_robin(["/gpu:$i" for i in 0:TOWERS-1])) begin
    global weights = [Variable(0.3f0 .* randn(rng, Float32, 8, 16), name="w1"),
                      Variable(zeros(Float32, 16), name="b1"),
                      Variable(0.3f0 .* randn(rng, Float32, 16, 1), name="w2"),
                      Variable(zeros(Float32, 1), name="b2")]
end
w1, b1, w2, b2 = weights
@cpu 0 begin
    global x_parts = tf.split(x, TOWERS)
    global y_parts = tf.split(y, TOWERS)
end

tower_grads, losses = [], []
for i in 0:TOWERS-1
    # Variables (the batch-norm statistics) on CPU:0, every other op on this tower's GPU.
    @pywith DevPlace.device(assign_to_device("/gpu:$i")) begin
        @pywith tf.name_scope("tower$i") begin
            hidden = tf.nn.relu(bn(tf.matmul(x_parts[i+1], w1) + b1, name="bn$i"))
            loss = tf.reduce_mean(tf.square(tf.matmul(hidden, w2) + b2 - y_parts[i+1]))
            push!(tower_grads, gradients(loss, weights, colocate=true))
            push!(losses, loss)
        end
    end
end

@cpu 0 begin
    mean_grads = [tf.add_n([grads[k] for grads in tower_grads]) / TOWERS for k in 1:4]
    optimizer = tf.train.GradientDescentOptimizer(0.1)
    train = optimizer.apply_gradients(collect(zip(mean_grads, weights)))
    global step = with_updates(train, get_collection(tf.GraphKeys.UPDATE_OPS))
    global mean_loss = tf.add_n(losses) / TOWERS
end

if isempty(tf.config.list_physical_devices("GPU"))
    println("no GPU here: soft placement runs every /gpu:i op on the CPU")
    sess = Session(soft=true, optimize=false)
else
    sess = Session(virtual_gpus=TOWERS, optimize=false)
end
println("devices: ", join(sess.devices(), ", "))
init(sess)

batch_x = randn(rng, Float32, 64, 8)
batch_y = Float32.(sin.(sum(batch_x, dims=2)))
feeds = (x => batch_x, y => batch_y)
before = run(sess, mean_loss, feeds...)
for _ in 1:30
    run(sess, step, feeds...)
end
println("loss ", round(before, digits=4), " before, ", round(run(sess, mean_loss, feeds...),
        digits=4), " after 30 steps")

report = placement(sess, step, feeds...)
for w in weights
    println(w.op.name, ": requested ", w.device, ", ran on ", report.actual(w.op.name))
end
for i in 0:TOWERS-1
    ran = Dict{String,Int}()
    for op in report.ops
        startswith(op.name, "tower$i/") && (ran[op.actual] = get(ran, op.actual, 0) + 1)
    end
    println("tower $i ran on ", join(["$d ($(ran[d]) ops)" for d in sort(collect(keys(ran)))],
                                     ", "))
end
for op in get_collection(tf.GraphKeys.UPDATE_OPS)
    println(op.name, " ran on ", report.actual(op.name))
end
