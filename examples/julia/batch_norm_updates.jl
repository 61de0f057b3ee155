# Seed: batch normalisation on several devices, its parameter updates on the CPU.
#
# The variables (and so the moving-average updates, which TF keeps with their variables) live
# on the CPU; the update ops are collected from UPDATE_OPS under a CPU scope and bound to the
# training op, so running the training step also updates the moving averages.
using DevPlace
using Random

x = placeholder(Float32, shape=[nothing, 4], name="x")

@pywith DevPlace.device(DevPlace.assign_to_device("/device:CPU:1")) begin
    global y = bn(x, training=true)
    global loss = sum(y .^ 2)
end

@pywith tf.device("/cpu:0") begin
global update_ops = get_collection(tf.GraphKeys.UPDATE_OPS)
end

@cpu 0 begin
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    control_dependencies(update_ops) do
        global train_with_updates = tf.group(train)
    end
end

sess = Session(cpus=2)
init(sess)
batch = Float32.(3 .+ 2 .* randn(MersenneTwister(0), 64, 4))
for _ in 1:20
    run(sess, train_with_updates, x => batch)
end

moving_mean = first(v for v in tf.global_variables() if occursin("moving_mean", v.name))
println("update ops: ", [op.name for op in update_ops])
println("moving mean after 20 steps: ", run(sess, moving_mean))
report = placement(sess, train_with_updates, x => batch)
for op in update_ops
    println(op.name, " ran on ", report.actual(op.name))
end
