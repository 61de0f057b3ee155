# ADCME's SQLite databases, optimal transport and flow sampling (src/adcme/sqlite.jl, ot.jl,
# flow.jl): files read back with Python's own sqlite3, transport costs against plain Julia
# loops, samples' mean and covariance against the flow's.

using LinearAlgebra, Statistics

"The rows of `table` in the SQLite file `path`, read by Python's sqlite3 itself."
function sqlite3_rows(path, table)
    conn = pyimport("sqlite3").connect(path)
    rows = conn.execute("SELECT * FROM $table ORDER BY 1").fetchall()
    conn.close()
    return rows
end

@testset "Database: ADCME's sqlite3 page, rows as Julia values, written to the file" begin
    mktempdir() do dir
        path = joinpath(dir, "simulation.db")
        db = Database(path)
        execute(db, "CREATE TABLE simulation_parameters (name real primary key, dt real, h real, result text)")
        execute(db, "INSERT INTO simulation_parameters VALUES (\"sim1\", 0.1, 0.01, \"file1.png\")")
        params = [("sim2", 0.3, "file2.png"), ("sim3", 0.5, "file3.png"), ("sim4", 0.9, "file4.png")]
        execute(db, "INSERT INTO simulation_parameters VALUES (?, ?, 0.01, ?)", params)
        execute(db, "DELETE from simulation_parameters WHERE name LIKE \"%3\"")
        execute(db, "UPDATE simulation_parameters SET h = 0.2 WHERE name = \"sim4\"")
        c = execute(db, "SELECT * from simulation_parameters")
        expected = [("sim1", 0.1, 0.01, "file1.png"), ("sim2", 0.3, 0.01, "file2.png"),
                    ("sim4", 0.9, 0.2, "file4.png")]
        @test collect(c) == expected && c.columns == ["name", "dt", "h", "result"]
        @test sqlite3_rows(path, "simulation_parameters") == expected  # committed, on disk
        @test keys(db) == ["simulation_parameters", "sqlite_autoindex_simulation_parameters_1"]
        @test keys(db, "simulation_parameters") == ["name", "dt", "h", "result"]
        # a conflicting record: a PyError (PyCall's name too) naming SQLite's reason and the SQL
        err = try
            execute(db, "INSERT INTO simulation_parameters VALUES (\"sim1\", 0.1, 0.1, \"f.png\")")
        catch e
            e
        end
        @test err isa PyCall.PyError && err isa PyError
        @test occursin("IntegrityError: UNIQUE constraint failed: simulation_parameters.name", err.message)
        @test occursin("in the statement: 'INSERT INTO simulation_parameters", err.message)
        execute(db, "INSERT OR IGNORE INTO simulation_parameters VALUES (\"sim1\", 0.1, 0.1, \"f.png\")")
        push!(db, "simulation_parameters", (name = "sim5", dt = 1.5, h = nothing, result = "f5.png"))
        @test db["simulation_parameters"][end] == ("sim5", 1.5, nothing, "f5.png")
        @test_throws ArgumentError execute(db, "INSERT INTO t VALUES (?)", 1.0)
        delete!(db, "simulation_parameters")
        @test keys(db) == String[]
        close(db)
    end
end

@testset "Database: a do block that throws rolls back; columns zip into rows" begin
    mktempdir() do dir
        path = joinpath(dir, "t.db")
        Database(path) do db
            execute(db) do
                "CREATE TABLE t (a real, b real)"
            end
        end
        t1, t2 = [1.0, 2.0, 3.0], [4.0, 5.0, 6.0]
        @test_throws ErrorException Database(path; commit_after_execute = false) do db
            execute(db, "INSERT INTO t VALUES (?, ?)", t1, t2)
            error("the caller's own error")
        end
        @test sqlite3_rows(path, "t") == []
        n = Database(db -> (execute(db, "INSERT INTO t VALUES (?, ?)", t1, t2); length(db["t"])), path)
        @test n == 3 && sqlite3_rows(path, "t") == collect(zip(t1, t2))
    end
    db = Database()  # in memory: gone once closed
    execute(db, "CREATE TABLE t (a real)")
    @test keys(db) == ["t"]
    close(db)
    @test_throws PyError keys(db)
end

