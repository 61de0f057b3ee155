# How a Python error shows in Julia: short, with a hint, the caller's own frames, and the full
# text one call away (DevPlace.last_error()).

"`f()`'s exception and what the REPL would print for it (the error and its stack trace)."
function thrown(f)
    try
        f()
    catch err
        return err, sprint(showerror, err, catch_backtrace())
    end
    error("no error thrown")
end

# A caller's own function, so that its frame is one to keep.
step_without_init(sess, y) = run(sess, y)

"No frame of the bridge, of devplace's Python or TensorFlow's, of DevPlace's own Julia files."
function no_machinery(shown)
    python = ("devplace/bridge", "site-packages", "frozen runpy", "python/devplace")
    julia = ("src/transports/", "src/objects/", "src/api/devplace.jl", "wait_reply")
    return !any(occursin(s, shown) for s in (python..., julia...))
end

@testset "a forgotten init(sess): the message, a hint, the caller's frames, the full text" begin
    tf.reset_default_graph()
    v = Variable(1.0)
    y = sin(v)
    sess = Session()
    err, shown = thrown(() -> step_without_init(sess, y))
    @test err isa PyError && endswith(err.type, "FailedPreconditionError")
    @test startswith(shown, "PyError: tensorflow.python.framework.errors_impl.FailedPreconditionError")
    @test occursin("Attempting to use uninitialized value Variable", shown)
    @test occursin("Hint: init(sess)", shown)
    @test length(collect(eachmatch(r"Node: 'Variable/read'", shown))) == 1
    @test occursin("DevPlace.last_error()", shown)
    @test no_machinery(shown)
    @test occursin("step_without_init", shown) && occursin("test/errors.jl", shown)
    @test count(isequal('\n'), shown) < 25  # was 99 lines
    full = sprint(DevPlace.last_error)
    @test occursin("Original stack trace for 'Variable/read'", full)
    @test occursin("tensorflow/python", full) && occursin("Traceback", full)
    @test !occursin("devplace/bridge", full)  # the bridge's frames only with DEVPLACE_DEBUG
    # the same for a placement report of it
    err, shown = thrown(() -> placement(sess, y))
    @test err isa PyError && occursin("Hint: init(sess)", shown) && no_machinery(shown)
    init(sess)
    @test run(sess, y) ≈ sin(1.0)
end

@testset "an op pinned to a device the session lacks: the hint says soft=true" begin
    tf.reset_default_graph()
    x = @cpu 5 constant(1.0)
    sess = Session(cpus = 2)
    for f in (() -> run(sess, x), () -> placement(sess, x))
        err, shown = thrown(f)
        @test err isa PyError && endswith(err.type, "DevicePlacementError")
        @test occursin("cannot place op", shown) && occursin("/device:CPU:5", shown)
        @test occursin("Hint: Session(soft=true)", shown)
        @test no_machinery(shown) && occursin("test/errors.jl", shown)
    end
    @test run(Session(cpus = 2, soft = true), x) == 1.0
end

@testset "a Python error outside devplace keeps its own frames" begin
    err, shown = thrown(() -> pyimport("json").loads("{x"))
    @test occursin("json/decoder.py", shown) && no_machinery(shown)
    @test !occursin("last_error", shown)  # nothing was left out: no pointer
end

@testset "an unfetched op pinned where nothing is: every op named, why, the way out" begin
    tf.reset_default_graph()
    θ = Variable(1.0)
    loss = (θ - 3.0)^2
    sess = Session()
    init(sess)
    bad = @pywith tf.device("/device:GPU:7") begin 2.0 * loss end     # never fetched
    later = @pywith tf.device("/device:CPU:5") begin 3.0 * loss end
    # each says where the user's code made it: the line of its scope, in any of its forms
    made = [(bad, "GPU:7", @__LINE__() - 3), (later, "CPU:5", @__LINE__() - 2)]
    on_gpu = @gpu 3 begin
        4.0 * loss
    end
    push!(made, (on_gpu, "GPU:3", @__LINE__() - 3))
    by_function = D.device("/device:CPU:6") do
        5.0 * loss
    end
    push!(made, (by_function, "CPU:6", @__LINE__() - 3))
    for f in (() -> run(sess, θ), () -> run_profile(sess, loss))
        err, shown = thrown(f)
        @test err isa PyError && endswith(err.type, "DevicePlacementError")
        @test occursin("'$(bad.op.name)' is not among the fetches", shown)
        @test occursin("'$(later.op.name)' on /device:CPU:5", shown)    # every one, not the first
        for (t, device, line) in made
            @test occursin("'$(t.op.name)' on /device:$device (made at $(@__FILE__):$line)", shown)
        end
        @test occursin("soft=True", shown) && occursin("fresh graph", shown)
        @test no_machinery(shown)
    end
    # BFGS! fails the same way, without saying first that the optimization starts
    @test_logs min_level = Base.CoreLogging.Info begin
        err, shown = thrown(() -> BFGS!(sess, loss))
        @test occursin("'$(bad.op.name)' is not among the fetches", shown)
    end
    soft = Session(soft = true)
    init(soft)
    @test run(soft, θ) == 1.0
end

@testset "run_profile with both feed_dict and feed: an error naming both" begin
    tf.reset_default_graph()
    x = placeholder(Float64; shape = [])
    sess = Session()
    fd = Dict(x => 1.0)
    err, shown = thrown(() -> run_profile(sess, 2x; feed_dict = fd, feed = fd))
    @test err isa ArgumentError
    @test occursin("feed_dict must be left out when feed is given", shown)
    @test run_profile(sess, 2x; feed = fd) == 2.0 == run_profile(sess, 2x; feed_dict = fd)
end

@testset "a malformed device: the message, and no frame of Python's contextlib" begin
    err, shown = thrown(() -> @pywith tf.device("nonsense") begin constant(1.0) end)
    @test err isa PyError && occursin("malformed device 'nonsense'", shown)
    @test !occursin("contextlib", shown) && no_machinery(shown)
end
