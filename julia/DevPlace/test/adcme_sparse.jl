# ADCME's sparse matrices (src/adcme/sparse.jl): each family against SparseArrays and
# LinearAlgebra on the same Julia matrices, or against values computed by hand.

using LinearAlgebra, SparseArrays

const SP_A = sparse([1, 1, 2, 3, 4, 4], [1, 3, 2, 4, 1, 4], [2.0, -1.0, 3.0, 4.0, 0.5, 1.0], 4, 4)
const SP_B = sparse([1, 2, 2, 4], [2, 1, 3, 3], [1.0, -2.0, 5.0, 0.25], 4, 3)

@testset "ADCME sparse: constructors and traits" begin
    reset_default_graph()
    sess = Session()
    s = SparseTensor(SP_A)
    @test run(sess, s) == SP_A && run(sess, s) isa SparseMatrixCSC{Float64,Int64}
    @test size(s) == (4, 4) && size(s, 2) == 4 && lastindex(s, 1) == 4 && ndims(s) == 2
    @test sprint(show, s) == "SparseTensor(4, 4)" && !s._diag
    c = copy(s)
    @test c !== s && run(sess, c) == SP_A && eltype(s) == (Int64, Float64)
    # ii, jj, vv: repeated places kept in `o`, added when run or made dense
    d = SparseTensor([1, 1, 2], [2, 2, 1], [1.0, 2.0, 5.0], 2, 3)
    @test run(sess, d) == sparse([1, 2], [2, 1], [3.0, 5.0], 2, 3)
    @test run(sess, d.o.indices) == [0 1; 0 1; 1 0] && run(sess, Array(d)) == [0 3.0 0; 5 0 0]
    @test size(SparseTensor([1, 3], [2, 1], [1.0, 1.0])) == (3, 2)  # sizes from the indices
    t = SparseTensor(constant([2, 1]), constant([1, 2]), constant([7.0, 8.0]), 2, 2)
    @test run(sess, t) == sparse([2, 1], [1, 2], [7.0, 8.0])
    @test run(sess, SparseTensor(constant([1 1; 2 2]), constant([1.0, 2.0]), constant([2, 2]))) ==
          sparse([1, 2], [1, 2], [1.0, 2.0])
    @test run(sess, RawSparseTensor([0 1; 1 0], [3.0, 4.0], 2, 2)) == sparse([1, 2], [2, 1], [3.0, 4.0])
    @test run(sess, SparseTensor([0 2.0; 3 0])) == sparse([0 2.0; 3 0])
    @test run(sess, constant(SP_B)) == SP_B && constant(s) === s && SparseTensor(s) === s
    @test run(sess, dense_to_sparse(Matrix(SP_B))) == SP_B
    @test run(sess, dense_to_sparse(constant(Matrix(SP_B)))) == SP_B
    @test_throws DimensionMismatch SparseTensor([1, 2], [1], [1.0, 2.0], 2, 2)
    @test_throws ArgumentError SparseTensor(constant([1, 2]), constant([1, 2]), [1.0, 2.0])
end

@testset "ADCME sparse: diagonals and zeros" begin
    reset_default_graph()
    sess = Session()
    @test run(sess, spdiag(3)) == sparse(1.0I, 3, 3) && spdiag(3)._diag
    v = constant([1.0, 2.0, 3.0])
    @test run(sess, spdiag(v)) == spdiagm(0 => [1.0, 2.0, 3.0]) && spdiag(v)._diag
    @test run(sess, spdiag([4.0, 5.0])) == spdiagm(0 => [4.0, 5.0])
    @test Matrix(run(sess, spdiag(4, -1 => [1.0, 2, 3], 0 => constant(ones(4)), 2 => [9.0, 8]))) ==
          diagm(-1 => [1.0, 2, 3], 0 => ones(4), 2 => [9.0, 8])
    @test Matrix(run(sess, spdiagm(0 => constant([1.0, 2.0]), 1 => constant([3.0])))) == [1 3; 0 2.0]
    @test run(sess, spzero(2)) == spzeros(2, 2) && run(sess, spzero(2, 3)) == spzeros(2, 3)
    @test_throws PyError spdiag(3, 3 => [1.0])
    @test_throws PyError spdiag(3, 1 => [1.0, 2.0, 3.0])
end

