# The devplace API from Julia: tensors, math, indexing, gradients, sessions, profiles, reports.

@testset "tensors and Base math" begin
    tf.reset_default_graph()  # a graph is placed whole: keep earlier ops out
    a = constant(2.0)
    @test sprint(show, a) == D.pyrepr(a)
    @test startswith(sprint(show, a), "<tf.Tensor 'Const")
    @test sprint(show, MIME"text/plain"(), a) == D.pyrepr(a)
    sess = Session()
    @test run(sess, a + 1) == 3.0
    @test run(sess, 1 + a) == 3.0
    @test run(sess, a - 0.5) == 1.5
    @test run(sess, 3 - a) == 1.0
    @test run(sess, a * 3) == 6.0
    @test run(sess, a / 4) == 0.5
    @test run(sess, a^2) == 4.0
    @test run(sess, a^0.5) ≈ sqrt(2) rtol = 1e-6
    @test run(sess, -a) == -2.0
    @test run(sess, max(a, 3.0)) == 3.0
    @test run(sess, a < 3.0) === true
    for f in (sin, cos, tan, exp, log, sqrt, abs, tanh, log1p, expm1, floor, ceil, sign)
        @test run(sess, f(a)) ≈ f(2.0)  # a float64 tensor, as the Julia literal
    end
    @test run(sess, inv(a)) ≈ 0.5
    A = [1.0 2.0; 3.0 4.0]
    B = [0.5 -1.0; 2.0 1.0]
    @test run(sess, constant(A) * constant(B)) ≈ A * B            # matrix product
    @test run(sess, constant(A) .* constant(B)) ≈ A .* B          # elementwise
    @test run(sess, constant(A) * [1.0, 2.0]) ≈ A * [1.0, 2.0]    # matrix × vector
    @test run(sess, sin.(constant(A) .+ 1)) ≈ sin.(A .+ 1)
    @test run(sess, constant(A) .^ 2) ≈ A .^ 2
    @test run(sess, sum(constant(A))) == sum(A)
    @test run(sess, transpose(constant(A))) == transpose(A)
    @test_throws ArgumentError atan.(constant(A), constant(B))
end

@testset "indexing is 1-based and inclusive" begin
    tf.reset_default_graph()  # a graph is placed whole: keep earlier ops out
    M = reshape(collect(1.0:12.0), 3, 4)
    t = constant(M)
    v = constant([10.0, 20.0, 30.0])
    sess = Session()
    @test run(sess, v[1]) == 10.0
    @test run(sess, v[2:end]) == [20.0, 30.0]
    @test run(sess, v[end]) == 30.0
    @test run(sess, v[3:-1:1]) == [30.0, 20.0, 10.0]
    @test run(sess, t[2, 3]) == M[2, 3]
    @test run(sess, t[:, 2]) == M[:, 2]
    @test run(sess, t[1, :]) == M[1, :]
    @test run(sess, t[2:3, 1:2:4]) == M[2:3, 1:2:4]
    @test run(sess, t[end, end]) == M[end, end]
    @test_throws BoundsError v[0]
    @test run(sess, v[[3, 1]]) == [30.0, 10.0]
    lst = pycall(pybuiltin("list"), PyObject, [5, 6, 7])
    @test lst[1] == 5 && lst[end] == 7
    lst[2] = 60
    @test collect(lst) == [5, 60, 7]
end

@testset "variables, placeholders, feeds, fetch shapes" begin
    tf.reset_default_graph()  # a graph is placed whole: keep earlier ops out
    x = placeholder(Float64; shape = [2, 3])
    @test x.dtype == tf.float64
    @test x.shape.as_list() == [2, 3]
    w = Variable(ones(3))
    y = x * w
    sess = Session()
    init(sess)
    X = [1.0 2.0 3.0; 4.0 5.0 6.0]
    @test run(sess, y, x => X) ≈ X * ones(3)
    @test run(sess, x, x => X) == X                 # a 2×3 matrix stays 2×3
    r = run(sess, [y, x], x => X)
    @test r[1] ≈ X * ones(3) && r[2] == X
    @test run(sess, (y, w), x => X)[2] == ones(3)
    c = constant(Float32[1, 2])
    @test c.dtype == tf.float32 && run(sess, c) == Float32[1, 2]
    @test constant(1; dtype = Float64).dtype == tf.float64
    @test_throws ArgumentError Variable(Some(1.0))
