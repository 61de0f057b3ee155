# ADCME's ops and random files on tensors, each against plain Julia (LinearAlgebra, Statistics).

using LinearAlgebra, Statistics

@testset "ADCME activations: numbers and tensors agree" begin
    reset_default_graph()
    sess = Session()
    xs = [-2.0, -0.5, 0.0, 0.7, 3.0]
    t = constant(xs)
    for fn in (sigmoid, relu, relu6, leaky_relu, selu, elu, softsign, softplus, swish,
               hard_sigmoid, hard_swish)
        r = run(sess, fn(t))
        @test r ≈ fn.(xs) && eltype(r) == Float64 && size(r) == size(xs)
        @test fn(0.7) isa Float64
    end
    @test run(sess, relu6(constant(8.0))) == 6.0 == relu6(8.0)
    @test run(sess, leaky_relu(t; alpha = 0.2)) ≈ leaky_relu.(xs)
    @test eltype(run(sess, sigmoid(constant(Float32[1])))) == Float32
    A = [1.0 -2.0; 3.0 -4.0]
    r = run(sess, softmax(constant(A)))
    @test r ≈ exp.(A) ./ sum(exp.(A); dims = 2)
    @test run(sess, softmax(constant(A); dims = 1)) ≈ exp.(A) ./ sum(exp.(A); dims = 1)
    @test run(sess, concat_relu(constant(xs))) == relu.([xs -xs])
    @test run(sess, concat_relu(constant(A))) == relu.([A -A])
    @test run(sess, concat_elu(constant(xs))) ≈ elu.([xs -xs])
    @test run(sess, concat_hard_swish(constant(xs))) ≈ hard_swish.([xs -xs])
    F = run(sess, fourier(constant(xs), 2))
    @test F ≈ [sin.(xs) cos.(xs) sin.(xs) cos.(xs)]
end

@testset "ADCME types, shapes, stacking" begin
    reset_default_graph()
    sess = Session()
    a = constant([1.5, 2.5])
    @test get_dtype(cast(a, Float32)) == Float32 && get_dtype(cast(Int32, a)) == Int32
    @test run(sess, cast(Int64, a)) == [1, 2]
    @test size(squeeze(constant(ones(1, 3, 1)))) == (3,)
    @test size(squeeze(constant(ones(1, 3, 1)); dims = 1)) == (3, 1)
    A = constant(rand(10))
    B = constant(rand(10, 3))
    @test size(stack([A, A])) == (2, 10) && size(stack([A, A]; dims = 2)) == (10, 2)
    @test run(sess, stack([A, 2A])) == permutedims(hcat(run(sess, A), 2run(sess, A)))
    @test size(concat([A, A]; dims = 1)) == (20,) && size(concat([B, B]; dims = 2)) == (10, 6)
    @test size(concat([B, B], 0)) == (20, 3)  # a positional axis is TensorFlow's, from 0
    @test run(sess, concat([constant(1.0), constant(2.0)])) == [1.0, 2.0]
    us = unstack(B; dims = 2)
    @test length(us) == 3 && size(us[1]) == (10,) && run(sess, us[2]) == run(sess, B)[:, 2]
    M = [1 2 3; 4 5 6.0]
    @test run(sess, pad(M, [1 0; 0 2])) == [zeros(1, 5); M zeros(2, 2)]
    @test run(sess, pad(constant(M), [0 1; 1 0]; constant_values = 9.0)) == [9 1 2 3; 9 4 5 6; 9 9 9 9.0]
    @test run(sess, rvec(constant(M))) == reshape(M, 1, :) && size(rvec(constant(M))) == (1, 6)
    @test run(sess, cvec(constant(M))) == reshape(M, :, 1)
    @test run(sess, rvec(constant([1.0, 2.0]))) == [1.0 2.0]
    parts = split(constant(reshape(collect(1.0:12), 6, 2)), 3)
    @test length(parts) == 3 && run(sess, parts[2]) == [3 9; 4 10.0]
    parts = split(constant(rand(2, 6)), [1, 5]; dims = 2)
    @test size.(parts) == [(2, 1), (2, 5)]
    a2 = rand(10, 2)
    @test run(sess, reverse(constant(a2); dims = 1)) == reverse(a2; dims = 1)
    @test run(sess, reverse(constant(a2))) == reverse(a2; dims = 2)
