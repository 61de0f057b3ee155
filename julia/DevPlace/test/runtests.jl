# DevPlace.jl test suite. Run as
#   julia --project=julia/DevPlace julia/DevPlace/test/runtests.jl
# (Pkg.test would try to reach a registry; Test is a stdlib.)
using DevPlace
using Test

const D = DevPlace
const REPO = normpath(joinpath(@__DIR__, "..", "..", ".."))

"""
Run `f` with Python in a host process of its own (what only that transport has: a process to
kill, a request timeout, a start-up to fail), then go back to the transport the suite runs
under (`ENV["DEVPLACE_TRANSPORT"]`).
"""
function on_host_process(f)
    old = D.TRANSPORT[]
    D.set_transport(:process)
    try
        f()
    finally
        D.set_transport(old)
    end
end

println("DevPlace.jl suite, transport: ", D.transport())

@testset "DevPlace.jl" begin
    include("vectors.jl")
    include("layering.jl")
    include("overwrite.jl")
    include("conversion.jl")
    include("host.jl")
    include("callbacks.jl")
    include("errors.jl")
    include("macros.jl")
    include("api.jl")
    include("adcme.jl")
    include("adcme_api.jl")
    include("adcme_api_ops.jl")
    include("adcme_sparse.jl")
    include("adcme_optim.jl")
    include("adcme_layers.jl")
    include("adcme_io.jl")
    include("adcme_compat.jl")
    include("adcme_rbf.jl")
    include("adcme_flow.jl")
    include("adcme_ode.jl")
    include("adcme_extra.jl")
    include("adcme_kit.jl")
    include("adcme_pcl.jl")
    include("adcme_sqlite_ot.jl")
    include("indexing.jl")
    include("badinput.jl")
    include("tasks.jl")
    include("seeds.jl")
    include("tf1_programs.jl")
    include("cluster.jl")
    include("handles.jl")
    include("display.jl")
end
