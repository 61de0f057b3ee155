# What ADCME users expect: Julia's number types, the math they write, and a REPL that shows
# readable summaries.

const TYPES_OF = Dict(Float64 => "float64", Float32 => "float32", Int64 => "int64",
                      Int32 => "int32", Bool => "bool")

@testset "Julia values make tensors of their own type and come back as it" begin
    tf.reset_default_graph()
    sess = Session()
    for x in (1.1, 1.1f0, 7, Int32(7), true, π, 1 // 4, big(3))
        T = x isa Union{Float64,Float32,Int64,Int32,Bool} ? typeof(x) : x isa Integer ? Int64 : Float64
        for make in (constant, Variable, placeholder)
            t = make(x)
            @test t.dtype.base_dtype.name == TYPES_OF[T]
        end
        @test run(sess, constant(x)) === T(x)
        @test run(sess, placeholder(x)) === T(x)
    end
    @test run(sess, constant(1.1)) === 1.1  # not 1.100000023841858
    for T in (Float64, Float32, Int64, Int32, Bool)
        A = T[1 0; 1 1]
        @test constant(A).dtype.name == TYPES_OF[T]
        @test run(sess, constant(A)) == A && eltype(run(sess, constant(A))) == T
        @test run(sess, placeholder(A)) == A && size(placeholder(A)) == (2, 2)
    end
    @test constant(1.0; dtype = Float32).dtype == tf.float32  # an explicit dtype wins
    @test Variable(1; dtype = tf.float64).dtype.base_dtype == tf.float64
    # the seed of issue 12: a Float64 variable times a Float64 matrix
    v = Variable(1.0)
    M = rand(3, 3)
    init(sess)
    @test run(sess, v * constant(M)) == M
    p = placeholder(2.0)
    @test run(sess, p * 3) === 6.0 && run(sess, p * 3, p => 5.0) === 15.0
end

@testset "a tensor and a Julia number: the tensor's type wins, $T tensor" for T in (Float64, Float32)
    tf.reset_default_graph()
    sess = Session()
    t = constant(T[1.5, 2.0])
    for x in (2.0, 2.0f0, 2, Int32(2), true), op in (+, -, *, /, max, min)
        r = run(sess, op(t, x))
        @test eltype(r) == T && r ≈ op.(T[1.5, 2.0], T(x))
        r = run(sess, op(x, t))
        @test eltype(r) == T && r ≈ op.(T(x), T[1.5, 2.0])
        @test eltype(run(sess, broadcast(op, t, x))) == T
    end
    @test run(sess, t .^ 2) == T[1.5, 2.0] .^ 2
    s = constant(T(3))
    @test run(sess, s * 2.0) === T(6) && run(sess, 1 + s) === T(4) && run(sess, s / 2) === T(1.5)
end

@testset "integer tensors stay integers, $T tensor" for T in (Int64, Int32)
    tf.reset_default_graph()
    sess = Session()
    t = constant(T[3, 4])
    for x in (2, Int32(2), true), op in (+, -, *, max, min)
        r = run(sess, op(t, x))
        @test eltype(r) == T && r == op.(T[3, 4], T(x))
        r = run(sess, op(x, t))
        @test eltype(r) == T && r == op.(T(x), T[3, 4])
    end
    @test run(sess, constant(T(3)) + 2) === T(5)
    @test run(sess, t .> 3) == [false, true]
    err = try; t * 2.5; catch e; e; end  # a fraction cannot become an integer: TF says so
    @test err isa PyError && occursin("2.5", err.message)
end

@testset "size, length, ndims and reductions with ADCME's dims (dropped)" begin
    tf.reset_default_graph()
    sess = Session()
    A = reshape(collect(1.0:24.0), 2, 3, 4)
    t = constant(A)
    @test size(t) == size(A) && size(t, 2) == 3 && size(t, 4) == 1
    @test length(t) == 24 && ndims(t) == 3
    @test length(constant(1.0)) == 1 && size(constant(1.0)) == ()
    x = placeholder(Float64; shape = [nothing, 3])
    @test size(x) == (nothing, 3) && ndims(x) == 2
    err = try; length(x); catch e; e; end
    @test err isa PyError && occursin("static shape", err.message) && occursin("tf.size", err.message)
    for f in (sum, prod, maximum, minimum, mean)
        @test run(sess, f(t)) ≈ f(A)
        for dims in (1, 2, 3, (1, 2), (2, 3), (1, 3), (1, 2, 3), [1, 3])
            expected = dropdims(f(A; dims = Tuple(dims)); dims = Tuple(dims))
            @test run(sess, f(t; dims = dims)) ≈ (ndims(expected) == 0 ? expected[] : expected)
            @test size(f(t; dims = dims)) == size(expected)
            kept = run(sess, f(t; dims = dims, keepdims = true))  # TF's keyword passes through
            @test kept ≈ f(A; dims = Tuple(dims)) && size(kept) == size(f(A; dims = Tuple(dims)))
        end
    end
    @test run(sess, sum(constant([1 2 3; 4 5 6]); dims = 1)) == [5, 7, 9]  # issue 19: a 3-vector
    @test run(sess, maximum(constant([1 2 3; 4 5 6]); dims = 2)) == [3, 6]
    @test run(sess, mean(constant([1, 2]))) === 1.5          # as Julia: not integer division
    @test run(sess, mean(constant([1 2; 4 4]); dims = 2)) == vec(mean([1 2; 4 4]; dims = 2))
    @test run(sess, sum(constant([true, false, true]))) === 2
    @test sum(t; name = "total").name == "total:0"
    err = try; sum(t; dims = 4); catch e; e; end            # past the rank: an error, as in ADCME
    @test err isa ArgumentError && occursin("from 1 to 3 (the tensor has 3), got 4", err.msg)
    @test_throws ArgumentError sum(t; dims = "1")
    @test_throws ArgumentError sum(t; dims = 0)
    @test_throws ArgumentError mean(t; dims = (1, true))
    err = try; sum(t; axis = 0); catch e; e; end
    @test err isa ArgumentError && occursin("dims", err.msg)
end

@testset "every function's dims: one rule (from 1, checked alike), one error" begin
    tf.reset_default_graph()
    sess = Session()
    A = [1.0 5.0 3.0; 4.0 2.0 6.0]
    t = constant(A)
    # the same dims, the same answer as on the Julia array (or as ADCME, dimension dropped)
    @test run(sess, argmax(t; dims = 2)) == [2, 3]
    @test run(sess, softmax(t; dims = 1)) ≈ exp.(A) ./ sum(exp.(A); dims = 1)
    @test run(sess, sort(t; dims = 1)) == sort(A; dims = 1)
    @test run(sess, reverse(t; dims = 2)) == reverse(A; dims = 2)
    @test run(sess, diff(t; dims = 2)) == diff(A; dims = 2)
    @test run(sess, sum(SparseTensor(A); dims = 1)) == vec(sum(A; dims = 1))
    @test run(sess, sum(t; dims = (1, 2))) == sum(A)
    @test run(sess, std(t; dims = [1, 2])) ≈ sqrt(sum((A .- sum(A) / 6) .^ 2) / 6)  # divided by n
    @test size(stack([t, t]; dims = 3)) == (2, 3, 2)  # a new dimension: one past the rank
    # the same bad dims, the same ArgumentError naming the function, from every path
    calls = Dict("sum" => d -> sum(t; dims = d), "argmax" => d -> argmax(t; dims = d),
                 "softmax" => d -> softmax(t; dims = d), "squeeze" => d -> squeeze(t; dims = d),
                 "std" => d -> std(t; dims = d), "diff" => d -> diff(t; dims = d),
                 "sort" => d -> sort(t; dims = d), "reverse" => d -> reverse(t; dims = d),
                 "concat" => d -> concat([t, t]; dims = d), "unstack" => d -> unstack(t; dims = d),
                 "split" => d -> split(t, 1; dims = d), "stack" => d -> stack([t, t]; dims = d))
    for (f, call) in calls
        top = f == "stack" ? 3 : 2
        for bad in (0, -2, top + 1, (1, 0))
            bad == -2 && f in ("sort", "reverse") && continue   # their dims may be -1 (the last)
            bad isa Tuple && !(f in ("sum", "std")) && continue  # those take several
            err = try; call(bad); catch e; e; end
            @test err isa ArgumentError
            @test startswith(err.msg, "$f: dims must be dimensions from 1 to $top (the tensor has $top), got ")
        end
        err = try; call(true); catch e; e; end
        @test err isa ArgumentError && startswith(err.msg, "$f: dims must be a dimension or a tuple of dimensions")
    end
    err = try; sum(SparseTensor(A); dims = 3); catch e; e; end
    @test err isa ArgumentError && startswith(err.msg, "sum: dims must be dimensions from 1 to 2")
    for f in (x -> sum(x; axis = 0), x -> softmax(x; axis = 0), x -> argmax(x; axis = 0))
        err = try; f(t); catch e; e; end
        @test err isa ArgumentError && occursin("`dims`, counted from 1 (as in ADCME), not TensorFlow's `axis`", err.msg)
    end
end

@testset "transpose, adjoint, reshape, vec, hcat, vcat as on Julia arrays" begin
    tf.reset_default_graph()
    sess = Session()
    A = [1.0 2.0 3.0; 4.0 5.0 6.0]
    v = [1.0, 2.0, 3.0]
    tA, tv = constant(A), constant(v)
    @test run(sess, tA') == A' && run(sess, transpose(tA)) == transpose(A)
    @test run(sess, tv') == v' && size(tv') == (1, 3)  # a vector's transpose is a row
    @test run(sess, tv' * tA') == v' * A'
    C = [1.0+2im 3.0-1im; 0.5im 2.0+0im]
    @test run(sess, constant(C)') == C' && run(sess, transpose(constant(C))) == transpose(C)
    @test_throws PyError transpose(constant(ones(2, 2, 2)))
    for dims in ((3, 2), (6,), (1, 6), (6, 1), (3, :), (:, 3), (1, 2, 3))
        @test run(sess, reshape(tA, dims...)) == reshape(A, dims...)   # sizes one by one: column-major
    end
    # a tuple or a vector of sizes is tf.reshape, row-major (ADCME)
    rowmajor(X, dims) = permutedims(reshape(vec(permutedims(X, ndims(X):-1:1)), reverse(dims)),
                                    length(dims):-1:1)
    B = reshape(collect(1.0:24.0), 2, 3, 4)
    for dims in ((3, 2), (6,), (1, 6), (6, 1), (1, 2, 3))
        @test run(sess, reshape(tA, dims)) == rowmajor(A, dims)
        @test run(sess, reshape(tA, collect(dims))) == rowmajor(A, dims)
    end
    @test run(sess, reshape(tA, (-1, 2))) == rowmajor(A, (3, 2))
    @test run(sess, reshape(constant(B), (4, 6))) == rowmajor(B, (4, 6))
    @test run(sess, reshape(constant(B), 4, 6)) == reshape(B, 4, 6)
    @test run(sess, reshape(tA, -1, 2)) == reshape(A, :, 2)               # ADCME's -1 is `:`
    @test run(sess, reshape(constant(2.0), 1)) == [2.0]
    @test run(sess, vec(tA)) == vec(A) && run(sess, vec(tv)) == vec(v)
    @test_throws ArgumentError reshape(tA, :, :)
    @test_throws ArgumentError reshape(tA, (:, 3))                      # tf.reshape takes -1
    @test_throws ArgumentError reshape(tA, -2, 3)
    @test run(sess, [tA; tA]) == [A; A] && run(sess, [tA tA]) == [A A]
    @test run(sess, [tv; tv]) == [v; v] && run(sess, [tv tv]) == [v v]
    @test run(sess, [tA; [7.0 8.0 9.0]]) == [A; [7.0 8.0 9.0]]
    @test run(sess, [[7.0 8.0 9.0]; tA]) == [[7.0 8.0 9.0]; A]
    @test run(sess, [tv 2v]) == [v 2v] && run(sess, hcat(v, tv, v)) == hcat(v, v, v)
    @test run(sess, vcat(constant(1.0), 2.0, tv)) == vcat(1.0, 2.0, v)
    @test run(sess, hcat(tv, A')) == hcat(v, A')
end

@testset "broadcasting lines up leading dimensions, as Julia does" begin
    tf.reset_default_graph()
    sess = Session()
    A = [1.0 2.0 3.0; 4.0 5.0 6.0]
    col = [10.0, 20.0]
    row = [100.0 200.0 300.0]
    tA = constant(A)
    @test run(sess, tA .+ col) == A .+ col               # a vector is a column
    @test run(sess, tA .* constant(col)) == A .* col
    @test run(sess, col .- tA) == col .- A
    @test run(sess, tA .+ row) == A .+ row
    @test run(sess, constant(col) .+ constant(row)) == col .+ row
    @test run(sess, max.(tA, 3.0)) == max.(A, 3.0)
    @test run(sess, tA .== 2.0) == (A .== 2.0) && run(sess, tA .!= 2.0) == (A .!= 2.0)
    @test run(sess, exp.(tA) .- 1) ≈ exp.(A) .- 1
    f(x) = sin(x) + x^2
    @test run(sess, f.(tA)) ≈ f.(A)                        # a unary Julia function of tensors
end

dp_device(s) = DevPlace.dp.parse_device(s)

"`show` output of `x` as the REPL prints it, and as `repr` does."
shown(x) = (sprint(show, MIME"text/plain"(), x), repr(x))

@testset "the REPL shows summaries and tables, never a raw repr or a trace" begin
    tf.reset_default_graph()
    a = @cpu 1 Variable(1.0)
    b = sin(a)
    sess = Session(cpus = 2)
    init(sess)
    values = run_profile(sess, b + a)                     # as ADCME: the fetched values
    @test values isa Float64 && values ≈ sin(1.0) + 1.0
    @test run_profile(sess, [b, a]) ≈ [sin(1.0), 1.0]
    p = last_profile()
    @test p.values ≈ [sin(1.0), 1.0] && p.runs == 1
    plain, line = shown(p)
    @test !occursin('\n', line) && length(line) < 200
    @test plain == string(line, "\n", sprint(print, p))   # the line, then what print shows
    @test startswith(line, "Profile(") && occursin("µs", line) && !occursin("traceEvents", line)
    mktempdir() do dir
        save_profile(joinpath(dir, "p.json"))          # still the last profile
        @test occursin("traceEvents", read(joinpath(dir, "p.json"), String))
    end
    report = placement(sess, b + a)
    plain, line = shown(report)
    @test repr([report, report]) == string("PyObject[", line, ", ", line, "]")
    @test startswith(line, "PlacementReport(") && !occursin('\n', line)
    @test occursin("/device:CPU:1", line) && occursin("1 transfer,", line)
    @test startswith(plain, line * "\n") && occursin("requested", plain) && occursin("Sin", plain)
    @test !occursin("OpPlacement(", plain * line)          # no dataclass repr
    @test occursin("Sin", sprint(print, report))           # println still prints the table
    plain, line = shown(sess)
    @test plain == line && occursin("Session", line) && occursin("CPU:1", line) && !occursin('\n', line)
    @test shown(dp_device("/gpu:1")) == ("Device('/device:GPU:1')", "Device('/device:GPU:1')")
    @test shown(a)[2] == D.pyrepr(a)                          # other objects: Python's repr
end

@testset "every result prints one line, and a bounded table however big the graph" begin
    tf.reset_default_graph()
    x = placeholder(Float64; shape = [8])
    y = x
    for i in 1:1500
        y = @cpu (i % 2) (y + Float64(i))
    end
    sess = Session(cpus = 2, optimize = false)
    fd = Dict(x => ones(8))
    run_profile(sess, y; feed_dict = fd)
    p = last_profile()
    report = placement(sess, y; feed_dict = fd)
    placed = autoplace(y; devices = ["/cpu:0", "/cpu:1"], strategy = "round_robin")
    for o in (p, p.run, p.run.trace, report, placed)
        plain, line = shown(o)
        printed = sprint(print, o)
        @test !occursin('\n', line) && length(line) < 300
        @test plain == string(line, "\n", printed)              # Python's print, under the line
        @test count(isequal('\n'), printed) < 200 && length(printed) < 20_000
        @test !occursin("_arg_", printed)                       # fed tensors by their names
    end
    @test length(report.ops) > 1500 && occursin("more ops (to_csv() has every one)", sprint(print, report))
    @test report["Placeholder"].fed && "Placeholder:0" in [t.tensor for t in report.transfers]
end