end

@testset "ADCME assign, group, clip" begin
    reset_default_graph()
    sess = Session()
    a, b = Variable(1.0), Variable(0.5)
    ops = group_assign([a, b], [2.0, 3.0])
    @test ops isa Vector && length(ops) == 2
    A = Variable(rand(3, 3))
    g = group(assign(A, ones(3, 3)), A + A)
    init(sess)
    run(sess, ops)
    @test run(sess, [a, b]) == [2.0, 3.0]
    run(sess, assign([a, b], [4.0, 5.0]))
    @test run(sess, [a, b]) == [4.0, 5.0]
    run(sess, g)
    @test run(sess, A) == ones(3, 3)
    @test run(sess, clip(constant(3.0), 1.0, 2.0)) == 2.0
    x = rand(5) .* 4 .- 2
    @test run(sess, clip(constant(x), -1, 1)) == clamp.(x, -1, 1)
    @test run(sess, clip([constant(3.0), constant(-3.0)], -1.0, 1.0)) == [1.0, -1.0]
end

@testset "ADCME scatter updates, indices from 1" begin
    reset_default_graph()
    sess = Session()
    v = rand(10)
    t = constant(v)
    for (idx, upd) in ((3, 2.0), ([1, 4, 5], [1.0, 2, 3]), (2:4, [1.0, 2, 3]),
                       ((1:10) .> 8, [7.0, 8.0]), (:, collect(1.0:10)))
        for (f, op) in ((scatter_add, +), (scatter_sub, -), (scatter_update, (_, u) -> u))
            expected = copy(v)
            i = idx isa Colon ? (1:10) : idx
            expected[i] = op.(v[i], upd)
            r = run(sess, f(t, idx, upd))
            @test r ≈ expected && size(r) == (10,)
        end
    end
    # tensor indices (from 1), gradients to the vector and the updates
    A = constant(ones(10))
    B = constant(ones(3))
    ind = constant([2, 4, 6]; dtype = Int32)
    C = scatter_add(A, ind, B)
    @test run(sess, C) == [1, 2, 1, 2, 1, 2, 1, 1, 1, 1.0]
    @test run(sess, gradients(sum(C), B)) == ones(3) && run(sess, gradients(sum(C), A)) == ones(10)
    C = scatter_update(A, ind, 3B)
    @test run(sess, gradients(sum(C), A)) == [1, 0, 1, 0, 1, 0, 1, 1, 1, 1.0]
    # blocks of a matrix
    M = rand(4, 5)
    T = constant(M)
    for (rows, cols) in ((2, 3), ([1, 3], 2:4), (1:2, :), (:, [5]), ([true, false, false, true], 1))
        nr = length(rows isa Colon ? (1:4) : rows isa AbstractVector{Bool} ? findall(rows) : rows)
        nc = length(cols isa Colon ? (1:5) : cols)
        U = rand(nr, nc)
        expected = copy(M)
        ri = rows isa Colon ? (1:4) : rows isa Integer ? (rows:rows) : rows
        ci = cols isa Colon ? (1:5) : cols isa Integer ? (cols:cols) : cols
        expected[ri, ci] .+= U
        @test run(sess, scatter_add(T, rows, cols, U)) ≈ expected
        expected[ri, ci] .= U
        @test run(sess, scatter_update(T, rows, cols, U)) ≈ expected
    end
    @test run(sess, scatter_sub(T, 1, 1, 1.0))[1, 1] ≈ M[1, 1] - 1
    @test get_dtype(scatter_add(constant(Float32[1, 2]), 1, 1.0)) == Float32
    # ADCME's vector
    m = zeros(20)
    m[2:11] = rand(10)
    @test run(sess, vector(2:11, m[2:11], 20)) == m
    @test run(sess, vector(constant([1, 3]), constant([5.0, 6.0]), 3)) == [5.0, 0.0, 6.0]
end

