# DevPlace.jl test suite. Run as
#   julia --project=julia/DevPlace julia/DevPlace/test/runtests.jl
# (Pkg.test would try to reach a registry; Test is a stdlib.)
using DevPlace
using Test

const D = DevPlace
const REPO = normpath(joinpath(@__DIR__, "..", "..", ".."))

@testset "DevPlace.jl" begin
    include("vectors.jl")
    include("layering.jl")
    include("conversion.jl")
    include("host.jl")
    include("callbacks.jl")
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
    include("adcme_ode.jl")
    include("adcme_extra.jl")
    include("adcme_pcl.jl")
    include("indexing.jl")
    include("badinput.jl")
    include("tasks.jl")
    include("seeds.jl")
    include("tf1_programs.jl")
    include("cluster.jl")
    include("handles.jl")
    include("display.jl")
end
