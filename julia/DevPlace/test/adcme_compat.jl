# ADCME code as written: its qualified names (`ADCME.options`), Session's `CPU`/`GPU`,
# `placeholder(x; dtype)`, no DevPlace export that a page's own struct collides with, and
# `newton_raphson`'s line search with `reset_default_options`.

"Evaluate `code` (a module written as a user would) in Main; the module."
user_module(code::String) = Core.eval(Main, Meta.parse(code))

@testset "ADCME's qualified names: ADCME.options, ADCME.save, ADCME.newton_raphson" begin
    @test ADCME === DevPlace && ADCME.options === DevPlace.options
    m = user_module("module UsesAlias using DevPlace; o = ADCME.options; f = ADCME.save end")
    @test m.o === DevPlace.options && m.f === DevPlace.save
    m = user_module("module ImportsAlias import DevPlace: ADCME; f = ADCME.newton_raphson end")
    @test m.f === DevPlace.newton_raphson
    m = user_module("module UsingAlias using DevPlace.ADCME; f = ADCME.load; g = placeholder end")
    @test m.f === DevPlace.load && m.g === DevPlace.placeholder
    m = user_module("module AssignsAlias using DevPlace; ADCME = DevPlace; v = ADCME.options end")
    @test m.v === DevPlace.options
end

@testset "a page's own struct NRResult does not collide with DevPlace's" begin
    @test !Base.isexported(DevPlace, :NRResult)
    m = user_module("""module OwnNRResult using DevPlace
                       struct NRResult; x::Vector{Float64}; end
                       r = NRResult([1.0]) end""")
    @test m.r.x == [1.0] && m.NRResult !== DevPlace.NRResult
    # the exported types ADCME lacks (README says which): PyCall's and DevPlace's own features
    adcme = Set(Symbol(split(l, '\t')[1]) for l in
                readlines(joinpath(@__DIR__, "..", "ADCME_NAMES.tsv"))[2:end])
    adcme_lacks = [n for n in names(DevPlace) if getfield(DevPlace, n) isa DataType && !(n in adcme)]
    @test sort(adcme_lacks) == [:HostError, :PyError, :PyObject]
end

@testset "Session(CPU=..., GPU=...): ADCME's names for cpus and gpus" begin
    reset_default_graph()
    count_of(sess, kind) = count(d -> d.device_type == kind, sess.list_devices())
    sess = Session(CPU = 3)
    @test count_of(sess, "CPU") == 3
    sess = Session(GPU = 0, CPU = 2)
    @test count_of(sess, "GPU") == 0 && count_of(sess, "CPU") == 2
    err = try; Session(CPU = 2, cpus = 2); catch e; e; end
    @test err isa ArgumentError && occursin("CPU", err.msg) && occursin("cpus", err.msg)
    @test_throws ArgumentError Session(GPU = "one")  # checked as gpus is
end

@testset "placeholder(value; dtype) converts the value; run(...; feed_dict), as ADCME" begin
    reset_default_graph()
    sess = Session()
    p = placeholder(1; dtype = Float64)
    @test p.dtype == tf.float64 && run(sess, p) === 1.0
    q = placeholder([1.0, 2.0]; dtype = Float32)
    @test q.dtype == tf.float32 && run(sess, q) == Float32[1, 2]
    @test run(sess, 2p, p => 3.0) == 6.0  # still a placeholder
    @test run(sess, [2p, q]; feed_dict = Dict(p => 4.0)) == [8.0, Float32[1, 2]]  # ADCME's keyword
end

@testset "newton_raphson with a line search; reset_default_options" begin
    reset_default_graph()
    # min sum(sqrt(1 + u²)): Newton's full step from |u| > 1 overshoots (u → -u³) and diverges;
    # the line search keeps each step descending, to the minimizer 0.
    f(θ, u) = (sum(sqrt(1 + u^2)), u / sqrt(1 + u^2), spdiag((1 + u^2)^(-1.5)))
    ADCME.options.newton_raphson.max_iter = 3  # two steps
    nr_plain = newton_raphson((θ, u) -> f(θ, u)[2:3], constant([2.0, -1.5]))
    ADCME.options.newton_raphson.linesearch, ADCME.options.newton_raphson.max_iter = true, 100
    @test DevPlace.options.newton_raphson.linesearch_options.αinitial == 1.0
    nr = newton_raphson(f, constant([2.0, -1.5]))
    err = try; newton_raphson((θ, u) -> f(θ, u)[2:3], [2.0]); catch e; e; end
    @test err isa ArgumentError && occursin("objective", err.msg)
    @test reset_default_options() === DevPlace.options
    @test !ADCME.options.newton_raphson.linesearch && ADCME.options.newton_raphson.max_iter == 100
    sess = Session()
    r, plain = run(sess, nr), run(sess, nr_plain)
    @test r.converged && maximum(abs.(r.x)) < 1e-10
    @test plain.x ≈ [2.0, -1.5] .^ 9  # u → -u³, twice
end
