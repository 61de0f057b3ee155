# Bad Julia inputs: each gives an error of a stated type whose message names the input, and the
# host with every object built before it stays alive.

"The error `f()` throws (fails the test if none)."
function thrown(f)
    try
        f()
    catch e
        return e
    end
    error("no error thrown")
end

message(e) = sprint(showerror, e)

"A device function returning `value` for every op."
returning(value) = op -> value

# Device functions that do not take one argument, the op.
no_op_argument() = "/cpu:0"
op_and_more(op, where) = where

"`n` vectors, each inside the next."
nested(n) = foldl((inner, _) -> Any[inner], 1:n; init = 1.0)

"A vector that contains itself."
function self_containing()
    v = Any[1.0]
    push!(v, v)
    return v
end

"The expansion of macro call `ex`, or the error it throws (unwrapped from a `LoadError`)."
expand(ex) = try
    macroexpand(Main, ex)
catch e
    throw(e isa LoadError ? e.error : e)
end

# (what is tried, the call, the error type, strings the message must contain)
const BAD_INPUTS = [
    ("@pywith with nothing", () -> expand(:(@pywith)), ArgumentError,
     ["@pywith needs a context manager and a block, got nothing", "usage: @pywith"]),
    ("run(\"sess\", y)", () -> run("sess", constant(1.0)), ArgumentError,
     ["run: sess must be a Session", "\"sess\"", "String", "sess = Session()"]),
    ("a 65-dimensional array", () -> constant(zeros(ntuple(_ -> 1, 65))), ArgumentError,
     ["65-dimensional array", "numpy takes at most 64 dimensions", "reshape"]),
    ("Session(cpus=20000)", () -> Session(cpus = 20000), PyError,
     ["cpus must be an integer from 1 to 1024", "20000", "Hint: cpus=2"]),
    ("Session(soft=\"no\")", () -> Session(soft = "no"), ArgumentError,
     ["option `soft`", "true or false", "\"no\"", "String", "Hint: Session(soft=true)"]),
    ("Session(optimize=\"false\")", () -> Session(optimize = "false"), ArgumentError,
     ["option `optimize`", "true or false", "\"false\""]),
    ("Session(per_session_threads=\"yes\")", () -> Session(per_session_threads = "yes"),
     ArgumentError, ["option `per_session_threads`", "\"yes\""]),
    ("Session(log_placement=[])", () -> Session(log_placement = []), ArgumentError,
     ["option `log_placement`", "Any[]"]),
    ("Session(allow_growth=\"yes\")", () -> Session(allow_growth = "yes"), ArgumentError,
     ["option `allow_growth`", "true, false or nothing"]),
    ("Session(cpus=2.5)", () -> Session(cpus = 2.5), ArgumentError,
     ["option `cpus`", "an integer", "2.5", "Float64"]),
    ("Session(inter=true)", () -> Session(inter = true), ArgumentError, ["option `inter`", "true"]),
    ("Session(timeout=\"soon\")", () -> Session(timeout = "soon"), ArgumentError,
     ["option `timeout`", "seconds", "\"soon\""]),
    ("Session(gpu_memory_fraction=:half)", () -> Session(gpu_memory_fraction = :half),
     ArgumentError, ["option `gpu_memory_fraction`", ":half"]),
    ("Session(target=2222)", () -> Session(target = 2222), ArgumentError,
     ["option `target`", "2222"]),
    # ranges are Python's: the option is still named
    ("Session(inter=2^40)", () -> Session(inter = 2^40), PyError, ["inter", "1099511627776"]),
    ("Session(timeout=NaN)", () -> Session(timeout = NaN), PyError, ["timeout", "nan"]),
    ("Session(virtual_gpus=2.5)", () -> Session(virtual_gpus = 2.5), ArgumentError,
     ["option `virtual_gpus`", "a count, a vector of MiB", "2.5"]),
    ("Session(virtual_gpus=[1024, 0])", () -> Session(virtual_gpus = [1024, 0]), PyError,
     ["virtual_gpus must be", "list of whole MiB", "Hint: virtual_gpus=4"]),
    ("@cpu 10^30", () -> @cpu(10^30, constant(1.0)), ArgumentError,
     ["@cpu", string(10^30), "2147483647"]),
    ("@gpu 0x8000000000000001", () -> @gpu(0x8000000000000001, constant(1.0)), ArgumentError,
     ["@gpu", "0x8000000000000001", "UInt64", "2147483647"]),
    ("@cpu -1", () -> @cpu(-1, constant(1.0)), ArgumentError, ["@cpu", "-1", "from 0"]),
    ("@gpu 1.0", () -> @gpu(1.0, constant(1.0)), ArgumentError, ["@gpu", "1.0", "Float64"]),
    ("@cpu big(2)^70", () -> @cpu(big(2)^70, constant(1.0)), ArgumentError,
     ["@cpu", string(big(2)^70), "BigInt"]),
    ("device function -> :cpu", () -> @pywith(tf.device(returning(:cpu)), constant(1.0)),
     PyError, ["device function", "returned \"cpu\"", "op 'Const"]),
    ("device function -> \"/gpu:x\"", () -> DevPlace.device(() -> constant(1.0), returning("/gpu:x")),
     PyError, ["returned \"/gpu:x\"", "op 'Const", "index"]),
    ("device function -> nothing", () -> @pywith(tf.device(returning(nothing)), constant(1.0)),
     PyError, ["returned nothing", "op 'Const", "not a device string", "\"\" for no device"]),
    ("device function -> 5", () -> @pywith(tf.device(returning(5)), constant(1.0)), PyError,
     ["returned 5", "op 'Const", "not a device string"]),
    ("device function of no argument", () -> @pywith(tf.device(no_op_argument), constant(1.0)),
     PyError, ["`no_op_argument`", "with 1 argument, but it takes 0 arguments",
               "a device function", "takes one argument, the op", "Hint"]),
    ("device function of two arguments", () -> DevPlace.device(() -> constant(1.0), op_and_more),
     PyError, ["`op_and_more`", "with 1 argument, but it takes 2 arguments",
               "takes one argument, the op"]),
    ("a vector inside itself", () -> pybuiltin("len")(self_containing()), ArgumentError,
     ["len: argument 1", "this $(Vector{Any}) to Python: it contains itself", "200 levels"]),
    ("a vector 250 deep", () -> pybuiltin("len")(nested(250)), ArgumentError,
     ["len: argument 1", "nested deeper than 200 levels", string(Vector{Any}), "flatten"]),
    ("constant(a vector inside itself)", () -> constant(self_containing()), ArgumentError,
     ["contains itself"]),
    ("sum(x; dims=0)", () -> sum(constant(ones(2)); dims = 0), ArgumentError,
     ["sum: dims", "from 1", "0"]),
    ("reshape(x, :, :)", () -> reshape(constant(ones(2)), :, :), ArgumentError, ["reshape", "`:`"]),
    ("placeholder(String)", () -> placeholder(String), ArgumentError, ["placeholder: dtype", "String"]),
    ("run(sess, y, [1.0])", () -> run(Session(), constant(1.0), [1.0]), ArgumentError,
     ["run: each feed", "[1.0]"]),
    ("gradients(...; colocate=1)", () -> gradients(constant(1.0), constant(1.0); colocate = 1),
     ArgumentError, ["colocate", "1"]),
    ("constant(Some(1))", () -> constant(Some(1)), ArgumentError, ["constant", "Some{Int64}"]),
]