end

"A fresh graph with a variable and its sine on CPU:1 (a graph is placed whole)."
function sine_on_cpu1(value)
    tf.reset_default_graph()
    return @cpu 1 begin  # the block's value; names assigned inside are local to it
        a = Variable(value)
        (a, sin(a))
    end
end

@testset "gradients" begin
    ga, gb = sine_on_cpu1(1.0)
    @cpu 0 begin
        global gc = cos(gb)
    end
    g = gradients(gc, ga)
    @test g isa PyObject
    gs = gradients(gc, [ga])
    @test gs isa Vector && length(gs) == 1
    gcol = gradients(gc, ga; colocate = true)
    sess = Session(cpus = 2)
    init(sess)
    expected = -sin(sin(1.0)) * cos(1.0)  # d cos(sin(a)) / da
    @test run(sess, g) ≈ expected rtol = 1e-6
    @test run(sess, gcol) ≈ expected rtol = 1e-6
    devices = [op.device for op in tf.get_default_graph().get_operations()
               if startswith(op.name, split(gcol.op.name, "/")[1]) && op.type in ("Cos", "Sin")]
    @test "/device:CPU:1" in devices
end

@testset "sessions, profiles, placement, logs" begin
    pa, pb = sine_on_cpu1(2.0)
    sess = Session(cpus = 2, log_placement = true)
    init(sess)
    @test run(sess, pb) ≈ sin(2.0) rtol = 1e-6
    mktempdir() do dir
        run_profile(sess, pb)
        path = joinpath(dir, "profile.json")
        save_profile(path)
        @test isfile(path) && occursin("traceEvents", read(path, String))
    end
    report = placement(sess, pb)
    @test report isa PyObject
    @test occursin("CPU:1", D.pyrepr(report))
    log = placement_log(sess)
    @test log isa AbstractVector
    @test echo("frames intact after the placement log") == "frames intact after the placement log"
    @test_throws ArgumentError Session(cpus = "two")
end

@testset "batch norm updates, collections, control dependencies" begin
    tf.reset_default_graph()  # a graph is placed whole: keep earlier ops out
    @test UPDATE_OPS == tf.GraphKeys.UPDATE_OPS
    before = length(get_collection(UPDATE_OPS))
    x = placeholder(Float32; shape = [4, 3])
    y = bn(x; training = true)
    ups = get_collection(tf.GraphKeys.UPDATE_OPS)
    @test length(ups) == before + 2
    @test all(u isa PyObject for u in ups)
    v = Variable(0.0)
    inc = tf.assign_add(v, 1.0)
    control_dependencies([inc]) do
        global after = tf.identity(v)
    end
    @test inc.op in after.op.control_inputs
    @test batch_norm(x; training = false) isa PyObject
end

@testset "API surface" begin
    for name in names(DevPlace)
        name === :DevPlace && continue
        @test documented(name)
    end
    @test isempty(Test.detect_ambiguities(DevPlace; imported = false, recursive = true))  # floors too
    @test canonical_device("/gpu:1") == "/device:GPU:1"
    @test_throws PyError canonical_device("/gpu:x")
end

"The message of the error `f()` throws (fails the test if it throws none)."
function error_message(f, T = ArgumentError)
    try
        f()
    catch e
        e isa T && return sprint(showerror, e)
        rethrow()
    end
    error("no error thrown")
end

