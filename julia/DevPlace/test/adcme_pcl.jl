# ADCME's physics constrained learning (src/adcme/pcl.jl): Hessians propagated backwards,
# checked against Hessians computed by hand or by finite differences; the finite-difference
# checks themselves.

using LinearAlgebra, SparseArrays

@testset "test_jacobian, test_hessian: second order errors for a right Jacobian, first for a wrong one" begin
    right(x) = (x .^ 2, diagm(2x))
    wrong(x) = (x .^ 2, diagm(2x .+ 0.1))
    x0 = [0.3, 1.2, -0.7]
    err1, err2 = test_jacobian(right, x0; showfig = false)
    @test all(err1 .> err2)
    @test all(0.5e-2 .< err2[2:end] ./ err2[1:end-1] .< 2e-2)  # O(γ²): 100 times less per step
    @test all(0.05 .< err1[2:end] ./ err1[1:end-1] .< 0.2)     # O(γ)
    _, err2_wrong = test_hessian(wrong, x0; showfig = false)
    @test 0.05 < err2_wrong[end] / err2_wrong[end-1] < 0.2  # once γ² no longer dominates
    mktempdir() do dir
        cd(dir) do
            test_jacobian(right, x0)
            @test read("test.png")[1:8] == b"\x89PNG\r\n\x1a\n"
        end
    end
end

@testset "pcl_square_sum, pcl_linear_op, pcl_compress by hand" begin
    @test pcl_square_sum(3) == [2.0 0 0; 0 2 0; 0 0 2]
    @test pcl_square_sum(2; scaling = 0.5) == [1.0 0; 0 1]
    J = [1.0 2; 3 4]
    @test pcl_linear_op(J, pcl_square_sum(2)) == 2 * [5.0 11; 11 25]
    indices = [1 1; 2 2; 1 1; 1 2]
    Jc = pcl_compress(indices)  # kept in row-major order: (1,1), (1,2), (2,2)
    @test Jc == [1.0 0 0; 0 0 1; 1 0 0; 0 1 0]
    reset_default_graph()
    sess = Session()
    v = [1.0, 2.0, 3.0, 4.0]
    compressed = compress(RawSparseTensor(constant(indices) - 1, constant(v), 2, 2))
    @test run(sess, compressed.o.values) == Jc' * v  # [4, 4, 2]
end

@testset "pcl_sparse_solve: the Hessian of sum(u²), u = A(vals) \\ f, by finite differences" begin
    indices = [1 1; 2 2; 3 3; 1 2; 3 1]
    vals, f = [4.0, 5.0, 6.0, 1.0, -2.0], [1.0, 2.0, 3.0]
    solution(a) = sparse(indices[:, 1], indices[:, 2], a, 3, 3) \ f
    function gradient(a)  # of sum(u²) in the values: -x[rows] .* u[cols], x = A' \ 2u
        u = solution(a)
        x = sparse(indices[:, 1], indices[:, 2], a, 3, 3)' \ (2u)
        return -x[indices[:, 1]] .* u[indices[:, 2]]
    end
    h = 1e-6
    fd = hcat([(gradient(vals + h * e) - gradient(vals - h * e)) / 2h
               for e in eachcol(Matrix(1.0I, 5, 5))]...)
    u = solution(vals)
    H = pcl_sparse_solve(indices, vals, u, pcl_square_sum(3), 2u)
    @test H ≈ H'
    @test H ≈ fd rtol = 1e-6
end

@testset "pcl_hessian: the Hessian of sum((x² - c)²) is diag(12x² - 4c)" begin
    reset_default_graph()
    sess = Session()
    x0, c = [0.5, -1.0, 2.0], [1.0, 2.0, 0.5]
    x = placeholder(x0)
    y = x^2
    loss = sum((y - c)^2)
    H, W = pcl_hessian(y, x, loss)
    @test run(sess, H, x => x0, W => pcl_square_sum(3)) ≈ diagm(12x0 .^ 2 - 4c)
    @test_throws ArgumentError pcl_hessian(reshape(y, (1, 3)), x, loss)
end
