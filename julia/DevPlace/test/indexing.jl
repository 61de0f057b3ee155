# Indexing, `*`, `\` and `'` on tensors as ADCME users write them (issue 19): every expected value
# comes from the same expression on a plain Julia array.

"The number of ops in the default graph."
op_count() = length(tf.get_default_graph().get_operations())

"The error `f()` throws (fails the test if it throws none)."
thrown(f) = try
    f()
    error("expected an error")
catch err
    err
end

@testset "issue 19's wrong numbers are right" begin
    tf.reset_default_graph()
    sess = Session()
    a = [1.0, 2, 3, 4]
    @test run(sess, constant(a)[constant(2)]) === a[2]        # was 3.0: counted from 0
    A = [11.0 12 13; 21 22 23]
    @test run(sess, constant(A)[constant(1), :]) == A[1, :]   # was row 2
    M, b = [2.0 0; 0 4], [2.0, 4.0]
    @test run(sess, constant(M) \ constant(b)) ≈ M \ b        # was [1.0 Inf; Inf 1.0]
    y = [2.0, 4.0]
    @test run(sess, constant(y) * constant(y)') == y * y'     # was [4.0 16.0]
    err = thrown(() -> constant([1.0, 2, 3])[2:5])            # was [2.0, 3.0]: clamped
    @test err isa BoundsError && err.i == (2:5,)
    @test occursin("3-element tensor", sprint(showerror, err)) && occursin("[2:5]", sprint(showerror, err))
    v = Variable(ones(10), name = "my_collect1")
    w = Variable(ones(2), name = "other")
    @test get_collection("my_collect") == [v]                 # was []: names match as in ADCME
    @test get_collection() == [v, w]
    @test get_collection("my_.*1|oth") == [v, w]              # a regular expression, as in ADCME
    @test get_collection(tf.GraphKeys.TRAINABLE_VARIABLES) == [v, w]
end

@testset "tensor indices count from 1: scalars drop the dimension, vectors keep it" begin
    tf.reset_default_graph()
    sess = Session()
    a = collect(1.0:10.0)
    A = reshape(collect(1.0:12.0), 3, 4)
    B = reshape(collect(1.0:24.0), 2, 3, 4)
    ta, tA, tB = constant(a), constant(A), constant(B)
    for T in (Int64, Int32)
        i, j, v = constant(T(2)), constant(T(3)), constant(T[3, 1, 3])
        @test run(sess, ta[i]) === a[2] && run(sess, ta[v]) == a[[3, 1, 3]]
        @test run(sess, tA[i, :]) == A[2, :] && run(sess, tA[:, j]) == A[:, 3]
        @test run(sess, tA[i, j]) === A[2, 3] && run(sess, tA[i, 2:4]) == A[2, 2:4]
        @test run(sess, tA[[1, 3], j]) == A[[1, 3], 3] && run(sess, tA[v, i]) == A[[3, 1, 3], 2]
        @test run(sess, tA[v, v]) == A[[3, 1, 3], [3, 1, 3]]
        @test run(sess, tB[constant(T(1)), i, v]) == B[1, 2, [3, 1, 3]]
        @test run(sess, tA[i]) == A[2, :]                      # one index selects rows (ADCME)
        @test size(tA[i, :]) == (4,) && size(tA[v, i]) == (3,)
    end
    mask = [true, false, true]
    @test run(sess, tA[constant(mask), 2]) == A[mask, 2]       # a Bool tensor is a mask
    @test run(sess, tA[constant(mask), constant([false, true, true, false])]) == A[mask, [2, 3]]
    # the index may itself be computed in the graph, and fed
    p = placeholder(Int64; shape = [])
    @test run(sess, ta[p], p => 7) === a[7] && run(sess, ta[p + 1], p => 7) === a[8]
    # out of range: known only when the graph runs, so it fails then, naming index and size
    for bad in (constant(11), constant(0), constant([1, 11]))
        err = thrown(() -> run(sess, ta[bad]))
        @test err isa PyError && occursin("attempt to access 10-element tensor", err.message)
        @test occursin(bad.name, err.message) && occursin("size", err.message)
    end
    err = thrown(() -> run(sess, tA[constant([true, false]), 1]))
    @test err isa PyError && occursin("as long as dimension 1", err.message)
    err = thrown(() -> ta[constant(2.0)])
    @test err isa PyError && err.type == "TypeError" && occursin("integers or Bools", err.message)
end

@testset "Julia's indices: integers, ranges, end, vectors and masks, as on arrays" begin
    tf.reset_default_graph()
    sess = Session()
    a = collect(10.0:10.0:100.0)
    A = reshape(collect(1.0:12.0), 3, 4)
    B = reshape(collect(1.0:24.0), 2, 3, 4)
    ta, tA, tB = constant(a), constant(A), constant(B)
    mask = [true, false, true, true, false, false, true, false, false, true]
    for i in (3, 2:4, 9:-3:1, 4:3, [3, 4, 5], [5, 1, 5], Int[], mask, BitVector(mask), :)
        @test run(sess, ta[i]) == a[i]
    end
    @test run(sess, ta[end]) === a[end] && run(sess, ta[end-2:end]) == a[end-2:end]
    @test run(sess, ta[begin+1]) === a[2]
    rows = (2, 1:2, 3:-1:1, [3, 1], [true, false, true], :)
    cols = (4, 2:3, 4:-2:1, [4, 1, 1], [false, true, true, false], :)
    for i in rows, j in cols
        @test run(sess, tA[i, j]) == A[i, j]
    end
    @test run(sess, tA[end, end]) === A[end, end] && run(sess, tA[2:end, end-1]) == A[2:end, end-1]
    for (i, j, k) in ((2, 3, 4), (1, :, 2:3), (:, [3, 1], 4), ([true, false], 2:3, [4, 1]))
        @test run(sess, tB[i, j, k]) == B[i, j, k]
    end
    @test run(sess, tA[2, 3, 1]) === A[2, 3, 1] && run(sess, tA[:, 2, 1:1]) == A[:, 2, 1:1]  # trailing 1s
    @test run(sess, ta[4, 1]) === a[4, 1]
    # one index into a matrix selects rows, as in ADCME; `:` is vec (column-major)
    @test run(sess, tA[2]) == A[2, :] && run(sess, tA[[3, 1]]) == A[[3, 1], :]
    @test run(sess, tA[end]) == A[end, :] && run(sess, tA[:]) == vec(A) && run(sess, tB[:]) == vec(B)
    # dtypes survive, and a placeholder with an unknown size is indexed too (checked at run time)
    @test run(sess, constant(Int32[5, 6, 7])[2:3]) == Int32[6, 7]
    x = placeholder(Float64; shape = [nothing, 4])
    @test run(sess, x[2:3, [4, 1]], x => A) == A[2:3, [4, 1]] && run(sess, x[[true, false, true], 2], x => A) == A[[1, 3], 2]
    err = thrown(() -> run(sess, x[5, 1], x => A))
    @test err isa PyError && occursin("at index 5 in dimension 1", err.message)
    # one request, a fixed number of ops, however many elements are selected
    big = constant(collect(1.0:1000.0))
    before = op_count()
    picked = big[collect(1000:-2:1)]
    @test op_count() - before <= 3 && run(sess, picked) == collect(1000.0:-2.0:1.0)
end

@testset "an index out of range is a BoundsError naming the index and the size, never clamped" begin
    tf.reset_default_graph()
    v = constant([1.0, 2.0, 3.0])
    A = constant(ones(2, 3))
    for (x, idx) in ((v, (0,)), (v, (4,)), (v, (2:5,)), (v, (0:2,)), (v, (4:-1:1,)), (v, ([1, 4],)),
                     (v, ([true, false],)), (A, (3, 1)), (A, (1, [1, 4])), (A, (:, 0:1)), (A, (1, 2, 2)),
                     (A, (3,)))
        err = thrown(() -> x[idx...])
        @test err isa BoundsError && err.i == idx
        msg = sprint(showerror, err)
        @test occursin(x === v ? "3-element tensor" : "2×3 tensor", msg)
        @test occursin(string("[", join(map(i -> sprint(Base.show_index, i), idx), ", "), "]"), msg)
    end
    err = thrown(() -> A[1, 1:3, 2:2])                       # Julia: only 1s past the rank
    @test err isa BoundsError
    @test thrown(() -> A[true]) isa ArgumentError
    @test thrown(() -> A[1.5]) isa ArgumentError
    @test thrown(() -> constant(ones(2, 3, 4))[1, 2]) isa BoundsError  # one per dimension
    lst = pycall(pybuiltin("list"), PyObject, [5, 6, 7])   # Python sequences: the same rules
    @test lst[3] == 7 && lst[2:3] == [6, 7] && thrown(() -> lst[0]) isa BoundsError
    @test thrown(() -> lst[2:4]) isa BoundsError
end

@testset "index 0, negative, past `end`: the same BoundsError from every path that takes indices" begin
    tf.reset_default_graph()
    sess = Session()
    v = constant([1.0, 2.0, 3.0])
    A = constant(ones(2, 3))
    @test run(sess, v[end]) == 3.0 && run(sess, scatter_update(v, 3, 9.0)) == [1.0, 2.0, 9.0]
    @test run(sess, scatter_add(A, 2, [true, false, true], [1.0, 1.0])) == [1.0 1 1; 2 1 2]
    @test run(sess, vector([3], [5.0], 3)) == [0.0, 0, 5]
    for i in (0, -1, 4, [1, 4], [0, 2], [true, false])
        for (what, f) in (("getindex", () -> v[i]), ("scatter_update", () -> scatter_update(v, i, 1.0)),
                          ("scatter_sub", () -> scatter_sub(v, i, 1.0)),
                          ("scatter_add on a row", () -> scatter_add(A, 1, i, 1.0)))
            err = thrown(f)
            @test err isa BoundsError
            @test (what == "scatter_add on a row" ? err.i == (1, i) : err.i == (i,))
        end
    end
    @test thrown(() -> scatter_update(A, 3, :, 1.0)) isa BoundsError
    @test thrown(() -> vector([0], [1.0], 3)) isa BoundsError   # a length known when it runs
    ta = write(TensorArray(3), 1, constant(5.0))
    @test run(sess, read(ta, 1)) == 5.0
    for i in (0, -1), f in (() -> read(ta, i), () -> write(ta, i, 1.0))
        err = thrown(f)  # not TensorFlow's "Tried to read from index -1" when the graph runs
        @test err isa BoundsError && err.i == (i,)
    end
end

@testset "iterating or changing a tensor is one clear error, never TensorFlow's" begin
    tf.reset_default_graph()
    t = constant([1.0, 2.0])
    for f in (collect, first, x -> [y for y in x], x -> (x...,), x -> foreach(identity, x),
              x -> sum(abs2, x), x -> Tuple(x), isempty)
        err = thrown(() -> f(t))
        @test err isa PyError && startswith(err.message, "iterate: ") && occursin(t.name, err.message)
        @test !occursin("Iterating over a symbolic", err.message) && occursin("Hint", err.message)
    end
    err = thrown(() -> (t[1] = 3.0))                        # nor is a tensor changed in place
    @test err isa PyError && startswith(err.message, "setindex!: ") && occursin("scatter_update", err.message)
    lst = pycall(pybuiltin("list"), PyObject, [5, 6, 7])   # other Python objects still iterate
    @test collect(lst) == [5, 6, 7] && [x for x in lst] == [5, 6, 7]
end

@testset "A \\ b is a linear solve, as in ADCME" begin
    tf.reset_default_graph()
    sess = Session()
    A = [4.0 1 0; 1 3 1; 0 1 2]
    b = [1.0, 2.0, 3.0]
    B = [1.0 0; 2 1; 3 5]
    @test run(sess, constant(A) \ constant(b)) ≈ A \ b
    @test run(sess, constant(A) \ constant(B)) ≈ A \ B
    @test run(sess, constant(A) \ b) ≈ A \ b && run(sess, A \ constant(B)) ≈ A \ B
    @test size(constant(A) \ constant(b)) == (3,) && size(constant(A) \ constant(B)) == (3, 2)
    T = [1.0 0; 1 1; 1 2]                                    # not square: least squares
    @test run(sess, constant(T) \ constant(b)) ≈ T \ b
    batch = cat(A, 2A, [2.0 0 0; 0 1 0; 0 0 4]; dims = 3)   # k×n×n in TF's order
    tbatch = constant(permutedims(batch, (3, 1, 2)))
    rhs = [1.0 2 3; 4 5 6; 7 8 9]                           # row i: the i-th right-hand side
    x = run(sess, tbatch \ constant(rhs))
    @test all(x[i, :] ≈ batch[:, :, i] \ rhs[i, :] for i in 1:3)
    @test run(sess, constant(Float32.(A)) \ b) ≈ Float32.(A \ b) && eltype(run(sess, constant(Float32.(A)) \ b)) == Float32
    @test run(sess, constant(4.0) \ constant(b)) ≈ 4.0 \ b
    @test thrown(() -> constant(b) \ constant(b)) isa PyError
end

@testset "`*` and `'` as in ADCME: matrix products, outer products, batches" begin
    tf.reset_default_graph()
    sess = Session()
    A = [1.0 2 3; 4 5 6]
    y, z = [2.0, 4.0], [1.0, 10.0, 100.0]
    tA, ty, tz = constant(A), constant(y), constant(z)
    @test run(sess, tA * tz) == A * z && run(sess, tA * tA') == A * A'
    @test run(sess, ty * ty') == y * y' && run(sess, tz * tz') == z * z'
    @test run(sess, ty' * tA) == y' * A && run(sess, ty * constant([1.0 2 3])) == y * [1.0 2 3]
    @test run(sess, tz * tz) == z .* z                       # two vectors: elementwise (ADCME)
    @test run(sess, 2 * tA) == 2 * A && run(sess, tA * 2.0) == A * 2.0
    @test thrown(() -> ty * tA) isa PyError                  # Julia: DimensionMismatch
    C = reshape(collect(1.0:12.0), 2, 2, 3)                  # a batch of two 2×3 matrices
    D = reshape(collect(1.0:12.0), 2, 3, 2)
    r = run(sess, constant(C) * constant(D))
    @test all(r[i, :, :] ≈ C[i, :, :] * D[i, :, :] for i in 1:2)
    # adjoint: a scalar stays, a vector is a row, a batch transposes each matrix
    @test run(sess, constant(3.0)') === 3.0 && size(ty') == (1, 2)
    @test run(sess, constant(C)') == permutedims(C, (1, 3, 2))
    Z = [1.0+2im 3.0; 0.5im 2.0]
    @test run(sess, constant(Z)') == Z' && run(sess, constant([1.0im, 2.0])') == [1.0im, 2.0]'
    # inv as in ADCME: the matrix inverse; of a scalar, 1/x
    S = [4.0 1; 2 3]
    @test run(sess, inv(constant(S))) ≈ inv(S) && run(sess, inv(constant(4.0))) === 0.25
end
