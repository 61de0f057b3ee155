# The seeds' snippets, as written in examples/julia/ (each run in a fresh module, on a fresh
# graph, in a temporary folder): the device attributes read exactly as the seeds show.

const EXAMPLES = joinpath(REPO, "examples", "julia")

function run_example(name)
    tf.reset_default_graph()
    m = Module(Symbol("example_", name))
    mktempdir() do dir
        cd(dir) do
            Base.include(m, joinpath(EXAMPLES, name * ".jl"))
            Core.eval(m, :(files = $(readdir())))
        end
    end
    return m
end

@testset "seed: device scope" begin
    m = run_example("device_scope")
    @test m.a.device == "/device:GPU:0"
    @test m.b.device == "/device:GPU:0"
end

@testset "seed: @cpu / @gpu" begin
    m = run_example("device_macros")
    @test m.a.device == "/device:CPU:0" && m.b.device == "/device:CPU:0"
    @test m.c.device == "/device:CPU:1"
    @test m.d.device == "/device:GPU:0"
end

@testset "seed: custom device function" begin
    m = run_example("device_function")
    @test m.a.device == "/device:CPU:0"
    @test m.b.device == "/device:GPU:0"
    @test m.c.device == "/device:CPU:0" && m.d.device == "/device:GPU:0"
end

@testset "seed: colocated gradients, both profiles saved" begin
    m = run_example("colocate_gradients")
    @test "true.json" in m.files && "false.json" in m.files
    ops = Dict(op.name => op for op in tf.get_default_graph().get_operations())
    # colocate=true: the gradient of sin sits with sin (GPU:0); colocate=false: default device
    @test ops["gradients/Sin_grad/Cos"].colocation_groups() == [b"loc:@Sin"]
    @test ops["gradients_1/Sin_grad/Cos"].colocation_groups() == [b"loc:@gradients_1/Sin_grad/Cos"]
end

@testset "seed: batch norm updates on the CPU" begin
    m = run_example("batch_norm_updates")
    @test length(m.update_ops) == 2
    @test all(op.device == "/device:CPU:0" for op in m.update_ops)
    @test m.train_with_updates.type == "NoOp"
    @test Set(op.name for op in m.train_with_updates.control_inputs) ⊇ Set(op.name for op in m.update_ops)
end

for name in ("placement_by_op_type", "placement_logging", "round_robin_variables",
             "soft_placement", "control_dependencies", "thread_pools")
    @testset "example: $name" begin
        @test run_example(name) isa Module
    end
end