@testset "ADCME sparse: arithmetic and products" begin
    reset_default_graph()
    sess = Session()
    A, B = SparseTensor(SP_A), SparseTensor(SP_B)
    M = reshape(collect(1.0:16.0), 4, 4)
    @test run(sess, -A) == -SP_A && run(sess, A + A) == 2SP_A && run(sess, A - 2A) == -SP_A
    @test run(sess, SP_A + A) == 2SP_A && run(sess, A - SP_A) == 0 * SP_A
    @test run(sess, A + constant(M)) == SP_A + M && run(sess, M - A) == M - SP_A
    @test run(sess, A - M) == SP_A - M && run(sess, constant(M) + A) == M + SP_A
    @test run(sess, 2A) == 2SP_A && run(sess, A * 3) == 3SP_A && run(sess, A / 4) == SP_A / 4
    @test run(sess, A * constant(2.0)) == 2SP_A && run(sess, constant(2.0) * A) == 2SP_A
    @test A + missing === A && (missing - A) isa SparseTensor && A * missing === missing
    @test run(sess, A * M) ≈ SP_A * M && run(sess, A * constant(M)) ≈ SP_A * M
    @test run(sess, A * [1.0, 2, 3, 4]) ≈ SP_A * [1.0, 2, 3, 4]
    @test run(sess, M * A) ≈ M * SP_A && run(sess, constant(M) * A) ≈ M * SP_A
    @test run(sess, A * B) ≈ SP_A * SP_B && run(sess, SP_A * B) ≈ SP_A * SP_B
    @test run(sess, A * SP_B) ≈ SP_A * SP_B && (spdiag(2) * spdiag(2))._diag
    @test run(sess, B') == sparse(SP_B') && size(B') == (3, 4)
    @test_throws PyError A + B  # sizes differ
    @test_throws PyError B * B
end

@testset "ADCME sparse: concatenation, indexing, block updates" begin
    reset_default_graph()
    sess = Session()
    A, B = SparseTensor(SP_A), SparseTensor(SP_B)
    @test run(sess, [A; A]) == [SP_A; SP_A] && run(sess, [A B]) == [SP_A SP_B]
    @test run(sess, [A B; SparseTensor(sparse(ones(2, 7)))]) == [SP_A SP_B; sparse(ones(2, 7))]
    @test run(sess, A[2:3, 1:end]) == SP_A[2:3, 1:end] && run(sess, A[:, [4, 1, 1]]) == SP_A[:, [4, 1, 1]]
    @test run(sess, A[[true, false, false, true], :]) == SP_A[[true, false, false, true], :]
    @test run(sess, A[constant([4, 1]), 1:2]) == SP_A[[4, 1], 1:2]
    @test run(sess, A[1, :]) == Vector(SP_A[1, :]) && run(sess, A[:, 4]) == Vector(SP_A[:, 4])
    @test run(sess, A[3, 4]) == 4.0
    @test_throws BoundsError A[5, 1]
    @test_throws BoundsError A[:, [true, false]]
    C = sparse([1, 2], [1, 2], [10.0, 20.0], 2, 2)
    for (f, g!) in ((scatter_update, (X, i, j, Y) -> (X[i, j] = Y)),
                    (scatter_add, (X, i, j, Y) -> (X[i, j] += Y)))
        expected = copy(SP_A)
        g!(expected, [1, 4], [3, 1], C)
        @test run(sess, f(A, [1, 4], [3, 1], C)) ≈ expected
        @test run(sess, f(SP_A, [1, 4], [3, 1], SparseTensor(C))) ≈ expected
    end
    @test run(sess, scatter_update(A, :, 2, SparseTensor(sparse(ones(4, 1))))) ==
          [SP_A[:, 1] sparse(ones(4)) SP_A[:, 3:4]]
    @test_throws BoundsError scatter_add(A, [5], [1], C)
end

@testset "ADCME sparse: sums, find, compress, zero_out_row" begin
    reset_default_graph()
    sess = Session()
    A = SparseTensor(SP_A)
    @test run(sess, sum(A)) ≈ sum(SP_A)
    @test run(sess, sum(A; dims = 1)) ≈ vec(sum(SP_A; dims = 1))
    @test run(sess, sum(A; dims = 2)) ≈ vec(sum(SP_A; dims = 2))
    ii, jj, vv = find(A)
    # row-major order: (1,1) (1,3) (2,2) (3,4) (4,1) (4,4)
    @test run(sess, [ii, jj, vv]) == [[1, 1, 2, 3, 4, 4], [1, 3, 2, 4, 1, 4], [2.0, -1, 3, 4, 0.5, 1]]
    @test run(sess, rows(A)) == [1, 1, 2, 3, 4, 4] && run(sess, cols(A)) == [1, 3, 2, 4, 1, 4]
    @test run(sess, values(A)) == [2.0, -1, 3, 4, 0.5, 1]
    d = SparseTensor([2, 1, 2], [1, 2, 1], [1.0, 2.0, 3.0], 2, 2)
    c = compress(d)
    @test run(sess, c.o.indices) == [0 1; 1 0] && run(sess, c.o.values) == [2.0, 4.0]
    expected = copy(SP_A)
    expected[[1, 4], :] .= 0
    @test run(sess, zero_out_row(A, [1, 4])) == dropzeros(expected)
    @test run(sess, zero_out_row(SP_A, [2])) == dropzeros(SP_A .* [1, 0, 1, 1])
    @test run(sess, reshape(SparseTensor(sparse([1], [2], [5.0], 2, 2)), 1, 4)) == sparse([1], [2], [5.0], 1, 4)
end

@testset "ADCME sparse: solving, with gradients" begin
    reset_default_graph()
    sess = Session()
    S = SP_A + 5I
    A = SparseTensor(S)
    b = [1.0, 2.0, 3.0, 4.0]
    @test run(sess, A \ b) ≈ S \ b && run(sess, A \ constant(b)) ≈ S \ b
    R = [b 2b]'  # rows of right-hand sides (ADCME's documentation)
    @test run(sess, A \ constant(R)) ≈ (S \ Matrix(R'))'
    @test run(sess, (\)(A, b, "SimplicialLLT")) ≈ S \ b
    @test_throws ArgumentError (\)(A, b, "Cholesky")
    # tu_sparse.md: the identity's solution is rhs, d sum(x)/d rhs = 1, d sum(x)/d vv = -x
    vv = constant([1.0, 1.0, 1.0, 1.0])
    rhs = constant(b)
    sol = SparseTensor([1, 2, 3, 4], [1, 2, 3, 4], vv, 4, 4) \ rhs
    @test run(sess, [sol, gradients(sum(sol), rhs), gradients(sum(sol), vv)]) ≈ [b, ones(4), -b]
    # least squares of a tall matrix: [1 2; 3 4; 5 6] x = [1, 1, 1] has x = [-1, 1]
    T = SparseTensor([1, 1, 2, 2, 3, 3], [1, 2, 1, 2, 1, 2], [1.0, 2, 3, 4, 5, 6], 3, 2)
    @test run(sess, T \ [1.0, 1.0, 1.0]) ≈ [-1.0, 1.0]
    # factorized once, solved twice
    Afac = factorize(A)
    @test run(sess, [Afac \ b, solve(Afac, 2b)]) ≈ [S \ b, S \ 2b]
    @test run(sess, factorize(S)[1]) == S
    singular = SparseTensor(sparse([1], [1], [1.0], 2, 2)) \ [1.0, 1.0]
    err = try; run(sess, singular); nothing; catch e; e; end
    @test err isa PyError && occursin("singular", sprint(showerror, err))
    # tridiagonal: a below, b on, c above the diagonal
    a, m, c = [1.0, 2.0], [6.0, 7.0, 8.0], [3.0, 4.0]
    @test run(sess, trisolve(a, constant(m), c, [1.0, 0, 1])) ≈ Tridiagonal(a, m, c) \ [1.0, 0, 1]
end

@testset "ADCME sparse: assembling rows while the graph runs" begin
    reset_default_graph()
    sess = Session()
    handle = SparseAssembler(7, 3, 0.1)
    op1 = accumulate(handle, 1, [1, 3], [1.0, 2.0])
    op2 = accumulate(handle, 3, [2, 2, 1], [0.5, 0.5, 0.05])  # 0.05 <= tol: left out
    J = assemble(3, 3, [op1; op2])
    @test run(sess, J) == sparse([1, 1, 3], [1, 3, 2], [1.0, 2.0, 1.0], 3, 3)
    @test run(sess, assemble(2, 2, accumulate(SparseAssembler(8, 2), 2, [1], [3.0]))) ==
          sparse([2], [1], [3.0], 2, 2)
    bad = assemble(2, 2, accumulate(SparseAssembler(9, 2), 3, [1], [1.0]))
    err = try; run(sess, bad); nothing; catch e; e; end
    @test err isa PyError && occursin("row 3 is outside 1..2", sprint(showerror, err))
end
