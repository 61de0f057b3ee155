# The host process: errors, hygiene, death, timeouts, restarts, start-up failures.

@testset "Python errors become PyError" begin
    err = try
        pybuiltin("int")("twelve")
    catch e
        e
    end
    @test err isa PyError
    @test err.type == "ValueError"
    @test occursin("twelve", err.message)
    @test startswith(sprint(showerror, err), "PyError: ValueError: invalid literal")
    # the message first, then the frames outside the bridge (here: json's own), each once
    err = try
        pyimport("json").loads("{x")
    catch e
        e
    end
    shown = sprint(showerror, err)
    @test startswith(shown, "PyError: json.decoder.JSONDecodeError: Expecting property name")
    @test occursin("Python Traceback (most recent call last):", shown)
    @test occursin("json/decoder.py", shown) && !occursin("devplace/bridge", shown)
    @test count("Expecting property name", shown) == 1
    @test_throws PyError pybuiltin("no_such_builtin")
    @test_throws PyError tf.no_such_attribute
end

@testset "tf's names and builtins are looked up once per host" begin
    requests(f) = (before = D.HOST[].seq; f(); D.HOST[].seq - before)
    tf.NodeDef, tf.Tensor, pybuiltin("isinstance")  # looked up (maybe already, by earlier tests)
    @test requests(() -> tf.NodeDef) == 0
    @test requests(() -> pybuiltin("isinstance")) == 0
    x = constant(1.0)
    @test requests(() -> pybuiltin("isinstance")(x, tf.Tensor)) == 1  # the call only
    @test pybuiltin("isinstance")(x, tf.Tensor) && !pybuiltin("isinstance")(x, tf.NodeDef)
    json = pyimport("json")  # a module's other attributes are asked for each time
    @test requests(() -> json.dumps) == 1
    D.stop_host()
    D.host()  # a new host: the names are looked up again, in it
    tf.Tensor  # finds `tf` itself in the new host too
    @test requests(() -> tf.NodeDef) == 1
    @test requests(() -> tf.NodeDef) == 0
    @test pybuiltin("len")([1, 2, 3]) == 3
    fresh = D.lazy_pyobject(() -> pyimport("types").SimpleNamespace(a = 1))
    @test fresh.a == 1
    fresh.a = 2  # setting a name forgets what was found for it
    @test fresh.a == 2 && requests(() -> fresh.a) == 0
    for args in ((fresh, 1), (1, 2, 3, 4, 5, 6, 7, 8, 9, fresh))  # short and long tuples
        D.stop_host()  # a lazy object inside an argument is found again in the new host
        @test pybuiltin("len")(args) == length(args)
        @test occursin("namespace(a=1)", pybuiltin("str")(args))
    end
    @test_throws PyError pybuiltin("no_such_builtin")
    @test_throws PyError pybuiltin("no_such_builtin")  # every time: nothing kept of it
end

@testset "host output cannot corrupt frames" begin
    os = pyimport("os")
    @test os.write(1, Vector{UInt8}("\x05\0\0\0junk on fd 1\n")) > 0
    pybuiltin("print")("junk on sys.stdout"; flush = true)
    @test os.system("echo junk from a subprocess") == 0
    @test echo("in sync") == "in sync"
end

@testset "a killed host is a clear error at once, and the next call starts a new one" begin on_host_process() do
        old = D.host_pid()
        stale = pybuiltin("object")()
        killer = run(`sh -c "sleep 0.5; kill -9 $old"`; wait = false)
        t = time()
        err = try
            pyimport("time").sleep(120)
        catch e
            e
        end
        @test err isa HostError
        # Not a benchmark: the host died 0.5 s in, and without noticing its pipe close Julia would
        # wait for the 120 s sleep (or the 600 s timeout). Generous for a loaded machine.
        @test time() - t < 20
        @test occursin("killed by signal 9", err.msg)
        @test occursin("next DevPlace call starts a fresh host", err.msg)
        wait(killer)
        @test D.host_pid() != old
        @test_throws D.StaleObjectError stale.x
        @test occursin("StaleObjectError", repr(stale))  # show never throws
        @test tf.float32 isa PyObject  # module-level objects are found again
        @test echo((1, Any[D.DP_MODULE, (tf,)])) isa Tuple  # also inside containers, before encoding
end end

@testset "a host that stops answering is stopped after the timeout" begin on_host_process() do
        old_timeout = D.timeout()
        echo(1)  # the host's start-up (TensorFlow) is over: the bound below is the request's
        D.set_timeout(1.0)
        pid = D.host_pid()
        t = time()
        err = try
            pyimport("time").sleep(30)
        catch e
            e
        finally
            D.set_timeout(old_timeout)
        end
        @test err isa HostError
        @test occursin("did not answer within 1.0 s", err.msg)
        @test occursin("set_timeout", err.msg)
        @test time() - t < 10
        @test D.host_pid() != pid
        @test_throws ArgumentError D.set_timeout(0)
end end

@testset "start-up failures name the interpreter and give a hint" begin on_host_process() do
        D.stop_host()
        withenv("DEVPLACE_PYTHON" => "/nonexistent/python") do
            err = try
                D.host()
            catch e
                e
            end
            @test err isa HostError
            @test occursin("/nonexistent/python", err.msg) && occursin("DEVPLACE_PYTHON", err.msg)
        end
        withenv("DEVPLACE_PYTHON" => Sys.which("false")) do
            err = try
                D.host()
            catch e
                e
            end
            @test err isa HostError
            @test occursin("exited with code 1 while starting", err.msg)
            @test occursin("DEVPLACE_PYTHON", err.msg)
        end
        @test echo(1) == 1
end end

@testset "start-up has its own bound, whatever the request timeout" begin
    on_host_process() do
        old, old_start = D.timeout(), D.START_TIMEOUT[]
        try
            D.stop_host()
            D.set_timeout(0.2)  # far shorter than TensorFlow's import in a fresh host
            @test echo(1.5) == 1.5
            D.set_timeout(old)
            D.stop_host()
            D.START_TIMEOUT[] = 0.2
            err = try echo(1) catch e e end
            @test err isa D.HostError
            @test occursin("did not finish starting within 0.2 s", err.msg)
            @test occursin("START_TIMEOUT", err.msg) && !occursin("echo", err.msg)
        finally
            D.set_timeout(old)
            D.START_TIMEOUT[] = old_start
        end
        @test echo(2) == 2  # the next call starts a fresh host
    end
end

@testset "the bridge's precompile list names only methods that exist" begin
    # compiled while TensorFlow loads (in process) and cached when DevPlace is precompiled: a
    # renamed function or changed signature would silently compile nothing
    @test isempty(D.precompile_bridge())
    @test D.Transports.COMPILE_BRIDGE[] === D.precompile_bridge
end