@testset "wrong argument types: a clear error naming the input, with a hint" begin
    tf.reset_default_graph()
    x = placeholder(Float64; shape = [2])
    y = 2 * x
    sess = Session()
    # feeds as pairs or as one Dict
    @test run(sess, y, x => [1.0, 2.0]) == [2.0, 4.0]
    @test run(sess, y, Dict(x => [1.0, 2.0])) == [2.0, 4.0]
    @test placement(sess, y, Dict(x => [1.0, 2.0])) isa PyObject
    # or as TensorFlow's keyword feed_dict=, a Julia Dict or a Python dict; never both at once
    @test run(sess, y; feed_dict = Dict(x => [1.0, 2.0])) == [2.0, 4.0]
    @test run_profile(sess, y; feed_dict = Dict(x => [1.0, 3.0]), repeat = 2) == [2.0, 6.0]
    @test placement(sess, y; feed_dict = pybuiltin("dict")([(x, [1.0, 2.0])])).actual(y.op.name) != ""
    msg = error_message(() -> run(sess, y, x => [1.0, 2.0]; feed_dict = Dict(x => [1.0, 2.0])))
    @test occursin("run: feed_dict must be left out when feeds are given", msg) && occursin("Hint", msg)
    @test autoplace(y; devices = ["/cpu:0"], session = sess, feed_dict = Dict(x => [1.0, 2.0]),
                    verify = 1, runs = 2).measured isa AbstractDict
    msg = error_message(() -> run(sess, y, [1.0, 2.0]))
    @test occursin("run: each feed must be a `placeholder => value` pair", msg)
    @test occursin("[1.0, 2.0]", msg) && occursin("Hint", msg)
    for (f, name) in ((() -> init(1), "init"), (() -> placement("sess", y), "placement"),
                      (() -> run_profile(nothing, y), "run_profile"),
                      (() -> placement_log(1.5), "placement_log"))
        msg = error_message(f)
        @test startswith(msg, "ArgumentError: $name: sess must be a Session")
        @test occursin("Hint: make one with `sess = Session()`", msg)
    end
    msg = error_message(() -> Variable(Some(1.0)))
    @test occursin("Variable: argument 1: DevPlace cannot pass a value of type Some{Float64}", msg)
    @test occursin("Hint", msg)
    msg = error_message(() -> constant(1.0; dtype = Some(Float32)))
    @test occursin("constant: keyword argument `dtype`", msg)
    msg = error_message(() -> tf.reduce_sum(x; axis = Some(0)))  # any Python callable
    @test occursin("reduce_sum", msg) && occursin("keyword argument `axis`", msg)
    msg = error_message(() -> placeholder(String))
    @test occursin("placeholder: dtype must be a numeric Julia type", msg) && occursin("String", msg)
    msg = error_message(() -> gradients(y, x; colocate = 1))
    @test occursin("gradients: colocate must be true or false, got 1", msg)
    @test occursin("save_profile: path must be a file name", error_message(() -> save_profile(3)))
    @test occursin("keyword arguments only", error_message(() -> Session(2)))
    @test occursin("autoplace: devices must be a vector", error_message(() -> autoplace(y)))
    @test occursin("keyword arguments only", error_message(() -> LocalCluster(1, 2)))
    @test occursin("ClusterSession: job must be", error_message(() -> ClusterSession(Dict(), 1)))
    @test occursin("ClusterSession: task must be", error_message(() -> ClusterSession(Dict(), "worker", -1)))
    # errors raised by Python name the input too
    msg = error_message(() -> Session(cpus = 2000), PyError)
    @test occursin("cpus", msg) && occursin("2000", msg) && occursin("Hint", msg)
    @test echo("in sync") == "in sync"
end

@testset "autoplace from Julia: the AutoPlacement proxy" begin
    tf.reset_default_graph()
    x = placeholder(Float32; shape = [8, 16], name = "x")
    w1 = Variable(ones(Float32, 16, 16); name = "w1")
    w2 = Variable(ones(Float32, 16, 16); name = "w2")
    a = tf.nn.relu(x * w1; name = "a")
    b = tf.matmul(x, w2; name = "b")
    y = tf.reduce_sum(a + b; name = "y")
    p = autoplace(y; devices = ["/cpu:0", "/cpu:1"], strategy = "round_robin")
    @test p isa PyObject
    @test p.predicted_step_time isa Float64 && p.predicted_step_time > 0
    devices = p.devices
    @test devices isa Dict && haskey(devices, "w1") && haskey(devices, "y")
    @test Set(values(devices)) == Set(["/device:CPU:0", "/device:CPU:1"])
    @test p["w1"] == devices["w1"] && length(p) == length(devices)
    line = repr(p)
    @test startswith(line, "AutoPlacement(") && occursin("round_robin", line) && !occursin('\n', line)
    @test sprint(show, MIME"text/plain"(), p) == string(line, "\n", sprint(print, p))
    @test p.apply() isa Int
    @test all(op.device == devices[op.name] for op in tf.get_default_graph().get_operations()
              if haskey(devices, op.name))
    sess = Session(cpus = 2, optimize = false)
    init(sess)
    X = ones(Float32, 8, 16)
    @test run(sess, y, x => X) ≈ sum(max.(X * ones(Float32, 16, 16), 0) + X * ones(Float32, 16, 16))
    report = placement(sess, y, x => X)
    @test all(report.actual(n) == devices[n] for n in ("w1", "a", "b", "y"))
    # the device function rebuilds the same placement in a new graph
    fn = p.device_function()
    tf.reset_default_graph()
    rebuilt = DevPlace.device(fn) do
        constant(1.0; name = "w1")
    end
    @test rebuilt.device == devices["w1"]
    err = try
        autoplace(y; devices = String[])
    catch e
        e
    end
    @test err isa PyError && occursin("PlacementError", err.type)
