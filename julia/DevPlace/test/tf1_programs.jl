# TF1 programs through `tf`: tf.layers (dense, batch_normalization, dropout) with the update
# ops on the CPU, and an LSTM through tf.nn.rnn_cell and tf.nn.dynamic_rnn, train (loss drops).

using Random

@testset "TF1 multilayer network with batch norm, updates on the CPU" begin
    tf.reset_default_graph()
    tf.set_random_seed(0)
    rng = MersenneTwister(0)
    labels = rand(rng, 0:1, 256)
    xs = Float32.(randn(rng, 256, 10) .+ 1.5 .* labels)
    x = tf.placeholder(tf.float32, [nothing, 10])
    y = tf.placeholder(tf.int64, [nothing])
    training = tf.placeholder_with_default(false, [])
    local loss
    @pywith DevPlace.device(DevPlace.assign_to_device("/device:CPU:1")) begin
        hidden = tf.layers.dense(x, 32, name = "hidden1")
        hidden = tf.layers.batch_normalization(hidden, training = training, momentum = 0.9)
        hidden = tf.layers.dropout(tf.nn.elu(hidden), 0.1, training = training)
        logits = tf.layers.dense(hidden, 2)
        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels = y, logits = logits))
    end
    update_ops = get_collection(tf.GraphKeys.UPDATE_OPS)
    @test length(update_ops) == 2
    train = @cpu 0 control_dependencies(update_ops) do
        tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    end
    sess = Session(cpus = 2, optimize = false)
    init(sess)
    before = run(sess, loss, x => xs, y => labels)
    for _ in 1:60
        run(sess, train, x => xs, y => labels, training => true)
    end
    @test run(sess, loss, x => xs, y => labels) < 0.5 * before
    report = placement(sess, train, x => xs, y => labels, training => true)
    updates = [p for p in report.ops if occursin("/AssignMovingAvg", p.name) && p.op_type != "Switch"]
    @test count(p -> p.op_type == "AssignSub", updates) == 2
    @test all(p -> p.actual == "/device:CPU:0", updates)
    @test report.actual("hidden1/MatMul") == "/device:CPU:1"
end

@testset "TF1 LSTM with tf.nn.dynamic_rnn" begin
    tf.reset_default_graph()
    tf.set_random_seed(0)
    rng = MersenneTwister(1)
    xs = Float32.(randn(rng, 128, 5, 3))
    ys = reshape(Float32.(vec(sum(xs, dims = (2, 3))) ./ 4), 128, 1)
    x = tf.placeholder(tf.float32, [nothing, 5, 3])
    target = tf.placeholder(tf.float32, [nothing, 1])
    cell = tf.nn.rnn_cell.BasicLSTMCell(num_units = 16)
    outputs, states = tf.nn.dynamic_rnn(cell, x, dtype = tf.float32)
    prediction = tf.layers.dense(states.h, 1)
    loss = tf.reduce_mean(tf.square(prediction - target))
    train = tf.train.AdamOptimizer(0.01).minimize(loss)
    sess = Session()
    init(sess)
    before = run(sess, loss, x => xs, target => ys)
    for _ in 1:80
        run(sess, train, x => xs, target => ys)
    end
    @test run(sess, loss, x => xs, target => ys) < 0.5 * before
end

@testset "tf.contrib says what replaced it" begin
    err = try
        tf.contrib
    catch e
        e
    end
    @test err isa DevPlace.PyError && occursin("RemovedApiError", sprint(showerror, err))
    @test occursin("tf.layers.dense", sprint(showerror, err))
end
