# ADCME's time integrators (src/adcme/ode.jl) against exact solutions of small ODEs.

using SparseArrays

"The 1×1 sparse matrix [x]."
scalar_matrix(x) = sparse(fill(x, 1, 1))

@testset "rk4, ode45: exact on polynomials in t, e^{-θt} and its gradient in θ" begin
    reset_default_graph()
    sess = Session()
    # dy/dt = t: both methods integrate polynomials of degree <= 4 exactly, at the right times
    for method in (rk4, ode45)
        out = run(sess, method((t, y, θ) -> t, 1.0, 10, 0.0))
        @test size(out) == (11,)
        @test out ≈ (0:0.1:1) .^ 2 / 2 atol = 1e-14
    end
    θ = Variable(2.0)
    y = rk4((t, y, θ) -> -θ * y, 1.0, 100, [1.0, 3.0], θ)
    init(sess)
    @test run(sess, y)[end, :] ≈ [1.0, 3.0] * exp(-2) rtol = 1e-8
    @test run(sess, gradients(y[end, 1], θ)) ≈ -exp(-2) rtol = 1e-6  # d/dθ e^{-θ}
    err = try; DevPlace.runge_kutta((t, y, θ) -> y, 1.0, 10, 1.0; method = "euler"); catch e; e; end
    @test err isa ArgumentError && occursin("rk45", err.msg)
end

@testset "αscheme: a damped oscillator; αscheme_time" begin
    reset_default_graph()
    sess = Session()
    ω, ζ, n, h = 3.0, 0.1, 2000, 1e-3
    M, C, K = scalar_matrix(1.0), scalar_matrix(2ζ * ω), scalar_matrix(ω^2)
    d, v, a = αscheme(M, C, K, zeros(n, 1), [1.0], [0.0], [-ω^2], fill(h, n); ρ = 0.5)
    d_, v_, a_ = run(sess, [d, v, a])
    ωd, t = ω * sqrt(1 - ζ^2), (0:n) * h
    exact = @. exp(-ζ * ω * t) * (cos(ωd * t) + ζ * ω / ωd * sin(ωd * t))
    @test size(d_) == (n + 1, 1)
    @test maximum(abs.(d_[:, 1] - exact)) < 1e-4
    @test maximum(abs.(a_ + 2ζ * ω * v_ + ω^2 * d_)) < 1e-2  # the equation holds
    @test αscheme_time([0.1, 0.2]) ≈ [0.05, 0.2]            # αf = 1/2 at ρ = 1
    @test αscheme_time([0.1, 0.2]; ρ = 0.0) ≈ [0.1, 0.3]    # αf = 0
    @test_throws ArgumentError αscheme(M, C, K, zeros(1, 1), [1.0], [0.0], [0.0], [h];
                                       solve = (A, r) -> A \ r, extsolve = (A, r, i) -> A \ r)
end

@testset "TR_BDF2: ẏ + y = 0 and D₁ẏ + D₀y = f, in Julia and in the graph alike" begin
    reset_default_graph()
    sess = Session()
    nt = 100
    td = TR_BDF2(scalar_matrix(1.0), scalar_matrix(1.0), 1 / nt)
    y = td([1.0], zeros(2nt + 1, 1))
    @test !td.symbolic && size(y) == (nt + 1, 1)
    @test maximum(abs.(y[:, 1] - exp.(-(0:nt) / nt))) < 1e-5  # second order
    tds = constant(td)
    @test tds.symbolic && occursin("symbolic", sprint(show, tds))
    @test run(sess, tds([1.0], zeros(2nt + 1, 1))) ≈ y
    @test run(sess, tds([1.0], [0.0], [0.0], [0.0])) ≈ td([1.0], [0.0], [0.0], [0.0])
    @test_throws DimensionMismatch td([1.0], zeros(2nt, 1))
end

@testset "ExplicitNewmark and Newmark: d̈ + ω²d = 0 gives cos(ωt)" begin
    reset_default_graph()
    sess = Session()
    ω, h, n = 2.0, 2.5e-3, 200
    en = ExplicitNewmark(scalar_matrix(1.0), missing, scalar_matrix(ω^2), h)
    d0, d1 = constant([1.0]), constant([cos(ω * h)])
    for _ in 2:n
        d0, d1 = d1, step(en, d0, d1, [0.0])
    end
    @test run(sess, d1)[1] ≈ cos(ω * n * h) atol = 1e-5
    nm = Newmark(scalar_matrix(1.0), scalar_matrix(0.0), scalar_matrix(ω^2), h)
    d, v, a = constant([1.0]), constant([0.0]), constant([-ω^2])
    for _ in 1:n
        d, v, a = step(nm, d, v, a, [0.0])
    end
    @test run(sess, d)[1] ≈ cos(ω * n * h) atol = 1e-5
    @test run(sess, v)[1] ≈ -ω * sin(ω * n * h) atol = 2e-5
end

@testset "ExplicitNewmark with dense matrices in a while_loop (ADCME's ode page)" begin
    # M d̈ + Z₁ḋ + Z₂d + f = 0 with f chosen so that d = (e^{-t}, e^{-2t}); the step to t_i
    # balances forces at t_{i-1}, row i of F (the page takes row i - 1, a step late: errors 1e-2)
    reset_default_graph()
    M, Z1, Z2 = Float64[1 2; 3 4], Float64[5 6; 7 8], Float64[9 10; 11 12]
    nt = 200
    Δt = 1 / nt
    ts = (0:nt) * Δt
    F = constant([-(5exp.(-ts) + 6exp.(-2ts)) -(7exp.(-ts) + 12exp.(-2ts))])
    en = ExplicitNewmark(M, Z1, Z2, Δt)
    body(i, d) = (i + 1, write(d, i + 1, step(en, read(d, i - 1), read(d, i), F[i])))
    d = write(write(TensorArray(nt + 1), 1, [1.0, 1.0]), 2, [exp(-Δt), exp(-2Δt)])
    _, d = while_loop((i, d) -> i <= nt, body, [constant(2; dtype = Int32), d])
    D = run(Session(), stack(d))
    @test maximum(abs.(D - [exp.(-ts) exp.(-2ts)])) < 1e-3
end