"A plain Sinkhorn loop: the transport cost sum(P .* M)."
function plain_sinkhorn(a, b, M, reg; n = 5000)
    K = exp.(-M ./ reg)
    u, v = ones(length(a)), ones(length(b))
    for _ in 1:n
        u = a ./ (K * v)
        v = b ./ (K' * u)
    end
    return sum(u .* K .* v' .* M)
end

"Dynamic time warping, the textbook double loop."
function plain_dtw(s, t)
    D = fill(Inf, length(s) + 1, length(t) + 1)
    D[1, 1] = 0
    for i in 1:length(s), j in 1:length(t)
        D[i+1, j+1] = abs(s[i] - t[j]) + min(D[i, j+1], D[i+1, j], D[i, j])
    end
    return D[end, end]
end

"The 24 permutations of 1:4."
permutations4() = [[i, j, k, 10 - i - j - k] for i in 1:4 for j in 1:4 for k in 1:4
                   if allunique((i, j, k, 10 - i - j - k))]

@testset "optimal transport: sinkhorn, emd, ot_dist, dtw against plain Julia" begin
    reset_default_graph()
    sess = Session()
    a = [0.1, 0.2, 0.3, 0.4]
    b = [0.25, 0.25, 0.5]
    M = [abs(i - 2j) + 0.5 for i in 1:4, j in 1:3]
    for reg in (1.0, 0.05)
        @test run(sess, sinkhorn(a, b, M; reg = reg, tol = 1e-15)) ≈ plain_sinkhorn(a, b, M, reg) rtol = 1e-10
    end
    P, loss = sinkhorn(a, b, constant(M); reg = 0.05, returnall = true)
    @test sum(run(sess, P); dims = 2) ≈ a && run(sess, loss) ≈ plain_sinkhorn(a, b, M, 0.05)
    # uniform weights between 4 points each: the best of the 24 assignments
    x, y = randn(4, 2), randn(4, 2)
    C = ot_dist(x, y)
    best = minimum(sum(C[i, p[i]] for i in 1:4) / 4 for p in permutations4())
    @test run(sess, emd(fill(0.25, 4), fill(0.25, 4), C)) ≈ best
    @test run(sess, empirical_emd(x, y)) ≈ best
    @test run(sess, empirical_sinkhorn(x, y; reg = 0.01, dist = (u, v) -> ot_dist(u, v, 2))) ≈ best atol = 0.05
    @test C ≈ [norm(x[i, :] - y[j, :]) for i in 1:4, j in 1:4] && run(sess, ot_dist(x, constant(y), 3)) ≈ ot_dist(x, y, 3)
    # dtw: ADCME's example (distance 1) and random series, path from 1
    c, p = dtw(Float64[1, 2, 3, 5, 5, 5, 6], Float64[1, 1, 2, 2, 3, 5], true)
    @test run(sess, c) == 1.0 && run(sess, p)[[1, end], :] == [1 1; 7 6]
    s, t = randn(20), randn(13)
    @test run(sess, dtw(s, t)[1]) ≈ plain_dtw(s, t)
    @test_throws ArgumentError sinkhorn([0.5, 0.6], b, M)
    @test_throws ArgumentError sinkhorn(a, b, M[1:3, :])
    mktempdir() do dir
        fig = ot_plot1D(a, b, M)
        fig.savefig(joinpath(dir, "plan.png"))
        @test read(joinpath(dir, "plan.png"))[1:8] == b"\x89PNG\r\n\x1a\n"
    end
end

@testset "rand(::NormalizingFlowModel, n): samples with the flow's mean and covariance, seeded" begin
    reset_default_graph()
    seed!(7)
    A, b = [2.0 0.0; 1.0 1.0], [1.0, -2.0]
    model = NormalizingFlowModel(DevPlace.MultivariateNormalDiag(loc = zeros(2)), [LinearFlow(A, b)])
    xs = rand(model, 100_000)
    x = run(Session(), xs[end])
    @test size(x) == (100_000, 2)
    @test maximum(abs.(vec(mean(x; dims = 1)) - b)) < 0.03   # ~4 standard errors
    @test maximum(abs.(cov(x) - A * A')) < 0.08
    @test run(Session(), xs[end]) == x  # seed!: each new session draws the same samples
end

@testset "ADCME's ot page: a network trained through sinkhorn moves its samples toward N(0, 1)" begin
    # The page's first two blocks (its 10,000 Adam steps cut to 200); ADCME's figure shows the
    # samples' histogram on the normal density.
    reset_default_graph()
    seed!(3)
    K = 64
    z = placeholder(Float64, shape = [K, 10])
    x = squeeze(ae(z, [20, 20, 20, 1]))
    s = placeholder(Float64, shape = [K])
    M = abs(reshape(x, -1, 1) - reshape(s, 1, -1))
    loss = sinkhorn(ones(K) / K, ones(K) / K, M, reg = 0.1)
    opt = AdamOptimizer().minimize(loss)
    sess = Session(); init(sess)
    losses = [run(sess, [opt, loss], z => rand(K, 10), s => randn(K))[2] for i in 1:200]
    @test mean(losses[end-19:end]) < 0.7 * mean(losses[1:20])
    @test all(isfinite, run(sess, tf.gradients(loss, M)[1], z => rand(K, 10), s => randn(K)))
end
