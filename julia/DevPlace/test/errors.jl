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
    julia = ("src/transports/", "src/peer.jl", "src/transport.jl", "src/pyobject.jl", "src/api.jl",
             "src/operators.jl", "wait_reply")
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
