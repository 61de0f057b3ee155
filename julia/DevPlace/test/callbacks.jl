# Julia functions called from Python, nested callbacks, and errors crossing both ways.

@testset "Julia functions are Python callables" begin
    pymap(f, xs) = pybuiltin("list")(pybuiltin("map")(f, xs))
    @test pymap(x -> 2x, [1, 2, 3]) == [2, 4, 6]
    square(x) = x^2
    @test pymap(square, (1.5,)) == [2.25]
    @test pybuiltin("repr")(square) == "<Julia function square>"
    # nested: Python calls Julia, which calls Python, which calls Julia again
    inner(x) = x + 100
    outer(x) = pymap(inner, [x, x])
    @test pymap(outer, [1, 2]) == [[101, 101], [102, 102]]
    # keyword arguments reach the Julia function
    kw(; scale = 1) = 10 * scale
    partial = pyimport("functools").partial(kw; scale = 3)
    @test partial() == 30
end

@testset "a callback's plain arguments and results cross as themselves" begin
    seen = Ref{Any}(nothing)
    record(xs...) = (seen[] = xs; nothing)
    plain = pybuiltin("eval")("""lambda f: f(None, True, 3, 2.5, __import__('numpy').float64(2.5),
        's', __import__('numpy').arange(3.0))""")
    @test plain(record) === nothing
    @test seen[] isa Tuple{Nothing,Bool,Int64,Float64,Float64,String,Vector{Float64}}
    @test seen[] == (nothing, true, 3, 2.5, 2.5, "s", [0.0, 1.0, 2.0])
    mixed = pybuiltin("eval")("""lambda f: f(True, __import__('numpy').float32(1.5),
        __import__('numpy').arange(4.0)[::2], 2 ** 40)""")
    @test mixed(record) === nothing
    @test seen[] isa Tuple{Bool,Float32,Vector{Float64},Int64}
    @test seen[] == (true, 1.5f0, [0.0, 2.0], 2^40)
    results = (nothing, 1.5, 7, true, "text", [1.0, 2.0])
    kinds = pybuiltin("eval")("lambda f: [type(f(x)).__name__ for x in range(6)]")
    @test kinds(i -> results[i + 1]) == ["NoneType", "float", "int", "bool", "str", "ndarray"]
    # an array argument is Julia's own copy
    untouched = pybuiltin("eval")("lambda f: (lambda a: (f(a), a.tolist())[1])(__import__('numpy').zeros(3))")
    @test untouched(v -> (v .+= 1; nothing)) == [0.0, 0.0, 0.0]
    # numpy's array may start at any byte (here one past a bytes object's start): read whole
    unaligned = pybuiltin("eval")("""lambda f: f(__import__('numpy').frombuffer(
        b'_' + __import__('numpy').array([1.5, -2.0]).tobytes(), 'float64', offset=1))""")
    @test unaligned(v -> v) == [1.5, -2.0]
end

@testset "Julia errors in callbacks reach Python and come back" begin
    bad(x) = x > 1 ? error("too big: $x") : x
    err = try
        pybuiltin("list")(pybuiltin("map")(bad, [1, 2]))
    catch e
        e
    end
    @test err isa PyError
    @test endswith(err.type, "JuliaError")
    @test occursin("too big: 2", err.message)
    @test err.julia_exception isa ErrorException
    shown = sprint(showerror, err)
    @test startswith(shown, "PyError: a Julia function called from Python threw:\ntoo big: 2")
    @test count("too big", shown) == 1
    @test occursin(r"bad\S* at \S*callbacks.jl", shown)  # the user's frame
    @test !occursin("host.jl", shown) && !occursin("inprocess.jl", shown) &&
          !occursin("peer.jl", shown) && !occursin("reenable_sigint", shown)
    # Python sees a JuliaError it can catch
    ns = pyimport("devplace.bridge")
    @test ns.JuliaError isa PyObject
end

@testset "Python releases the Julia functions it dropped" begin
    h = D.host()
    before = length(h.functions)
    for i in 1:200
        pybuiltin("callable")(x -> x + i)
    end
    GC.gc()  # Julia's references to Python objects that hold Julia functions (`partial`)
    pyimport("gc").collect()  # proxies kept alive only by reference cycles (tracebacks)
    D.host_stats()  # the reply is preceded by Python's release list
    @test length(h.functions) <= before
    @test D.host_stats()["julia_functions"] == 0
end

