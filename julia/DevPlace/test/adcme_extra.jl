# ADCME's extras (src/adcme/extra.jl): Xavier weights, gradients of your own, devices, timing.

using Statistics

@testset "xavier_init: normal weights with standard deviation 1/sqrt(n_in/2)" begin
    w = xavier_init([200, 100], Float32)
    @test size(w) == (200, 100) && eltype(w) == Float32
    @test abs(std(w) - 0.1) < 0.005 && abs(mean(w)) < 0.01
    @test eltype(xavier_init((3, 2))) == Float64
end

@testset "register: a forward function with the gradient you give" begin
    reset_default_graph()
    sess = Session()
    # softplus, with its gradient written through its output: σ(x) = 1 - 1/(1 + e^{softplus(x)})
    f = register(x -> log(1 + exp(x)), (dy, y, x) -> dy * (1 - 1 / exp(y)))
    x_ = [-1.0, 0.0, 2.0]
    x = constant(x_)
    @test run(sess, f(x)) ≈ log.(1 .+ exp.(x_))
    @test run(sess, gradients(sum(f(x)), x)) ≈ 1 ./ (1 .+ exp.(-x_))
    # the given gradient is the one used, even a wrong one; `nothing` for an input without one
    g = register((a, b) -> a * b, (dy, y, a, b) -> (3dy, nothing))
    a, b = constant([1.0, 2.0]), constant([5.0, 7.0])
    @test run(sess, gradients(sum(g(a, b)), a)) == [3.0, 3.0]
    @test gradients(sum(g(a, b)), b) === nothing
    # several outputs: backward takes both top gradients, both outputs, the input
    h = register(x -> (2x, x^2), (d1, d2, y1, y2, x) -> 2d1 + 2x * d2; multiple = true)
    u, v = h(x)
    @test run(sess, gradients(sum(u) + sum(v), x)) ≈ 2 .+ 2x_
end

@testset "list_physical_devices: TensorFlow's devices in the host" begin
    all_devices = list_physical_devices()
    gpus = [d.name for d in tf.config.list_physical_devices("GPU")]
    @test list_physical_devices("CPU") == ["/device:CPU:0"]
    @test length(list_physical_devices("GPU")) == length(gpus)
    @test all_devices == [list_physical_devices("CPU"); list_physical_devices("GPU")]
    @test_throws ArgumentError list_physical_devices("TPU")
end

@testset "timestamp and sleep_for time a part of the graph" begin
    reset_default_graph()
    a = constant(0.2)
    t0 = timestamp(a)
    slept = sleep_for(a)
    t1 = timestamp(slept)
    sess = Session()
    t0_, t1_, s = run(sess, [t0, t1, slept])
    @test s == 0.2 && 0.2 <= t1_ - t0_ < 5
    @test abs(run(sess, timestamp()) - time()) < 60
end
