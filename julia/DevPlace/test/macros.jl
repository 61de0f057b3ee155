# @pywith, @cpu and @gpu.

@testset "@pywith" begin
    contextlib = pyimport("contextlib")
    @test (@pywith contextlib.nullcontext(5) as x begin
        x + 1
    end) == 6
    @test (@pywith contextlib.nullcontext() begin
        :done
    end) == :done
    # a Julia exception reaches __exit__ and is rethrown...
    @test_throws ErrorException @pywith contextlib.nullcontext() begin
        error("inside")
    end
    # ...unless __exit__ suppresses it
    JuliaError = pyimport("devplace.bridge").JuliaError
    @test (@pywith contextlib.suppress(JuliaError) begin
        error("suppressed")
    end) === nothing
    @test_throws DomainError @pywith contextlib.nullcontext() begin
        sqrt(-1.0)
    end
    err = try
        macroexpand(Main, :(@pywith x y z))
    catch e
        e isa LoadError ? e.error : e
    end
    @test err isa ArgumentError && occursin("usage", err.msg)
end

@testset "@cpu and @gpu place ops; the index is any runtime expression" begin
    tf.reset_default_graph()
    @cpu begin
        global t0 = constant(1.0)
    end
    @test t0.device == "/device:CPU:0"
    for i in 0:2
        @cpu i begin
            global ti = constant(2.0) + 1
        end
        @test ti.device == "/device:CPU:$i"
    end
    devices = Dict(:a => 3)
    @cpu devices[:a] - 1 begin
        global tj = constant(3.0)
    end
    @test tj.device == "/device:CPU:2"
    @gpu begin
        global tg = Variable(1.0)
    end
    @test tg.device == "/device:GPU:0"
    @gpu 1 begin
        global tg1 = constant(1.0)
    end
    @test tg1.device == "/device:GPU:1"
    err = try
        @cpu "one" begin
            constant(1.0)
        end
    catch e
        e
    end
    @test err isa ArgumentError && occursin("\"one\"", err.msg) && occursin("Hint", err.msg)
    @test_throws ArgumentError @cpu -1 constant(1.0)
    @test_throws ArgumentError @cpu true constant(1.0)
    # the scope ends with the block, also when the block throws
    @test_throws ErrorException @cpu 1 begin
        error("x")
    end
    @test constant(1.0).device == ""
end

"A Python context manager that logs its enters and exits (with the exception it saw)."
function recording_manager()
    ns = pycall(pybuiltin("dict"), PyObject)
    pybuiltin("exec")("""
import contextlib
log = []

@contextlib.contextmanager
def recording(name):
    log.append(("enter", name))
    try:
        yield name
    except BaseException as e:
        log.append(("exit", name, type(e).__name__, getattr(e, "julia_type", ""),
                    getattr(e, "message", ""), len(getattr(e, "julia_traceback", "")) > 0))
        raise
    else:
        log.append(("exit", name))
""", ns)
    return ns["recording"], () -> ns["log"]
end

function leave_by_return(recording)
    @pywith recording("r") as name begin
        return name * "!"
    end
    return "not reached"
end

function cpu1_by_return()
    @cpu 1 begin
        return constant(1.0)
    end
end

@testset "@pywith: __exit__ sees the Julia exception; return and break leave the manager" begin
    recording, log = recording_manager()
    @test_throws ErrorException @pywith recording("a") begin
        error("boom")
    end
    @test log()[end] == ("exit", "a", "JuliaError", "ErrorException", "boom", true)
    @test leave_by_return(recording) == "r!"
    @test log()[end] == ("exit", "r")
    for i in 1:3
        @pywith recording("b$i") begin
            i == 2 && break
        end
    end
    @test log()[end-1:end] == [("enter", "b2"), ("exit", "b2")]
    for i in 1:2
        @pywith recording("c$i") begin
            continue
        end
    end
    @test log()[end] == ("exit", "c2")
    tf.reset_default_graph()
    @test cpu1_by_return().device == "/device:CPU:1"
    @test constant(2.0).device == ""  # the device scope was left by `return`
end

@testset "@pywith whose host died in the block rethrows the block's error" begin
    nullcontext = pyimport("contextlib").nullcontext
    err = try
        @pywith nullcontext() begin
            D.stop_host()
            error("after the host")
        end
    catch e
        e
    end
    @test err isa ErrorException && err.msg == "after the host"
    @test D.HOST[] === nothing  # leaving the dead scope did not start a new host
    @test (@pywith pyimport("contextlib").nullcontext() begin
        D.stop_host()
        :value
    end) === :value
    @test echo(1) == 1
end

@testset "@pywith on something that is not a context manager" begin
    err = try
        @pywith 42 begin
            error("not reached")
        end
    catch e
        e
    end
    @test err isa PyError && err.type == "TypeError"
    @test occursin("needs a Python context manager", err.message)
    @test occursin("42 of type int", err.message) && occursin("Hint", err.message)
end