end

@testset "a Julia value with a tensor of an older graph is built in that graph, as TensorFlow does" begin
    tf.reset_default_graph()
    x = constant(3.0)
    tf.reset_default_graph()  # x's graph is no longer the default one
    same = pyimport("operator").is_
    sess = tf.Session(graph = x.graph)
    # Julia's operators against Python's own on the same tensor (TensorFlow's result)
    for (julia, python) in ((x * 2.0, x.__mul__(2.0)), (x + 1.0, x.__add__(1.0)),
                            (2.0 - x, x.__rsub__(2.0)), (x .* [1.0, 2.0], x.__mul__([1.0, 2.0])))
        @test same(julia.graph, x.graph)
        @test run(sess, julia) == run(sess, python)
    end
    @test run(sess, x * 2.0) === 6.0
    sess.close()
end

@testset "run of one fetch: each value of the tensor's own type, an op's nothing, errors as PyError" begin
    # in process such a run is one direct call (no messages); its answers must not differ
    tf.reset_default_graph()
    v = Variable(2.0)
    sess = Session()
    err = try
        run(sess, v)  # not initialised: TensorFlow's error, as from any run
    catch e
        e
    end
    @test err isa PyError && occursin("FailedPrecondition", err.type * err.message)
    init(sess)
    cases = ((v * 1.5, 3.0), (constant(7), 7), (constant(true), true), (constant(2.5f0), 2.5f0),
             (constant(Int32(3)), Int32(3)), (constant([1.0, 2.0]), [1.0, 2.0]),
             (constant(fill(1.0, 10_000)), fill(1.0, 10_000)))
    for (fetch, want) in cases
        got = run(sess, fetch)
        @test (got, typeof(got)) == (want, typeof(want))
    end
    @test run(sess, tf.assign(v, 4.0).op) === nothing
    @test run(sess, v) === 4.0
    @test run(sess, v; feed_dict = Dict(v => 5.0)) === 5.0
end

@testset "run with feeds: pairs, a Dict or feed_dict; arrays read where Julia keeps them" begin
    # in process, a placeholder fed a Float64, Int64, Bool or an Array goes with the direct
    # call (`direct_feed`), anything else with a message: the answers must not differ
    @test D.Transports.direct_feed(1.0) && D.Transports.direct_feed(2) &&
          D.Transports.direct_feed(true) && D.Transports.direct_feed(rand(Float32, 2, 3))
    @test !D.Transports.direct_feed(1.0f0) && !D.Transports.direct_feed(1.0:3.0) &&
          !D.Transports.direct_feed(fill(1.0)) && !D.Transports.direct_feed("a") &&
          !D.Transports.direct_feed(Any[1.0])
    tf.reset_default_graph()
    x = placeholder(Float64; shape = [3])
    m = placeholder(Float32; shape = [2, 3])
    i = placeholder(Int64)
    b = placeholder(Bool)
    y = placeholder(Float32)
    s = sum(x)
    sess = Session()
    a = Float32[1 2 3; 4 5 6]
    for (got, want) in ((run(sess, s, x => [1.0, 2.0, 3.0]), 6.0),
                        (run(sess, s, Dict(x => [1.0, 2.0, 4.0])), 7.0),
                        (run(sess, s; feed_dict = Dict(x => [1.0, 2.0, 5.0])), 8.0),
                        (run(sess, m * 2, m => a), 2a),  # column-major, as Julia keeps it
                        (run(sess, sum(m; dims = 1), m => a), Float32[5, 7, 9]),
                        (run(sess, i + 1, i => 41), 42),
                        (run(sess, tf.logical_not(b), b => true), false),
                        (run(sess, s * cast(Float64, i), x => [1.0, 1.0, 1.0], i => 2), 6.0),
                        (run(sess, s, x => 1.0:3.0), 6.0),  # the message form from here on
                        (run(sess, y * 2, y => 1.5f0), 3.0f0),
                        (run(sess, s, "Placeholder:0" => [1.0, 1.0, 1.0]), 3.0),
                        (run(sess, s, x => Any[1.0, 2.0, 3.0]), 6.0))
        @test (got, typeof(got)) == (want, typeof(want))
    end
    big = fill(1.0, 1 << 17)  # 1 MiB: read where it is
    p = placeholder(Float64; shape = [1 << 17])
    @test run(sess, sum(p), p => big) == 1 << 17
    big[1] = 2.0
    @test run(sess, sum(p), p => big) == (1 << 17) + 1
    # the arrays fed stay Julia's while the run reads them, whatever the collector does
    @test all(k -> (k % 10 == 0 && GC.gc(false); run(sess, s, x => fill(Float64(k), 3)) == 3k),
              1:100)
    err = try
        run(sess, s, x => [1.0, 2.0])
    catch e
        e
    end
    @test err isa PyError && occursin("Cannot feed value of shape (2,)", err.message)
    @test_throws ArgumentError run(sess, s, x)  # not a pair: the hint as before
