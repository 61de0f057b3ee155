# A real cluster of TF servers from Julia: LocalCluster, ClusterSession, stopped at the end.

"Is process `pid` still there? (signal 0 checks without sending anything)"
process_alive(pid) = ccall(:kill, Cint, (Cint, Cint), pid, 0) == 0

@testset "LocalCluster and ClusterSession from Julia" begin
    tf.reset_default_graph()
    outcome = Ref{Any}(nothing)
    pids = Int[]
    # The do-block starts 1 ps and 1 worker (at most 120 s), and stops them when it ends:
    # here by throwing, after the work, so the way out by exception is tested as well.
    err = try
        LocalCluster(ps = 1, workers = 1, start_timeout = 120) do c
            @test c isa PyObject
            spec = c.spec
            @test spec isa Dict && length(spec["ps"]) == 1 && length(spec["worker"]) == 1
            append!(pids, collect(values(c.pids)))
            @test all(process_alive, pids)
            w = @pywith DevPlace.device(DevPlace.cluster.device("ps", 0)) begin
                Variable(3.0; name = "w")
            end
            y = @pywith DevPlace.device("/job:worker/task:0/cpu:0") begin
                w * 2
            end
            sess = ClusterSession(c, "worker", 0; timeout = 30)
            init(sess)
            outcome[] = run(sess, y)
            report = placement(sess, y)
            @test occursin("/job:ps/", report.actual("w"))
            @test occursin("/job:worker/", report.actual(y.op.name))
            sess.close()
            by_spec = ClusterSession(spec; timeout = 30)  # a spec Dict, job and task defaulted
            @test by_spec.target == "grpc://" * spec["worker"][1]
            @test run(by_spec, y) == 6.0  # variables live on the ps task, across sessions
            by_spec.close()
            error("leaving the cluster block by an exception")
        end
    catch e
        e
    end
    @test err isa ErrorException && occursin("leaving the cluster block", err.msg)
    @test outcome[] == 6.0
    @test !isempty(pids)
    @test !any(process_alive, pids)  # every server (and the forwarder) was stopped
    err = try
        ClusterSession(Dict("worker" => ["127.0.0.1:1"]), "ps", 0)
    catch e
        e
    end
    @test err isa PyError && occursin("ps", err.message)
end

@testset "wait_ready and serve from Julia: the tasks at fault named" begin
    nobody = Dict("worker" => ["127.0.0.1:1"])  # port 1: nothing listens there
    err = try
        DevPlace.cluster.wait_ready(nobody, timeout = 0.5)
    catch e
        e
    end
    @test err isa PyError && endswith(err.type, "ClusterNotReadyError")
    @test occursin("/job:worker/task:0 at 127.0.0.1:1 is gone", err.message)
    err = try
        DevPlace.cluster.serve(nobody, "ps", 0)
    catch e
        e
    end
    @test err isa PyError && endswith(err.type, "TaskConfigError")
    @test occursin("has no task /job:ps/task:0; its tasks are /job:worker/task:0", err.message)
end
