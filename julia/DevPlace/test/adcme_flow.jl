# ADCME's normalizing flows (src/adcme/flow.jl): each flow's log-determinant against the
# Jacobian of its forward map computed by central differences, backward against forward, and
# the flows with closed forms against those formulas computed with plain arrays.

using LinearAlgebra, Statistics

"The Jacobian of the map `f` (a row vector to a row vector) at `x`, by central differences."
function jacobian_by_differences(f, x; h = 1e-6)
    d = length(x)
    return hcat([(f(x + h * (1:d .== j)') - f(x - h * (1:d .== j)'))' / 2h for j in 1:d]...)
end

"""
Check `flow` on rows of `d` numbers: its log-determinant is log|det J| of its forward map, and
backward inverts forward with the opposite log-determinant. Returns the Jacobian.
"""
function check_flow(sess, flow, d; x0 = randn(1, d))
    x = placeholder(Float64; shape = [1, d])
    z, ld = DevPlace.forward(flow, x)
    xb, ldb = DevPlace.backward(flow, z)
    init(sess)
    J = jacobian_by_differences(v -> run(sess, z, x => v), x0)
    z0, ld0, xb0, ldb0 = run(sess, [z, ld, xb, ldb], x => x0)
    @test vec([ld0;])[1] ≈ log(abs(det(J))) atol = 1e-6
    @test xb0 ≈ x0
    @test vec([ldb0;])[1] ≈ -vec([ld0;])[1]
    return J
end

@testset "flows: log-determinants are log|det| of the Jacobian, backward inverts forward" begin
    reset_default_graph()
    sess = Session()
    A, b = [2.0 1.0 0.0; 0.5 3.0 1.0; 0.0 1.0 1.5], [1.0, -2.0, 0.5]
    J = check_flow(sess, LinearFlow(A, b), 3)
    @test J ≈ inv(A)  # x = Az + b
    lf = LinearFlow(3)
    @test lf.A.op.type in ("VariableV2", "VarHandleOp") && size(lf.b) == (1, 3)
    check_flow(sess, AffineFlow(A, b), 3)
    check_flow(sess, AffineConstantFlow(3), 3)
    nets = [x -> fc(x, [8, 2], "slowmaf1"), x -> fc(x, [8, 2], "slowmaf2")]
    J = check_flow(sess, SlowMAF(3, true, nets), 3)
    @test J ≈ tril(J)  # autoregressive: z[i] depends on x[1:i]
    for parity in (false, true)
        J = check_flow(sess, MAF(3, parity, [16, 16]), 3)
        parity && (J = reverse(J; dims = 1))  # z reversed
        @test J ≈ tril(J)
        check_flow(sess, IAF(3, parity, [16]), 3)
    end
    check_flow(sess, Invertible1x1Conv(4), 4)
    for d in (4, 5), parity in (false, true)
        n = parity ? (d + 1) ÷ 2 : d ÷ 2  # the columns transformed
        s_cond = x -> fc(x, [8, n], "half_s$d$parity")
        t_cond = x -> fc(x, [8, n], "half_t$d$parity")
        J = check_flow(sess, AffineHalfFlow(d, parity, s_cond, t_cond), d)
        kept = parity ? (2:2:d) : (1:2:d)  # columns passed on as they are, first or last in z
        @test J[(parity ? (d-length(kept)+1:d) : (1:length(kept))), :] ≈ Matrix(I, d, d)[kept, :]
    end
    check_flow(sess, AffineHalfFlow(5, false), 5)
    K = 4
    ncf = NeuralCouplingFlow(4, x -> fc(x, [8, 2(3K - 1)], "ncf1"), x -> fc(x, [8, 2(3K - 1)], "ncf2"), K)
    check_flow(sess, ncf, 4; x0 = [0.3 -0.5 1.2 -2.0])
    @test check_flow(sess, Permute(4, [2, 0, 3, 1]), 4) ≈ Matrix(I, 4, 4)[[3, 1, 4, 2], :]
    check_flow(sess, TanhFlow(3), 3)
    @test check_flow(sess, AffineScalarFlow(3, 1.0, 2.5), 3) ≈ 2.5I
    @test_throws DimensionMismatch LinearFlow(2, 3, rand(2, 2))
    @test_throws ArgumentError SlowMAF(3, true, nets[1:1])
    @test_throws ArgumentError NeuralCouplingFlow(3, identity, identity)
end

@testset "flows with closed forms: linear, affine, ActNorm, the model's prior log-density" begin
    reset_default_graph()
    sess = Session()
    A, b = [2.0 1.0; 0.5 3.0], [1.0, -2.0]
    x = randn(5, 2)
    z, ld = DevPlace.forward(LinearFlow(A, b), x)
    @test run(sess, z) ≈ (x .- b') / A'
    @test run(sess, ld) ≈ fill(-log(abs(det(A))), 5)
    # Not square: x = Az + b from 1 to 2 dimensions; the log-determinant is -log det(AᵀA)/2.
    A21 = reshape([2.0, 1.0], 2, 1)
    z, ld = DevPlace.forward(LinearFlow(A21), [4.0 2.0])
    @test run(sess, z) ≈ fill(2.0, 1, 1) && run(sess, ld) ≈ [-log(5.0) / 2]
    @test DevPlace.backward(LinearFlow(A21), fill(1.0, 1, 1))[2] === nothing
    acf = AffineConstantFlow(2; shift = false)
    @test acf.t === missing
    z, ld = DevPlace.forward(acf, x)
    init(sess)
    s = run(sess, acf.s)
    @test run(sess, z) ≈ x .* exp.(s) && run(sess, ld) ≈ [sum(s)]
    # ActNorm: the first run sets s and t from the data, so z has mean 0 and std 1 per column.
    an = ActNorm(2)
    data = 3.0 .+ 2.0 .* randn(100, 2)
    z, ld = DevPlace.forward(an, data)
    init(sess)
    z1 = run(sess, z)
    @test z1 ≈ (data .- mean(data; dims = 1)) ./ std(data; dims = 1, corrected = false)
    @test run(sess, an.initialized) == 0
    @test run(sess, z) ≈ z1  # later runs keep s and t
    # The model: prior log-density of the last z plus the flows' log-determinant.
    model = NormalizingFlowModel(DevPlace.MultivariateNormalDiag(loc = zeros(2)), [LinearFlow(A, b)])
    zs, prior_logpdf, logdet = model(x)
    zl = (x .- b') / A'
    @test length(zs) == 2 && run(sess, zs[1]) ≈ x
    @test run(sess, prior_logpdf) ≈ vec(sum(-zl .^ 2 / 2 .- log(2π) / 2; dims = 2))
    @test run(sess, logdet) ≈ fill(-log(abs(det(A))), 5)
    xs, _ = DevPlace.backward(model, zs[end])
    @test run(sess, xs[end]) ≈ x
    @test sprint(show, model) == "( MultivariateNormalDiag )\n\t↓\nLinearFlow (dim = 2)\n\t↓\n(    Data    )"
end

struct ShiftByOne <: FlowOp
    dim::Int
end

@testset "a flow of the user's own: methods of DevPlace.forward and backward" begin
    reset_default_graph()
    sess = Session()
    @test_throws ArgumentError DevPlace.forward(ShiftByOne(2), [1.0 2.0])
    DevPlace.forward(::ShiftByOne, x::Union{Array{<:Real},PyObject}) = (x + 1.0, 0.0)
    DevPlace.backward(::ShiftByOne, z::Union{Array{<:Real},PyObject}) = (z - 1.0, 0.0)
    zs, ld = DevPlace.forward(NormalizingFlow([ShiftByOne(2), ShiftByOne(2)]), [1.0 2.0])
    @test run(sess, zs[end]) == [3.0 4.0] && run(sess, ld) == [0.0]
end
