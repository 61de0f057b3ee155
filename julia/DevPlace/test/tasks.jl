# Device scopes belong to the Julia task that opened them (issue 16): interleaved @async tasks
# each build under their own scope, leaving a scope never changes another task's placement, and
# ops built after all tasks end land with no scope.

@testset "interleaved tasks each get their own scope's device" begin
    tf.reset_default_graph()
    t1 = @async @cpu 1 begin
        sleep(0.2)
        constant(1.0).device
    end
    t2 = @async begin
        sleep(0.1)
        @gpu 0 begin
            sleep(0.4)
            constant(2.0).device
        end
    end
    @test fetch(t1) == "/device:CPU:1"
    @test fetch(t2) == "/device:GPU:0"
    @test constant(3.0).device == ""
end

@testset "a task leaving its scope never changes another task's placement" begin
    tf.reset_default_graph()
    log = Channel{Tuple{Int,String}}(100)
    worker(i, n) = @async @cpu i begin
        for k in 1:n
            put!(log, (i, constant(Float64(k)).device))
            yield()
        end
    end
    tasks = [worker(i, 5 + 3i) for i in 0:3]  # they end at different times
    foreach(wait, tasks)
    close(log)
    seen = collect(log)
    @test length(seen) == sum(5 + 3i for i in 0:3)
    @test all(dev == "/device:CPU:$i" for (i, dev) in seen)
    @test constant(0.0).device == ""
end

@testset "nested scopes, errors and colocation stay with their task" begin
    tf.reset_default_graph()
    a = constant(1.0)
    ready = Channel{Nothing}(1)
    go = Channel{Nothing}(1)
    inner = @async @cpu 2 begin
        put!(ready, nothing)
        take!(go)                       # the main task builds while this scope is open
        (@cpu(3, constant(1.0).device), constant(1.0).device)
    end
    take!(ready)
    @test constant(2.0).device == ""    # not /device:CPU:2
    failing = @async @gpu 1 begin
        error("inside a scope")
    end
    @test_throws TaskFailedException wait(failing)
    @test constant(2.0).device == ""    # the failed task's scope is gone
    control_dependencies([a]) do
        put!(go, nothing)
        @test fetch(inner) == ("/device:CPU:3", "/device:CPU:2")
        global after = constant(3.0)
    end
    @test a.op in after.op.control_inputs
    @test isempty(constant(4.0).op.control_inputs)
    sess = Session(cpus = 4, soft = true)
    @test run(sess, after) === 3.0
end

@testset "a task's default graph, name and variable scopes stay its own (issue 20)" begin
    # The other task builds in a graph of its own under a variable scope while the main task
    # builds in the default graph through a device function that yields (sleeps): the tasks
    # take turns in the middle of their blocks.
    tf.reset_default_graph()
    g0 = tf.get_default_graph()
    slow(op) = (sleep(0.01); "/device:CPU:1")
    mine, theirs = Channel{Nothing}(1), Channel{Nothing}(1)
    x0 = constant(0.0)
    other = @async begin
        g = tf.Graph()
        @pywith g.as_default() begin
            @pywith tf.variable_scope("other") begin
                a = constant(1.0)
                for k in 1:3
                    put!(mine, nothing)
                    take!(theirs)                   # the main task builds now
                    a = a + constant(Float64(k))
                end
                v = tf.get_variable("v", shape = ())
                (a.graph == g, a.name, a.device, v.name, tf.get_default_graph() == g)
            end
        end
    end
    y = @pywith tf.device(slow) begin
        local y = x0
        for k in 1:3
            take!(mine)                             # the other task is inside its blocks
            y = y + constant(Float64(k))            # before: "must be from the same graph"
            put!(theirs, nothing)
        end
        y
    end
    w = tf.get_variable("w", shape = ())
    in_g, aname, adevice, vname, g_default = fetch(other)
    @test in_g && g_default
    @test startswith(aname, "other/") && adevice == "" && vname == "other/v:0"
    @test y.graph == g0 && y.device == "/device:CPU:1" && !occursin("other", y.name)
    @test w.name == "w:0" && w.graph == g0
    @test tf.get_default_graph() == g0
    @test run(Session(cpus = 2), y) === 6.0
end
