# ADCME's layers (src/adcme/layers.jl) against the same networks computed with plain arrays.

using Statistics

"ADCME's network of the weight vector θ, with plain arrays: W row by row, then b, per layer."
function network(x, dims, θ, act)
    net, offset = x, 0
    for i in 1:length(dims)-1
        m, n = dims[i], dims[i+1]
        W = permutedims(reshape(θ[offset+1:offset+m*n], n, m))
        net = net * W .+ θ[offset+m*n+1:offset+m*n+n]'
        i < length(dims) - 1 && (net = act.(net))
        offset += m * n + n
    end
    return net
end

@testset "ae with weights as one vector: ae_num, ae_init, the layout ADCME uses" begin
    reset_default_graph()
    sess = Session()
    dims = [2, 20, 20, 3]
    @test ae_num(dims) == 2 * 20 + 20 + 20 * 20 + 20 + 20 * 3 + 3 == fc_num(dims)
    θ = ae_init(dims)
    @test length(θ) == ae_num(dims) && θ[41:60] == zeros(20)  # the first layer's biases
    big = ae_init([400, 300])
    @test isapprox(std(big[1:400*300]), sqrt(1 / 400); rtol = 0.05)
    @test isapprox(std(ae_init([400, 300]; method = "he")[1:400*300]), sqrt(2 / 400); rtol = 0.05)
    @test_throws ArgumentError ae_init(dims; method = "lecun")
    θ .+= 0.1 .* randn(length(θ))
    x = rand(10, 2)
    @test run(sess, ae(x, dims[2:end], θ)) ≈ network(x, dims, θ, tanh)
    tv = Variable(θ)
    yr = fc(x, dims[2:end], tv; activation = "relu")
    init(sess)
    @test run(sess, yr) ≈ network(x, dims, θ, relu)
    v = rand(5)
    θ1 = ae_init([1, 4, 1])
    @test size(ae(v, [4, 1], θ1)) == (5,)
    @test run(sess, ae(v, [4, 1], θ1)) ≈ vec(network(reshape(v, 5, 1), [1, 4, 1], θ1, tanh))
    @test_throws ArgumentError ae(x, [20, 3], θ)
    @test_throws ArgumentError ae(x, [3], θ1; activation = "nope")
end

@testset "ae in a variable scope: reused, named as ADCME names them, ae_to_code" begin
    reset_default_graph()
    sess = Session()
    x = rand(6, 3)
    y1 = ae(x, [5, 2], "net")
    y2 = ae(x, [5, 2], "net")
    other = ae(x, [5, 2], "other"; activation = "sigmoid")
    names = [v.name for v in get_collection()]
    @test names == ["net/fully_connected/weights:0", "net/fully_connected/biases:0",
                    "net/fully_connected_1/weights:0", "net/fully_connected_1/biases:0",
                    "other/fully_connected/weights:0", "other/fully_connected/biases:0",
                    "other/fully_connected_1/weights:0", "other/fully_connected_1/biases:0"]
    init(sess)
    Y1, Y2 = run(sess, [y1, y2])
    @test Y1 == Y2 && size(Y1) == (6, 2)
    d = mktempdir()
    file = joinpath(d, "net.mat")
    save(sess, file)
    code = ae_to_code(file, "net")
    Core.eval(Main, Meta.parse(code))
    @test Base.invokelatest(getfield(Main, :nnnet), x) ≈ Y1
    h = dense(constant(x), 4; activation = "relu")
    init(sess)
    @test size(h) == (6, 4) && all(run(sess, h) .>= 0)
end

@testset "fcx: the network and its Jacobian per sample, against finite differences" begin
    reset_default_graph()
    sess = Session()
    dims = [2, 6, 3]
    θ = ae_init(dims) .+ 0.1
    x = rand(4, 2)
    u, du = fcx(x, dims[2:end], θ)
    U, DU = run(sess, [u, du])
    @test U ≈ network(x, dims, θ, tanh) && size(DU) == (4, 3, 2)
    ϵ = 1e-6
    for j in 1:2
        e = zeros(4, 2)
        e[:, j] .= ϵ
        fd = (network(x + e, dims, θ, tanh) - network(x - e, dims, θ, tanh)) / 2ϵ
        @test DU[:, :, j] ≈ fd atol = 1e-7
    end
end

@testset "dropout: drops at the rate, scales the rest, off when not training" begin
    reset_default_graph()
    sess = Session()
    a = ones(200, 50)
    d = run(sess, dropout(a, 0.5, true))
    @test 0.45 < count(iszero, d) / length(d) < 0.55 && all(v -> v == 0 || v ≈ 2.0, d)
    @test run(sess, dropout(a, 0.5, false)) == a
    @test run(sess, dropout(a, 0.5)) == a  # DevPlace.options.training.training is false
    t = placeholder(true)
    @test count(iszero, run(sess, dropout(a, 0.9, t))) > 0.8 * length(a)
    @test run(sess, dropout(a, 0.9, t), t => false) == a
end
