# ADCME's radial basis functions and interp1 (src/adcme/rbf.jl) against the formulas computed
# with plain arrays.

using LinearAlgebra

const PHIS = (r -> exp(-r^2), r -> sqrt(1 + r^2), r -> 1 / (1 + r^2), r -> 1 / sqrt(1 + r^2))

"The radial basis function of the centers (a matrix, one center a row) at the points (rows)."
function rbf_by_hand(points, centers, c, e, d, kind)
    out = [sum(c[j] * PHIS[kind+1](e[j] * norm(points[i, :] - centers[j, :])) for j in 1:length(c))
           for i in 1:size(points, 1)]
    isempty(d) || (out .+= d[1])
    length(d) > 1 && (out .+= points * d[2:end])
    return out
end

@testset "RBF2D and RBF3D: every kind, with and without the linear terms" begin
    reset_default_graph()
    sess = Session()
    xc, yc, zc, c, e = rand(7), rand(7), rand(7), rand(7), rand(7) .+ 0.5
    x, y, z = rand(4), rand(4), rand(4)
    for kind in 0:3, d in (zeros(0), [0.3], [0.3, -1.0, 2.0])
        r = RBF2D(xc, yc; c = c, eps = e, d = d, kind = kind)
        @test run(sess, r(x, y)) ≈ rbf_by_hand([x y], [xc yc], c, e, d, kind)
    end
    for kind in 0:3
        r = RBF3D(xc, yc, zc; c = c, eps = 2.0, d = [1.0, 2.0, 3.0, 4.0], kind = kind)
        @test run(sess, r(x, y, z)) ≈ rbf_by_hand([x y z], [xc yc zc], c, fill(2.0, 7), [1.0, 2.0, 3.0, 4.0], kind)
    end
    # Without c: a variable of zeros, trainable; its gradient is φ's matrix summed over the points.
    r = RBF2D(xc, yc; eps = e)
    @test r.c.op.type in ("VariableV2", "VarHandleOp")
    g = gradients(sum(r(x, y)), r.c)
    init(sess)
    @test run(sess, r(x, y)) == zeros(4)
    @test run(sess, g) ≈ [sum(exp(-(e[j] * hypot(x[i] - xc[j], y[i] - yc[j]))^2) for i in 1:4) for j in 1:7]
    @test sprint(show, r) == "RadialBasisFunction(NumOfCenters=7,NumOfAdditionalTerm=0,CoeffIsVariable=true,ShapeIsVariable=false,AdditionalTermIsVariable=false)"
    @test_throws ArgumentError RBF2D(xc, yc; kind = 4)
    @test_throws ArgumentError RBF3D(xc, yc, zc; d = [1.0, 2.0, 3.0])
    @test_throws DimensionMismatch RBF2D(xc, yc[1:6])
    @test_throws DimensionMismatch RBF2D(xc, yc; c = rand(3))
end

@testset "interp1: piecewise linear between the points, the ends included, refused outside" begin
    reset_default_graph()
    sess = Session()
    x = [0.0, 0.5, 2.0, 3.0]
    v = [1.0, 2.0, -1.0, 5.0]
    xq = [0.0, 0.25, 0.5, 1.25, 2.0, 2.5, 3.0]
    @test run(sess, interp1(x, v, xq)) ≈ [1.0, 1.5, 2.0, 0.5, -1.0, 2.0, 5.0]
    vt = constant(v)
    # Each value weighs the two ends of its interval: at 1.25 half of v[2] and half of v[3].
    g = gradients(interp1(x, vt, [1.25])[1], vt)  # TensorFlow's sparse gradient of a gather
    @test run(sess, tf.convert_to_tensor(g)) ≈ [0.0, 0.5, 0.5, 0.0]
    p = placeholder(Float64; shape = [nothing])
    @test run(sess, interp1(p, v, [2.75]), p => x) ≈ [3.5]
    err = try
        run(sess, interp1(x, v, [1.0, 3.5, -1.0]))
        nothing
    catch e
        e
    end
    @test err isa PyError && occursin("interp1: interpolation points outside the range", sprint(showerror, err))
    @test occursin("3.5 -1", sprint(showerror, err))
end
