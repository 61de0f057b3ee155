# ADCME's files (src/adcme/io.jl): .mat files read back by scipy, pickles, TensorBoard events.

import Sockets

@testset "save and load: a .mat file keyed as ADCME keys it" begin
    reset_default_graph()
    sess = Session()
    a = Variable([1.0, 2.0, 3.0]; name = "a")
    W = Variable([1.0 2.0; 3.0 4.0]; name = "layer/W")
    init(sess)
    file = joinpath(mktempdir(), "vars.mat")
    d = save(sess, file, [a, W])
    @test Set(keys(d)) == Set(["acolon0", "layerbackslashWcolon0"])
    m = DevPlace.matread(file)
    @test m["layerbackslashWcolon0"] == [1.0 2.0; 3.0 4.0] && m["acolon0"] == reshape([1.0, 2.0, 3.0], 3, 1)
    run(sess, [assign(a, zeros(3)), assign(W, zeros(2, 2))])
    load(sess, file, [a, W])
    @test run(sess, a) == [1.0, 2.0, 3.0] && run(sess, W) == [1.0 2.0; 3.0 4.0]
    run(sess, assign(a, zeros(3)))
    load(sess, d, a)
    @test run(sess, a) == [1.0, 2.0, 3.0]
    b = Variable(5.0; name = "b")
    init(sess)
    @test_logs (:warn, r"b:0 not found") load(sess, file, [b])
    @test run(sess, b) == 5.0
    @test save(sess, b) == Dict("bcolon0" => 5.0)
end

@testset "relative file names are Julia's: after a cd, files land in Julia's folder" begin
    reset_default_graph()
    sess = Session()
    a = Variable([1.0, 2.0]; name = "a")
    init(sess)
    dir = mktempdir()
    cd(dir) do  # the host keeps the folder it started in
        save(sess, "rel.mat", a)
        psave([1.0, 2.0], "rel.pkl")
        @test isfile(joinpath(dir, "rel.mat")) && isfile(joinpath(dir, "rel.pkl"))
        @test DevPlace.matread("rel.mat")["acolon0"] == reshape([1.0, 2.0], 2, 1)
        @test pload("rel.pkl") == [1.0, 2.0]
        run(sess, assign(a, zeros(2)))
        load(sess, "rel.mat", a)
        @test run(sess, a) == [1.0, 2.0]
    end
end

@testset "psave and pload: a Python object through pickle" begin
    file = joinpath(mktempdir(), "o.pkl")
    psave(pyimport("fractions").Fraction(3, 4), file)
    p = pload(file)
    @test p isa PyObject && p.numerator == 3 && p.denominator == 4
    psave(Dict("a" => 1, "b" => [1.0, 2.0]), file)
    @test pload(file) == Dict("a" => 1, "b" => [1.0, 2.0])
end

@testset "Diary: scalar summaries in TensorBoard's event files" begin
    reset_default_graph()
    sess = Session()
    x = placeholder(Float64)
    s = scalar(x, "x")
    d = Diary()
    for i in 1:5
        write(d, i, run(sess, s, x => 0.5i))
    end
    dir = joinpath(mktempdir(), "diary")
    save(d, dir)
    events = filter(f -> occursin("tfevents", f), readdir(dir))
    @test length(events) == 1
    read_events = pyimport("tensorflow").compat.v1.train.summary_iterator
    values = Float64[]
    for e in pybuiltin("list")(read_events(joinpath(dir, events[1])))
        for v in e.summary.value
            v.tag == "x" && push!(values, v.simple_value)
        end
    end
    @test values == [0.5, 1.0, 1.5, 2.0, 2.5]
    load(d, dir)
    @test d.tdir == dir
end

@testset "activate: TensorBoard serves a Diary" begin
    reset_default_graph()
    sess = Session()
    x = placeholder(Float64)
    s = scalar(x, "x")
    d = Diary()
    for i in 1:3
        write(d, i, run(sess, s, x => 1.5i))
    end
    server = Sockets.listenany(Sockets.localhost, 20000)  # a port free now
    port = Int(server[1])
    close(server[2])
    tb = activate(d, port)
    # TensorBoard's HTTP API (JSON), nothing while it does not answer yet
    json_at = pybuiltin("eval")("""lambda url: __import__("json").loads(
        __import__("urllib.request", fromlist=["urlopen"]).urlopen(url, timeout=5).read())""")
    ask(path) = try json_at("http://localhost:$port$path") catch; nothing end
    try
        deadline = time() + 180  # TensorBoard starts in seconds; a loaded machine takes longer
        runs = points = nothing
        while time() < deadline && process_running(tb)
            runs = ask("/data/runs")
            # the Diary's folder is the log folder, so its run is "."
            points = runs === nothing ? nothing : ask("/data/plugin/scalars/scalars?run=.&tag=x")
            points === nothing || length(points) < 3 ? sleep(0.5) : break
        end
        @test runs !== nothing && collect(String, runs) == ["."]
        # [wall time, step, value] per point: the Diary's steps and values
        @test points !== nothing && [(Int(p[2]), Float64(p[3])) for p in points] ==
              [(1, 1.5), (2, 3.0), (3, 4.5)]
    finally
        kill(tb)
        wait(tb)
    end
end
