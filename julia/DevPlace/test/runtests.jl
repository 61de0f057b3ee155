# DevPlace.jl test suite. Run as
#   julia --project=julia/DevPlace julia/DevPlace/test/runtests.jl [FILE.jl ...]
# (Pkg.test would try to reach a registry; Test is a stdlib.) With no FILE, every file of
# TEST_FILES in order; with some, just those (tests/test_bridge_julia.py runs the suite in groups,
# one Julia process each, and checks that its groups hold every file of TEST_FILES once).
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

"Equal value and equal type, recursively (so 1 == 1.0 does not pass)."
same(a, b) = typeof(a) == typeof(b) && isequal(a, b)
same(a::Tuple, b::Tuple) = length(a) == length(b) && all(same.(a, b))
same(a::AbstractArray, b::AbstractArray) = typeof(a) == typeof(b) && size(a) == size(b) && all(same.(a, b))
same(a::AbstractDict, b::AbstractDict) = typeof(a) == typeof(b) && keys(a) == keys(b) && all(same(a[k], b[k]) for k in keys(a))

"A value through the running host (or Python in this process) and back."
echo(x) = D.request(D.OP_ECHO, (x,))

"DevPlace's docstrings (binding => docs), each kept by the module that holds it: a floor or DevPlace."
docstrings() = [d for m in (DevPlace, D.FLOORS...) for d in Docs.meta(m)]

"Has DevPlace a docstring for `name` (its own function, or a method it added to another's)?"
documented(name::Symbol) =
    any(m -> haskey(Docs.meta(m), Docs.Binding(DevPlace, name)), (DevPlace, D.FLOORS...))

"The test files, in the order a whole run includes them (every *.jl here but this one)."
const TEST_FILES = [
    "vectors.jl",
    "layering.jl",
    "overwrite.jl",
    "conversion.jl",
    "host.jl",
    "callbacks.jl",
    "errors.jl",
    "macros.jl",
    "api.jl",
    "adcme.jl",
    "adcme_api.jl",
    "adcme_api_ops.jl",
    "adcme_sparse.jl",
    "adcme_optim.jl",
    "adcme_layers.jl",
    "adcme_io.jl",
    "adcme_compat.jl",
    "adcme_rbf.jl",
    "adcme_flow.jl",
    "adcme_ode.jl",
    "adcme_extra.jl",
    "adcme_kit.jl",
    "adcme_pcl.jl",
    "adcme_sqlite_ot.jl",
    "indexing.jl",
    "badinput.jl",
    "tasks.jl",
    "seeds.jl",
    "tf1_programs.jl",
    "cluster.jl",
    "handles.jl",
    "display.jl",
]

const FILES = isempty(ARGS) ? TEST_FILES : ARGS
let unknown = setdiff(FILES, TEST_FILES)
    isempty(unknown) || error("runtests.jl: no test file ", join(unknown, ", "),
                              " in TEST_FILES; the files are ", join(TEST_FILES, ", "))
end

println("DevPlace.jl suite, transport: ", D.transport(), ", files: ", join(FILES, " "))

@testset "DevPlace.jl" begin
    for file in FILES
        seconds = @elapsed include(file)
        println(file, ": ", round(seconds; digits = 1), " s")
    end
end