@testset "a device function calling back into Python, and one that throws" begin
    tf.reset_default_graph()
    seen = String[]
    function by_name(op)
        push!(seen, op.node_def.name)  # requests into Python while Python waits for this callback
        return occursin("Sin", op.name) ? "/device:CPU:1" : "/device:CPU:0"
    end
    a, b = @pywith tf.device(by_name) begin
        a = constant(1.0)
        (a, sin(a))
    end
    @test a.device == "/device:CPU:0" && b.device == "/device:CPU:1"
    @test length(seen) >= 2
    function picky(op)
        occursin("Sin", op.name) && throw(DomainError(op.name, "no sines here"))
        return "/device:CPU:0"
    end
    err = try
        @pywith tf.device(picky) begin
            sin(constant(2.0))
        end
    catch e
        e
    end
    @test err isa PyError && endswith(err.type, "JuliaError")
    @test err.julia_exception isa DomainError
    @test occursin("no sines here", err.message)
    @test occursin("Traceback", sprint(DevPlace.last_error))  # the way back: TF's frames
    shown = sprint(showerror, err)
    @test startswith(shown, "PyError: a Julia function called from Python threw:\nDomainError")
    @test count("no sines here", shown) == 1 && !occursin("JuliaError", shown)
    @test constant(3.0).device == ""  # the device function's scope was left
    @test echo("in sync") == "in sync"
end

@testset "a device function's op knows its name, type and device without asking Python" begin
    tf.reset_default_graph()
    seen = []
    function note(op)
        requests = D.HOST[].seq
        push!(seen, (op.name, op.type, op.device, D.HOST[].seq - requests))
        return "/device:CPU:0"
    end
    y = @pywith tf.device(note) begin
        @pywith tf.device("/cpu:1") begin  # applied first: TensorFlow goes innermost first
            sin(constant(1.0))
        end
    end
    graph = tf.get_default_graph()
    @test [s[1] for s in seen] == [op.name for op in graph.get_operations()] == ["Const", "Sin"]
    @test [s[2] for s in seen] == [graph.get_operation_by_name(s[1]).type for s in seen]
    @test all(s -> s[3] == "/device:CPU:1", seen)  # the inner scope's, set before `note` runs
    @test all(s -> s[4] == 0, seen)  # answered in Julia: no request
    @test y.device == "/device:CPU:0"
    @test D.OP_INFO[] === nothing  # known only while the function runs
end

@testset "a Python error inside a callback comes back once, as itself" begin
    tf.reset_default_graph()
    broken(op) = op.no_such_attribute
    err = try
        @pywith tf.device(broken) begin
            constant(1.0)
        end
    catch e
        e
    end
    @test err isa PyError && err.type == "AttributeError"
    shown = sprint(showerror, err)
    @test startswith(shown, "PyError: AttributeError: ")
    @test count("no_such_attribute", shown) == 1
    @test !occursin("JuliaError", shown) && !occursin("PyError: PyError", shown)
    @test echo("in sync") == "in sync"
end

@testset "callbacks nest as deep as Python's recursion limit allows, and fail clearly beyond" begin
    keep = pybuiltin("object")()
    pylist, pymap = pybuiltin("list"), pybuiltin("map")
    nest(n) = n == 0 ? 0 : 1 + pylist(pymap(nest, [n - 1]))[1]
    # Python's default limit (1000 frames) leaves room for about 120 levels through the host
    # process, about 100 in process (each level's call from C counts there too)
    @test nest(90) == 90
    for n in (200, 2000)  # beyond the limit
        err = try
            nest(n)
        catch e
            e
        end
        @test err isa PyError && endswith(err.type, "CallbackDepthError")
        @test occursin("recursion limit", err.message) && occursin("Hint", err.message)
        @test length(sprint(showerror, err)) < 1000  # one error, not one per level
    end
    @test occursin("object object", D.pyrepr(keep))  # the host and its objects stay
    # a Julia error 60 levels down comes back once, and the next call works
    fail_at(n) = n == 60 ? error("failed at level $n") : pylist(pymap(fail_at, [n + 1]))[1]
    err = try
        fail_at(0)
    catch e
        e
    end
    @test err isa PyError && err.julia_exception isa ErrorException
    @test count("failed at level 60", sprint(showerror, err)) == 1
    @test nest(90) == 90
end

@testset "a Julia function in a py_func runs on Julia's thread, its error raised where run was called" begin
    tf.reset_default_graph()
    x = constant([1.0, 2.0, 3.0])
    calls = Ref(0)
    double = a -> (calls[] += 1; 2 .* a)
    y = tf.py_func(double, [x], tf.float64)
    bad = a -> error("bad py_func: $(length(a)) values")
    z = tf.py_func(bad, [x], tf.float64)
    sess = Session()
    if D.transport() == :inprocess
        # TensorFlow calls `double` on one of its own threads: Julia's thread makes the call
        @test run(sess, y) == [2.0, 4.0, 6.0] && calls[] == 1
        @test run(sess, y + 1.0) == [3.0, 5.0, 7.0] && calls[] == 2
        err = try
            run(sess, z)
        catch e
            e
        end
        @test err isa PyError && err.julia_exception isa ErrorException
        @test occursin("bad py_func: 3 values", sprint(showerror, err))
        @test run(sess, y) == [2.0, 4.0, 6.0]  # the session stays usable
    else
        # the host serves Julia on its main thread only: a clear error, the session usable
        err = try
            run(sess, y)
        catch e
            e
        end
        @test err isa PyError && occursin("other than the host's main thread", err.message)
        @test calls[] == 0
        @test run(sess, x) == [1.0, 2.0, 3.0]
    end
end
