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
