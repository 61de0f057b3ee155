# ADCME's optimizers (src/adcme/optim.jl) against hand-computed minimizers and LinearAlgebra.

using LinearAlgebra, Markdown

"What `f()` prints to stdout, and its value."
function printed(f)
    path, io = mktemp()
    value = redirect_stdout(f, io)
    close(io)
    return read(path, String), value
end

@testset "BFGS!: least squares as LinearAlgebra solves it, printed as ADCME prints" begin
    reset_default_graph()
    sess = Session()
    A = [2.0 1.0; 1.0 3.0; 0.0 1.0]
    b = [1.0, 2.0, 3.0]
    x = Variable(zeros(2))
    loss = sum((A * x - b)^2)
    init(sess)
    seen = []
    out, losses = printed(() -> BFGS!(sess, loss; vars = [x],
                                      callback = (vs, it, l) -> push!(seen, (vs[1], it, l))))
    @test run(sess, x) ≈ A \ b atol = 1e-8
    @test losses[end] ≈ sum((A * (A \ b) - b) .^ 2) atol = 1e-10
    @test occursin("iter 0, current loss=", out) && occursin("================ STEP 0 ===============", out)
    @test length(seen) == length(losses) && [s[2] for s in seen] == 0:length(losses)-1
    @test isapprox(seen[end][1], A \ b; atol = 1e-6) && [s[3] for s in seen] == losses
end

@testset "BFGS!: bounds, the gradients-and-variables form, the function form" begin
    reset_default_graph()
    sess = Session()
    x = Variable([2.0, -2.0])
    loss = sum(x^2)
    init(sess)
    printed(() -> BFGS!(sess, loss; bounds = Dict(x => [[1.0, -3.0], [3.0, -0.5]])))
    @test run(sess, x) ≈ [1.0, -0.5]
    @test_throws ArgumentError BFGS!(sess, loss; bounds = Dict(constant(1.0) => [0.0, 1.0]))
    y = Variable(3.0)
    loss2 = (y - 1.0)^4 + (y - 1.0)^2
    init(sess)
    _, losses = printed(() -> BFGS!(sess, loss2, gradients(loss2, y), y))
    @test isapprox(run(sess, y), 1.0; atol = 1e-4) && losses[end] < 1e-8 && issorted(losses; rev = true)
    vg(z) = (sum((z - [1.0, 2.0])^2), 2 * (z - [1.0, 2.0]))
    @test run(sess, BFGS!(vg, [5.0, -5.0])) ≈ [1.0, 2.0]
    @test_throws ArgumentError BFGS!(vg, [5.0, -5.0], 10, 1)
end

@testset "Optimize!: your own optimizer, and what Optim.jl would need" begin
    reset_default_graph()
    sess = Session()
    x = Variable([0.0, 0.0])
    loss = sum((x - [1.0, -2.0])^2)
    init(sess)
    function descent(f, g!, fg, x0; max_iter, kwargs...)
        z, G = copy(x0), zeros(length(x0))
        for _ in 1:50
            fg(G, z)
            z -= 0.25 * G
        end
        return f(z)
    end
    @test Optimize!(sess, loss; optimizer = descent) < 1e-12
    @test run(sess, x) ≈ [1.0, -2.0]
    @test_throws ArgumentError Optimize!(sess, loss; optimizer = :LBFGS)
    @test_throws ArgumentError Optimize!(sess, loss; x_tol = 1e-3)
    run(sess, assign(x, [3.0, 3.0]))
    out, (losses, evals) = printed(() -> Optimize!(sess, loss; return_feval_loss = true))
    @test run(sess, x) ≈ [1.0, -2.0] && losses[end] < 1e-12 && length(evals) >= length(losses)
    @test occursin("================== STEP 1 ==================", out)
end

@testset "ScipyOptimizerInterface with constraints, CustomOptimizer" begin
    reset_default_graph()
    sess = Session()
    x = Variable([0.0, 0.0])
    loss = sum((x - [3.0, 1.0])^2)
    opt = ScipyOptimizerInterface(loss; method = "SLSQP", inequalities = [1.5 - x[1]],
                                  equalities = [x[2] - 2 * x[1]])
    init(sess)
    ScipyOptimizerMinimize(sess, opt)
    # On the line x2 = 2 x1 the minimum is at x1 = 1; the bound x1 <= 1.5 does not bind.
    @test run(sess, x) ≈ [1.0, 2.0] atol = 1e-6
    seen = Dict{Symbol,Any}()
    Con = CustomOptimizer() do f, df, c, dc, x0, x_L, x_U
        seen[:c0], seen[:dc0], seen[:bounds] = c(x0), dc(x0), (x_L, x_U)
        z = copy(x0)
        for _ in 1:100
            z = clamp.(z - 0.25 * df(z), x_L, x_U)  # projected gradient descent
        end
        z
    end
    o = Con(loss; inequalities = [1.5 - x[1]], var_to_bounds = Dict(x => [-1.0, 2.0]))
    run(sess, assign(x, [0.5, 0.0]))
    printed(() -> minimize(o, sess))
    @test run(sess, x) ≈ [2.0, 1.0] atol = 1e-6
    @test seen[:c0] ≈ [1.0] && seen[:dc0] ≈ [-1.0, 0.0] && seen[:bounds] == ([-1.0, -1.0], [2.0, 2.0])