end

@testset "run of several fetches: a vector or tuple, as narrow as decoding makes it" begin
    # in process a vector or tuple of tensors and ops is one direct call where every value is
    # nothing or a Float64, Int64 or Bool; the answers must not differ from the message form's
    @test D.Objects.direct_fetches(constant(1.0)) && D.Objects.direct_fetches((constant(1.0),))
    @test !D.Objects.direct_fetches(PyObject[]) && !D.Objects.direct_fetches([constant(1.0), 2])
    tf.reset_default_graph()
    v = Variable(2.0)
    step = tf.assign_add(v, 1.0).op
    x = placeholder(Float64; shape = [2])
    sess = Session()
    init(sess)
    got = run(sess, [step, v])
    @test typeof(got) == Vector{Union{Nothing,Float64}} && got[1] === nothing
    for (fetches, want) in (([v, v * 2], [3.0, 6.0]),
                            ((v, constant(2), constant(true)), (3.0, 2, true)),
                            (Any[v, sum(x)], [3.0, 3.0]),
                            ((v, constant(2.5f0)), (3.0, 2.5f0)),  # a Float32: the message form
                            ([v, constant([1.0, 2.0])], Any[3.0, [1.0, 2.0]]),
                            # each set of element types `narrow` joins (Real, Integer, unions)
                            ([v, constant(2)], Real[3.0, 2]),
                            ([constant(2), constant(true)], Integer[2, true]),
                            ([tf.no_op(), constant(true)], Union{Nothing,Bool}[nothing, true]),
                            ([tf.no_op(), tf.no_op()], [nothing, nothing]),
                            ([tf.no_op(), constant(2), v], Any[nothing, 2, 3.0]),
                            (Tuple(constant(i) for i in 1:9), Tuple(1:9)))  # a long tuple
        got = run(sess, fetches, x => [1.0, 2.0])
        @test (got, typeof(got)) == (want, typeof(want))
    end
    @test run(sess, (v * 1.0,); feed_dict = Dict(x => [0.0, 0.0])) === (3.0,)
end

@testset "a fetched array is Julia's own: every element type, kept across collections" begin
    # in process its memory is numpy's, given to Julia's array (own = true): Julia frees it
    tf.reset_default_graph()
    sess = Session()
    for want in (rand(1000), rand(Float32, 7), [true, false, true], Int32[1, -2, 3], Int8[4, 5],
                 ComplexF64[1 + 2im, 3], rand(3, 4), rand(Float32, 2, 3, 2))
        got = run(sess, constant(want))
        @test (got, typeof(got)) == (want, typeof(want))
    end
    x = copy(run(sess, constant(collect(1.0:1000.0))))  # README: `copy` it to resize it
    push!(x, 1001.0)
    @test x == 1.0:1001.0
    big = constant(fill(2.0, 1 << 17))  # 1 MiB
    kept = [run(sess, big) for _ in 1:40]
    foreach(_ -> run(sess, big), 1:40)  # garbage for the collector
    GC.gc()
    @test all(k -> k == fill(2.0, 1 << 17), kept)
    kept = nothing
    GC.gc()
    @test run(sess, big) == fill(2.0, 1 << 17)
end