@testset "bad Julia inputs: $what" for (what, f, T, needles) in BAD_INPUTS
    tf.reset_default_graph()
    @cpu 1 global survivor = Variable(2.0)
    pid = D.host_pid()
    err = thrown(f)
    @test err isa T
    text = message(err)
    for needle in needles
        @test occursin(needle, text)
    end
    T === ArgumentError && @test occursin("Hint", text)
    # the host, its objects and the scope stacks survive
    @test D.host_pid() == pid
    sess = Session(cpus = 2)
    init(sess)
    @test run(sess, survivor * 2) === 4.0
    @test survivor.device == "/device:CPU:1" && constant(0.0).device == ""
end

@testset "good device functions still work through tf.device" begin
    tf.reset_default_graph()
    on_cpu1(op) = op.type == "Const" ? "/cpu:1" : ""
    @pywith tf.device(on_cpu1) begin
        global dc = constant(1.0)
        global dd = dc + 1
    end
    @test dc.device == "/cpu:1" && dd.device == ""  # as given, as TF does
    spec = tf.DeviceSpec(device_type = "CPU", device_index = 1)
    @pywith tf.device(returning(spec)) begin
        global ds = constant(1.0)
    end
    @test ds.device == "/device:CPU:1"
    @test (@pywith tf.device("/cpu:1") constant(1.0)).device == "/device:CPU:1"
end

@testset "values travel nested up to the limit both ends keep, and no deeper" begin
    echo(x) = D.request(D.OP_ECHO, (x,))  # the request's tuple is one level: 199 are left
    @test echo(nested(D.MAX_DEPTH - 1)) == nested(D.MAX_DEPTH - 1)
    err = thrown(() -> echo(nested(D.MAX_DEPTH)))
    @test err isa ArgumentError  # refused in Julia: Python never saw it
    @test occursin("nested deeper than 200 levels", message(err))
    @test echo("in step") == "in step"
end

@testset "a Julia function Python calls with arguments it has no method for" begin
    pymap(f, xs...) = pybuiltin("list")(pybuiltin("map")(f, xs...))
    pair_sum(a, b) = a + b
    err = thrown(() -> pymap(pair_sum, [1, 2]))
    @test err isa PyError && err.julia_exception isa ArgumentError
    @test occursin("`pair_sum` was called from Python with 1 argument, but it takes 2 arguments",
                   message(err))
    @test pymap(pair_sum, [1, 2], [10, 20]) == [11, 22]
    # a MethodError inside the function is the function's own, shown as it is
    inner(x) = pair_sum(x)
    err = thrown(() -> pymap(inner, [1]))
    @test err isa PyError && err.julia_exception isa MethodError
    kw_only(; scale) = scale
    err = thrown(() -> pyimport("functools").partial(kw_only, 1; scale = 2)())
    @test occursin("with 1 argument and keywords scale, but it takes 0 arguments", message(err))
end

@testset "a Python error about an input shows its message without a traceback" begin
    err = thrown(() -> Session(cpus = 20000))
    @test err isa PyError && isempty(err.traceback)
    @test !occursin("Traceback", message(err)) && !occursin("File \"", message(err))
    @test size(constant(zeros(ntuple(_ -> 1, 64)))) == ntuple(_ -> 1, 64)  # numpy's limit itself
end