end

@testset "TensorFlow's optimizers: one step as computed by hand" begin
    reset_default_graph()
    sess = Session()
    x = Variable(0.0)
    loss = (x - 1.0)^2
    step = GradientDescentOptimizer(0.1).minimize(loss)
    adam = minimize(AdamOptimizer(0.1), loss)
    init(sess)
    run(sess, step)
    @test run(sess, x) ≈ 0.2  # x - 0.1 * 2 (x - 1)
    run(sess, adam)
    @test run(sess, x) ≈ 0.3 atol = 1e-6  # Adam's first step is the learning rate times the gradient's sign
    # One step of each from z = 0, where the gradient g of (z - 1)^2 is -2, by TensorFlow 1's
    # update rules and default constants.
    g, ε = -2.0, 1e-8
    by_hand = [
        # Adadelta (ρ 0.95): accum = (1 - ρ) g², update = √(0 + ε) / √(accum + ε) g, z -= lr update
        (AdadeltaOptimizer(1.0), -sqrt(ε) / sqrt(0.05 * g^2 + ε) * g),
        # Adagrad: accum = 0.1 (its initial value) + g², z -= lr g / √accum
        (AdagradOptimizer(0.1), -0.1 * g / sqrt(0.1 + g^2)),
        # RMSProp (decay 0.9, ε 1e-10): ms starts at 1, ms = 0.9 ms + 0.1 g², z -= lr g / √(ms + ε)
        (RMSPropOptimizer(0.1), -0.1 * g / sqrt(0.9 + 0.1 * g^2 + 1e-10)),
    ]
    for (optimizer, after) in by_hand
        z = Variable(0.0)
        one_step = minimize(optimizer, (z - 1.0)^2)
        init(sess)
        run(sess, one_step)
        @test run(sess, z) ≈ after rtol = 1e-6  # TensorFlow keeps ρ, ε, decay as float32
    end
end

@testset "newton_raphson, newton_raphson_with_grad, NonlinearConstrainedProblem" begin
    reset_default_graph()
    sess = Session()
    u0 = [0.5, 1.0, 2.0]
    f(θ, u) = (u^3 + u - θ, diagm(3u^2 + 1.0))
    nr = run(sess, newton_raphson(f, zeros(3), u0 .^ 3 + u0))
    @test nr.x ≈ u0 && nr.converged && size(nr.u) == (3, nr.iter) && nr.res[end] < 1e-10
    θ = constant(u0 .^ 3 + u0)
    u = newton_raphson_with_grad(f, zeros(3), θ)
    @test run(sess, u) ≈ u0
    @test run(sess, gradients(sum(u), θ)) ≈ 1 ./ (3u0 .^ 2 .+ 1)  # du/dθ = 1 / (3u² + 1)
    p = Variable([1.0, 2.0])
    g(θ, u) = (u - θ, diagm(ones(2)))
    l, sol, grad = NonlinearConstrainedProblem(g, u -> sum((u - 3.0)^2), p, zeros(2))
    init(sess)
    lv, solv, gradv = run(sess, [l, sol, grad])
    @test lv ≈ 5.0 && solv ≈ [1.0, 2.0] && gradv ≈ 2 * ([1.0, 2.0] .- 3.0)
end

@testset "docstrings keep their underscored names as help renders them (`?BFGS!` on Julia 1.5)" begin
    # Julia 1.5's Markdown takes `_` between words outside backticks for emphasis, so
    # "tensorflow_probability's `bfgs_minimize`" rendered as "tensorflowprobability's ...".
    docs = docstrings()
    garbled = String[]
    for (binding, multidoc) in docs, doc in values(multidoc.docs)
        raw = join(doc.text)
        text = sprint(show, MIME"text/plain"(), Markdown.parse(raw))
        for m in eachmatch(r"[A-Za-z0-9!]+(?:_[A-Za-z0-9!]+)+", raw)
            occursin(m.match, text) || push!(garbled, string(binding.var, ": ", m.match))
        end
    end
    @test isempty(garbled) || (foreach(println, unique(garbled)); false)
    help = sprint(show, MIME"text/plain"(), @doc(BFGS!))  # what `?BFGS!` prints
    @test occursin("tensorflow_probability", help) && occursin("bfgs_minimize", help) &&
          occursin("value_and_gradients_function", help)
end