@testset "ADCME linear algebra" begin
    reset_default_graph()
    sess = Session()
    A = rand(4, 4) + 4I
    tA = constant(A)
    @test run(sess, det(tA)) ≈ det(A) && run(sess, tr(tA)) ≈ tr(A)
    @test run(sess, diag(tA)) == diag(A) && run(sess, diagm(constant([1.0, 2.0]))) == diagm(0 => [1.0, 2.0])
    for k in -3:3
        @test run(sess, tril(tA, k)) == tril(A, k) && run(sess, triu(tA, k)) == triu(A, k)
    end
    R = rand(5, 3)
    @test run(sess, tril(constant(R), 1)) == tril(R, 1) && run(sess, triu(constant(R), -1)) == triu(R, -1)
    batch = rand(2, 3, 3)
    @test run(sess, tril(constant(batch)))[2, :, :] == tril(batch[2, :, :])
    @test run(sess, norm(constant([3.0, 4.0]))) ≈ 5.0
    @test run(sess, norm(constant([3.0, -4.0]), 1)) ≈ 7.0
    x, y = rand(5), rand(5)
    @test run(sess, dot(constant(x), constant(y))) ≈ dot(x, y)
    @test run(sess, dot(x, constant(y))) ≈ dot(x, y) && run(sess, dot(constant(x), y)) ≈ dot(x, y)
    @test run(sess, einsum("ij,jk->ik", tA, tA)) ≈ A * A
    S = rand(6, 4)
    r = svd(constant(S))
    @test r isa DevPlace.TFSVD
    U, s, Vt = run(sess, [r.U, r.S, r.Vt])
    @test size(U) == (6, 4) && size(s) == (4,) && U * Diagonal(s) * Vt ≈ S && s ≈ svdvals(S)
    L = tril(A)
    b = rand(4)
    @test run(sess, triangular_solve(constant(L), constant(b))) ≈ L \ b
    @test run(sess, triangular_solve(constant(L), constant(reshape(b, 4, 1)))) ≈ L \ reshape(b, 4, 1)
    for a in (rand(10, 5), rand(10, 10))
        rhs = rand(7, 10)
        sol = run(sess, solve_batch(a, rhs))
        @test sol ≈ (a \ rhs')' && size(sol) == (7, size(a, 2))
    end
    P, Q = rand(6, 3, 4), rand(6, 4, 2)
    expected = cat([P[i, :, :] * Q[i, :, :] for i in 1:6]...; dims = 3)
    @test run(sess, batch_matmul(P, Q)) ≈ permutedims(expected, (3, 1, 2))
    q = rand(6, 4)
    @test run(sess, batch_matmul(constant(P), q)) ≈ vcat([(P[i, :, :] * q[i, :])' for i in 1:6]...)
    @test run(sess, tA + I) ≈ A + I && run(sess, tA - I) ≈ A - I
    @test run(sess, I - tA) ≈ I - A && run(sess, 2I + tA) ≈ 2I + A
    C = [1.0+2im 3.0; 0.5im 2.0]
    @test run(sess, real(constant(C))) == real(C) && run(sess, imag(constant(C))) == imag(C)
    z = rand(ComplexF64, 8)
    @test run(sess, fft(constant(z))) ≈ [sum(z[n+1] * cis(-2π * k * n / 8) for n in 0:7) for k in 0:7]
    @test run(sess, ifft(fft(constant(z)))) ≈ z
end

@testset "ADCME searching, sorting, statistics" begin
    reset_default_graph()
    sess = Session()
    A = rand(10, 3)
    tA = constant(A)
    @test run(sess, argmax(tA; dims = 2)) == [argmax(A[i, :]) for i in 1:10]
    @test run(sess, argmin(tA; dims = 1)) == [argmin(A[:, j]) for j in 1:3]
    @test run(sess, argmax(constant([1.0, 5.0, 2.0]))) === 2
    @test run(sess, sort(tA; dims = 1)) == sort(A; dims = 1)
    @test run(sess, sort(tA; rev = true, dims = 2)) == sort(A; dims = 2, rev = true)
    v = [3.0, 1.0, 2.0]
    @test run(sess, argsort(constant(v))) == sortperm(v)
    @test run(sess, argsort(constant(v); rev = true)) == sortperm(v; rev = true)
    @test run(sess, argsort(tA; dims = 1))[:, 2] == sortperm(A[:, 2])
    values, indices = run(sess, topk(constant([1.0, 5.0, 3.0, 4.0]), 2))
    @test values == [5.0, 4.0] && indices == [1, 3]  # TensorFlow's indices, from 0, as ADCME
    @test run(sess, std(tA)) ≈ std(A; corrected = false)
    @test run(sess, std(tA; dims = 1)) ≈ vec(std(A; dims = 1, corrected = false))
    @test run(sess, lgamma(constant([1.0, 4.0]))) ≈ [0.0, log(6.0)]
    @test run(sess, lgamma(4.0)) ≈ log(6.0)
    B = [0.8 0.2 0.9; 0.1 0.7 0.3]
    @test run(sess, findall(constant(B) > 0.5)) == [1 1; 1 3; 2 2]
    @test run(sess, findall(constant([0.2, 0.8, 0.9]) > 0.5)) == [2, 3]
    @test run(sess, diff(tA; dims = 1)) ≈ diff(A; dims = 1)
    @test run(sess, diff(tA; dims = 2)) ≈ diff(A; dims = 2)
    @test run(sess, diff(constant(v))) == diff(v)
    @test run(sess, repeat(constant(2.0), 2)) == [2.0, 2.0]
    @test run(sess, repeat(constant(2.0), 1, 2)) == [2.0 2.0]
    for a in (rand(2), rand(2, 4))
        @test run(sess, repeat(constant(a), 2)) == repeat(a, 2)
        @test run(sess, repeat(constant(a), 3, 2)) == repeat(a, 3, 2)
    end
    u = rand(10)
    for (f, g) in ((rollsum, sum), (rollmean, mean), (rollstd, std), (rollvar, var))
        @test run(sess, f(u, 4)) ≈ [g(u[i:i+3]) for i in 1:7]
    end
    @test_throws ArgumentError rollsum(u, 1)
    logits = rand(4, 3)
    labels = [2, 1, 2, 3]
    o1 = run(sess, softmax_cross_entropy_with_logits(logits, labels))
    o2 = run(sess, softmax_cross_entropy_with_logits(logits, Float64[j == l for l in labels, j in 1:3]))
    expected = [-log(exp(logits[i, labels[i]]) / sum(exp.(logits[i, :]))) for i in 1:4]
    @test o1 ≈ expected && o2 ≈ expected
end

@testset "ADCME map and pmap over the first dimension" begin
    reset_default_graph()
    sess = Session()
    a = constant([1.0, 2.0, 3.0])
    @test run(sess, map(x -> x^2, a)) == [1.0, 4.0, 9.0]
    M = rand(4, 3)
    @test run(sess, map(x -> sum(x), constant(M))) ≈ vec(sum(M; dims = 2))
    @test run(sess, map(x -> x[1] + x[2], [a, a]; dtype = Float64)) == [2.0, 4.0, 6.0]
    x = constant(ones(10))
    @test run(sess, pmap(x -> 2.0 * x, x)) == fill(2.0, 10)
    @test run(sess, pmap(x -> x[1] + x[2], [x, x])) == fill(2.0, 10)
    y3 = pmap(1:10, x) do z
        z[2] + cast(Float64, z[1])
    end
    @test run(sess, y3) == collect(2.0:11.0)
end

@testset "ADCME random: shapes, types, moments" begin
    reset_default_graph()
    seed!(7)
    sess = Session()
    n = 20_000
    m(x) = sum(x) / length(x)
    for shape in ((10,), (10, 5))
        for f in (uniform, normal)
            r = run(sess, f(shape...))
            @test size(r) == shape && eltype(r) == Float64
        end
    end
    @test run(sess, uniform()) isa Float64 && size(normal()) == ()
    @test eltype(run(sess, normal(3; dtype = Float32))) == Float32
    @test size(normal([2, 3])) == (2, 3) && size(normal((2, 3))) == (2, 3)
    # means of each distribution (tensorflow_probability's parameters), 4 standard errors
    cases = ((uniform, (low = 2.0, high = 4.0), 3.0, 1 / sqrt(3)),
             (normal, (loc = 1.0, scale = 2.0), 1.0, 2.0),
             (beta, (concentration1 = 2.0, concentration0 = 3.0), 0.4, 0.2),
             (bernoulli, (probs = 0.2,), 0.2, 0.4),
             (gamma, (concentration = 3.0, rate = 2.0), 1.5, sqrt(3) / 2),
             (truncatednormal, (loc = 0.0, scale = 1.0, low = 0.0, high = 10.0), sqrt(2 / π), 0.61),
             (DevPlace.binomial, (total_count = 10, probs = 0.3), 3.0, sqrt(2.1)),
             (chi2, (df = 5,), 5.0, sqrt(10)),
             (chi, (df = 2,), sqrt(π / 2), 0.66),
             (exponential, (rate = 2.0,), 0.5, 0.5),
             (gumbel, (loc = 0.0, scale = 1.0), Base.MathConstants.eulergamma, π / sqrt(6)),
             (halfnormal, (scale = 1.0,), sqrt(2 / π), 0.61),
             (inversegamma, (concentration = 4.0, scale = 3.0), 1.0, 0.71),
             (inversegaussian, (loc = 1.0, concentration = 2.0), 1.0, sqrt(0.5)),
             (kumaraswamy, (concentration1 = 1.0, concentration0 = 1.0), 0.5, 0.29),
             (pareto, (concentration = 4.0, scale = 1.0), 4 / 3, 0.48),
             (sinharcsinh, (loc = 0.0, scale = 1.0, skewness = 0.0, tailweight = 1.0), 0.0, 1.0),
             (studentt, (df = 10, loc = 1.0, scale = 1.0), 1.0, 1.12),
             (vonmises, (loc = 1.0, concentration = 5.0), 1.0, 0.5),
             (poisson, (rate = 3.0,), 3.0, sqrt(3)))
    for (f, params, μ, σ) in cases
        r = run(sess, f(n; params...))
        @test size(r) == (n,) && eltype(r) == Float64
        @test abs(m(r) - μ) < 4σ / sqrt(n) || (f, m(r), μ)
    end
    for f in (cauchy, halfcauchy, horseshoe)  # no mean: the median
        r = run(sess, f(n; scale = 1.0))
        @test size(r) == (n,) && abs(sort(r)[n÷2] - (f === cauchy || f === horseshoe ? 0.0 : 1.0)) < 0.05
    end
    @test all(x -> x in (0.0, 1.0), run(sess, bernoulli(10; probs = 0.5)))
    @test size(gamma(4, 2; concentration = [1.0, 2.0, 3.0])) == (4, 2, 3)  # then the parameters' shape
    err = try; gamma(3; rate = 1.0); catch e; e; end
    @test err isa PyError && occursin("concentration", err.message)
    # categorical and choice
    c = run(sess, categorical(5; logits = [0.0, 0.0, 100.0]))
    @test c == fill(3, 5) && eltype(c) == Int64
    @test all(1 .<= run(sess, categorical(50)) .<= 50)
    X = reshape(collect(1.0:20), 10, 2)
    rows = run(sess, choice(X, 4))
    @test size(rows) == (4, 2) && allunique(rows[:, 1]) && all(r -> r[2] == r[1] + 10, eachrow(rows))
    @test size(run(sess, choice(X, 30; replace = true))) == (30, 2)
    # distribution objects: rand and logpdf
    d = DevPlace.Normal(1.0, 2.0)
    @test size(rand(d, 3, 2)) == (3, 2) && size(rand(d)) == () && size(rand(d, (2, 3))) == (2, 3)
    r = run(sess, rand(d, 20_000))
    @test abs(m(r) - 1.0) < 4 * 2.0 / sqrt(20_000)
    @test run(sess, logpdf(d, 0.5)) ≈ -0.5 * (0.25)^2 - log(2.0) - 0.5 * log(2π)
    @test run(sess, logpdf(DevPlace.Gamma(2.0, 3.0), [1.0, 2.0])) ≈ @. 2log(3) + log([1.0, 2.0]) - 3 * [1.0, 2.0]
    @test run(sess, logpdf(DevPlace.Poisson(rate = 2.0), 3.0)) ≈ 3log(2) - 2 - log(6)
    @test size(rand(DevPlace.MultivariateNormalDiag([0.0, 1.0], [1.0, 2.0]), 4)) == (4, 2)
    @test_throws ArgumentError DevPlace.Normal(1.0, 2.0, 3.0)
end
