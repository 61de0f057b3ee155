# ADCME's src/optim.jl: TensorFlow's optimizers (`AdamOptimizer(...).minimize(loss)`), scipy's
# minimizers over a graph's variables (`BFGS!`, `ScipyOptimizerInterface`, `Optimize!`,
# `CustomOptimizer`; the host's side is python/devplace/bridge/adcme/optim.py) and Newton-Raphson
# solvers built into the graph. ADCME's options for them are `DevPlace.options`.

"""
    AdamOptimizer(learning_rate=1e-3; kwargs...)

TensorFlow's Adam optimizer (`tf.train.AdamOptimizer`): `opt = AdamOptimizer().minimize(loss)`,
then `run(sess, opt)` takes one step. The learning rate may be a placeholder. The other
optimizers (`GradientDescentOptimizer`, `AdadeltaOptimizer`, `AdagradOptimizer`,
`AdagradDAOptimizer`, `RMSPropOptimizer`) are used the same way.
"""
AdamOptimizer(learning_rate = 1e-3; kwargs...) =
    tfcall("train.AdamOptimizer"; learning_rate = learning_rate, kwargs...)

"""
    AdadeltaOptimizer(learning_rate=1e-3; kwargs...)

TensorFlow's Adadelta optimizer; see `AdamOptimizer`.
"""
AdadeltaOptimizer(learning_rate = 1e-3; kwargs...) =
    tfcall("train.AdadeltaOptimizer"; learning_rate = learning_rate, kwargs...)

"""
    AdagradDAOptimizer(learning_rate=1e-3; global_step, kwargs...)

TensorFlow's Adagrad dual averaging optimizer; `global_step` is an int64 variable. See
`AdamOptimizer`.
"""
AdagradDAOptimizer(learning_rate = 1e-3; global_step, kwargs...) =
    tfcall("train.AdagradDAOptimizer", learning_rate, global_step; kwargs...)

"""
    AdagradOptimizer(learning_rate=1e-3; kwargs...)

TensorFlow's Adagrad optimizer; see `AdamOptimizer`.
"""
AdagradOptimizer(learning_rate = 1e-3; kwargs...) =
    tfcall("train.AdagradOptimizer", learning_rate; kwargs...)

"""
    GradientDescentOptimizer(learning_rate=1e-3; kwargs...)

Plain gradient descent (`tf.train.GradientDescentOptimizer`); see `AdamOptimizer`.
"""
GradientDescentOptimizer(learning_rate = 1e-3; kwargs...) =
    tfcall("train.GradientDescentOptimizer", learning_rate; kwargs...)

"""
    RMSPropOptimizer(learning_rate=1e-3; kwargs...)

TensorFlow's RMSProp optimizer; see `AdamOptimizer`.
"""
RMSPropOptimizer(learning_rate = 1e-3; kwargs...) =
    tfcall("train.RMSPropOptimizer", learning_rate; kwargs...)

"""
    minimize(o::PyObject, loss_or_sess::PyObject; kwargs...)

`o.minimize(...)`: for a TensorFlow optimizer the op that takes one step on `loss`; for a
`CustomOptimizer` or `ScipyOptimizerInterface`, the minimization run in `sess`.
"""
minimize(o::PyObject, x::PyObject; kwargs...) = o.minimize(x; kwargs...)

"Keyword values as the host takes them: a Dict keyed by variables travels as a Python dict."
python_kwargs(kwargs) =
    Dict{Symbol,Any}(k => v isa AbstractDict ? PyDict(Pair[v...]) : v for (k, v) in kwargs)

"""
    ScipyOptimizerInterface(loss; method="L-BFGS-B", options=Dict("maxiter"=>15000, "ftol"=>1e-12, "gtol"=>1e-12), kwargs...)

An optimizer of `loss` over the trainable variables (`var_list=[...]` to choose) by
`scipy.optimize.minimize` with `method`, as TF1's `tf.contrib.opt.ScipyOptimizerInterface`:
`var_to_bounds=Dict(x => [lo, hi])`, `equalities=[c]` (kept `== 0`) and `inequalities=[c]`
(kept `>= 0`, e.g. with `method="SLSQP"`). Run it with `ScipyOptimizerMinimize(sess, opt)`.
"""
ScipyOptimizerInterface(loss::PyObject; method::AbstractString = "L-BFGS-B",
                        options = scipy_options(method, 15000), kwargs...) =
    bridge_rule("adcme.optim", "ScipyOptimizerInterface", loss; method = String(method),
                options = options, python_kwargs(kwargs)...)

"""
    ScipyOptimizerMinimize(sess, opt; feed_dict, fetches, step_callback, loss_callback)

Run the minimization of a `ScipyOptimizerInterface` in `sess`; the variables hold the result.
`loss_callback(fetched...)` follows each evaluation of the loss (with `fetches` evaluated),
`step_callback(x)` each accepted step (`x`: all variables as one vector). Stopped early (Ctrl-C,
an error), the variables hold the last accepted step: the best values so far.
"""
ScipyOptimizerMinimize(sess::PyObject, opt::PyObject; kwargs...) =
    opt.minimize(sess; python_kwargs(kwargs)...)

"ADCME's options for scipy's `method`: tolerances 1e-12 where the method takes them."
scipy_options(method, max_iter) = method == "L-BFGS-B" ?
    Dict("maxiter" => Int(max_iter), "ftol" => 1e-12, "gtol" => 1e-12) : Dict("maxiter" => Int(max_iter))

"Check the keys of `bounds` are trainable variables, as ADCME does; a PyDict of them."
function variable_bounds(bounds::AbstractDict)
    for k in keys(bounds)
        k isa PyObject && pyhasattr(k, "trainable") || throw(ArgumentError(string(
            "BFGS!: the keys of `bounds` (or `var_to_bounds`) must be Variables, got ", k,
            ". Hint: x = Variable(2.0); BFGS!(sess, loss; bounds=Dict(x => [1.0, 3.0]))")))
        k.trainable || @warn("The variable $k is not trainable, ignoring the bounds")
    end
    return PyDict(Pair[k => collect(v) for (k, v) in bounds])
end

"""
    BFGS!(sess, loss, max_iter=15000; vars=PyObject[], callback=nothing, method="L-BFGS-B", bounds, feed_dict, kwargs...)

Minimize `loss` over the trainable variables with scipy's L-BFGS-B (or `method`), at most
`max_iter` iterations; the variables hold the minimizer. Prints each evaluation
(`iter k, current loss=...`) and each step, as ADCME does; `callback(vs, iter, loss)` follows
each step, `vs` the values of `vars`. `bounds=Dict(x => [lo, hi])` bounds variables. Returns
the loss after each step. Ctrl-C stops it, the variables at the best values so far.

    BFGS!(sess, loss, grads, vars; kwargs...)

The same with the gradients given (`grads[i]` of `loss` for `vars[i]`); see `Optimize!`.

    BFGS!(value_and_gradients_function, initial_position, max_iter=50; kwargs...)

BFGS built into the graph (`tensorflow_probability`'s `bfgs_minimize`): `f(x)` gives the loss
and its gradient as tensors; returns the tensor of the final position.
"""
function BFGS!(sess::PyObject, loss::PyObject, max_iter::Integer = 15000;
               vars::AbstractArray = PyObject[], callback::Union{Function,Nothing} = nothing,
               method::AbstractString = "L-BFGS-B", kwargs...)
    kw = Dict{Symbol,Any}(kwargs)
    haskey(kw, :bounds) && (kw[:var_to_bounds] = pop!(kw, :bounds))
    haskey(kw, :var_to_bounds) && (kw[:var_to_bounds] = variable_bounds(kw[:var_to_bounds]))
    feeds = pop!(kw, :feed_dict, nothing)
    opt = ScipyOptimizerInterface(loss; method = method, options = scipy_options(method, max_iter), kw...)
    # Refs of concrete types, not variables the closures reassign (boxed: every use of them
    # looked up at run time, on each of a minimization's hundreds of callbacks)
    evals, current, values, losses = Ref(0), Ref(0.0), Ref{Tuple}(()), Float64[]
    function print_loss(l, vs...)
        evals[] == 0 && @info "Optimization starts..."   # once the loss runs: not before an error
        println("iter ", evals[], ", current loss=", l)
        current[], values[], evals[] = l, vs, evals[] + 1
        return nothing  # what a callback returns goes back to Python
    end
    function print_step(_)
        println("================ STEP ", length(losses), " ===============")
        callback === nothing || callback(collect(values[]), length(losses), current[])
        push!(losses, current[])
        return nothing
    end
    ScipyOptimizerMinimize(sess, opt; loss_callback = print_loss, step_callback = print_step,
                           fetches = [loss, vars...],
                           feed_dict = feeds === nothing ? nothing : feed_dict("BFGS!", (feeds,)))
    return losses
end

BFGS!(sess::PyObject, loss::PyObject, grads::Union{AbstractArray,Nothing,PyObject},
      vars::Union{AbstractArray,PyObject}; kwargs...) =
    Optimize!(sess, loss; vars = vars, grads = grads, kwargs...)

function BFGS!(value_and_gradients_function::Function,
               initial_position::Union{PyObject,AbstractArray{Float64}}, max_iter::Integer = 50,
               args...; kwargs...)
    isempty(args) || throw(ArgumentError(string("BFGS!(f, x0, max_iter): no further positional ",
        "arguments are taken, got ", length(args), ". Hint: pass tensorflow_probability's ",
        "options as keywords, e.g. tolerance=1e-8")))
    return bridge_rule("adcme.optim", "bfgs_minimize", value_and_gradients_function,
                       initial_position, Int(max_iter); kwargs...)
end

"""
    Optimize!(sess, loss, max_iter=15000; vars, grads, optimizer, callback, f_tol, g_tol, return_feval_loss=false, kwargs...)

Minimize `loss` over `vars` (default: the trainable variables) with gradients `grads`
(default: `gradients(loss, vars)`). `optimizer(f, g!, fg, x0; max_iter, kwargs...)` is your
own minimizer (`f(x)`, `g!(G, x)`, `fg(G, x)` assign `x` to the variables and evaluate); its
result is returned. Without one, scipy's L-BFGS-B stands in for ADCME's default
`Optim.LBFGS()` (Optim.jl cannot be installed here), with `f_tol` and `g_tol` (default 1e-12),
printing each evaluation and step while `DevPlace.options.training.verbose`; it returns the
loss after each step (and the loss of each evaluation too with `return_feval_loss=true`).
`callback(x, iter, loss)` follows each step.
"""
function Optimize!(sess::PyObject, loss::PyObject, max_iter::Integer = 15000;
                   vars = missing, grads = missing, optimizer = missing,
                   callback::Union{Function,Missing} = missing, x_tol = missing,
                   f_tol = missing, g_tol = missing, return_feval_loss::Bool = false, kwargs...)
    vars = variable_list(coalesce(vars, get_collection()))
    grads = coalesce(grads, gradients(loss, vars))
    grads = grads isa PyObject ? [grads] : collect(grads)
    length(grads) == length(vars) ||
        throw(ArgumentError("Optimize!: length of grads and vars do not match"))
    all(is_variable, vars) ||
        throw(ArgumentError("Optimize!: the input `vars` should be trainable variables"))
    opt = bridge_rule("adcme.optim", "ScipyOptimizerInterface", loss; var_list = vars,
                      grads = grads, method = "L-BFGS-B",
                      options = Dict("maxiter" => Int(max_iter), "ftol" => coalesce(f_tol, 1e-12),
                                     "gtol" => coalesce(g_tol, 1e-12)))
    optimizer isa Function && return custom_minimize(optimizer, sess, opt, max_iter; kwargs...)
    optimizer === missing || throw(ArgumentError(string("Optimize!: `optimizer` must be a ",
        "function (or left out for L-BFGS-B), got ", typeof(optimizer), ". Optim.jl's ",
        "optimizers are not available: Optim.jl cannot be installed here")))
    x_tol === missing || throw(ArgumentError(
        "Optimize!: `x_tol` is Optim.jl's; scipy's L-BFGS-B has none. Hint: use f_tol or g_tol"))
    isempty(kwargs) || throw(ArgumentError(string("Optimize!: unknown keywords ",
        join(keys(kwargs), ", "), " (Optim.jl's options are not available)")))
    return optimize_lbfgsb!(sess, opt, callback, return_feval_loss)
end

"Optimize!'s default: L-BFGS-B in the host, printing as ADCME's Optimize! does."
function optimize_lbfgsb!(sess, opt, callback, return_feval_loss)
    losses, feval_losses = Float64[], Float64[]
    function on_eval(l)
        isempty(feval_losses) && @info "Optimization starts..."   # once the loss runs
        push!(feval_losses, l)
        options.training.verbose && println("iter $(length(feval_losses)), current loss = $l")
    end
    function on_step(x)
        push!(losses, feval_losses[end])
        @info (length(losses), losses[end])
        options.training.verbose && println("================== STEP $(length(losses)) ==================")
        callback === missing || callback(x, length(losses), losses[end])
    end
    opt.minimize(sess; loss_callback = on_eval, step_callback = on_step, fetches = [opt.loss])
    return return_feval_loss ? (losses, feval_losses) : losses
end

"`Optimize!` with the user's `optimizer(f, g!, fg, x0; max_iter, kwargs...)`."
function custom_minimize(optimizer, sess, opt, max_iter; kwargs...)
    x0 = opt.packed_values(sess)
    f(x) = opt.evaluate(sess, x)[1]
    g!(G, x) = (G[:] = opt.evaluate(sess, x)[2]; G)
    function fg(G, x)
        l, g = opt.evaluate(sess, x)
        G[:] = g
        return l
    end
    return optimizer(f, g!, fg, x0; max_iter = max_iter, kwargs...)
end

"""
    CustomOptimizer(opt::Function)

An optimizer type built on your minimizer
`opt(f, df, c, dc, x0, x_L, x_U) -> x`: `f(x)` is the loss, `df(x)` its gradient, `c(x)` the
inequality constraints then the equality ones, `dc(x)` their gradients (one column per
constraint, flattened), `x0` the start, `x_L`/`x_U` the bounds (±Inf where none). Then
`Con = CustomOptimizer(opt)`, `o = Con(loss; inequalities=[c1], equalities=[c2],
var_to_bounds=Dict(x => [lo, hi]))` and `minimize(o, sess)` (or `o.minimize(sess)`); the
variables are assigned the `x` that `opt` returns.
"""
function CustomOptimizer(opt::Function)
    function driver(f, df, c, dc, x0, x_L, x_U, nineq, neq)
        printstyled("[CustomOptimizer] Number of inequalities constraints = $nineq, Number of ",
                    "equality constraints = $neq\n", color = :blue)
        printstyled("[CustomOptimizer] Total number of variables = $(length(x0))\n", color = :blue)
        return opt(x -> f(x), x -> df(x), x -> c(x), x -> dc(x), x0, x_L, x_U)
    end
    return (loss::PyObject; kwargs...) ->
        bridge_rule("adcme.optim", "CustomOptimizer", driver, loss; python_kwargs(kwargs)...)
end

"""
    OptionsNewtonRaphson_LineSearch

ADCME's options of `newton_raphson`'s backtracking line search
(`DevPlace.options.newton_raphson.linesearch_options`): `c1` (1e-4, the sufficient decrease
factor), `ρ_hi` (0.5) and `ρ_lo` (0.1) bound each new step to `[ρ_lo, ρ_hi]` times the last,
`iterations` (1000, the most steps tried), `maxstep` (unused, as in ADCME) and `αinitial` (1.0,
the first step).
"""
mutable struct OptionsNewtonRaphson_LineSearch
    c1::Float64
    ρ_hi::Float64
    ρ_lo::Float64
    iterations::Int64
    maxstep::Int64
    αinitial::Float64
    OptionsNewtonRaphson_LineSearch() = new(1e-4, 0.5, 0.1, 1000, 9999999, 1.0)
end

"""
    OptionsNewtonRaphson

ADCME's options of `newton_raphson` (`DevPlace.options.newton_raphson`): `max_iter` (100),
`verbose` (false: true prints each iteration's residual), `rtol` and `tol` (1e-12, relative and
absolute residual tolerances), `LM` (0.0: a Levenberg-Marquardt shift `(J + LM*I) \\ r`),
`linesearch` (false: true scales each Newton step by a backtracking line search on the
objective, see `newton_raphson`) and `linesearch_options` (`OptionsNewtonRaphson_LineSearch`).
"""
mutable struct OptionsNewtonRaphson
    max_iter::Int64
    verbose::Bool
    rtol::Float64
    tol::Float64
    LM::Float64
    linesearch::Bool
    linesearch_options::OptionsNewtonRaphson_LineSearch
    OptionsNewtonRaphson() = new(100, false, 1e-12, 1e-12, 0.0, false, OptionsNewtonRaphson_LineSearch())
end

"""
    OptionsTraining

`verbose` (true): `Optimize!` prints each evaluation and step; `training`: the default of
`dropout`'s `training` (`false`, or a boolean tensor such as `placeholder(false)`).
"""
mutable struct OptionsTraining
    training::Union{Bool,PyObject}
    verbose::Bool
    OptionsTraining() = new(false, true)
end

"""
    Options

ADCME's options (`DevPlace.options`, as `ADCME.options`): `newton_raphson` and `training`.
"""
mutable struct Options
    newton_raphson::OptionsNewtonRaphson
    training::OptionsTraining
    Options() = new(OptionsNewtonRaphson(), OptionsTraining())
end

"ADCME's options: see `Options`."
const options = Options()

"""
    reset_default_options()

Set every option of `DevPlace.options` back to its default (the object stays the same, so
`ADCME.options` read earlier sees the reset too).
"""
function reset_default_options()
    defaults = Options()
    options.newton_raphson, options.training = defaults.newton_raphson, defaults.training
    return options
end

"""
    NRResult

What `newton_raphson` gives: `x` the solution, `res` the residual norms, `u` the iterates (one
column each), `converged`, `iter` the number of iterations. Tensors; `run(sess, nr)` gives an
`NRResult` of values.
"""
struct NRResult
    x::Any
    res::Any
    u::Any
    converged::Any
    iter::Any
end

Base.run(sess::PyObject, nr::NRResult) = NRResult(run(sess, [nr.x, nr.res, nr.u, nr.converged, nr.iter])...)

"""
    newton_raphson(func, u0, θ=missing, args::PyObject...; kwargs...) -> NRResult

Solve `r(u) = 0` by Newton-Raphson iterations built into the graph (`while_loop`):
`func(θ, u, args...; kwargs...)` gives the residual `r` and its Jacobian `A` (a tensor, or a
sparse matrix), `u0` is the initial vector. Options are `DevPlace.options.newton_raphson` (see
`OptionsNewtonRaphson`). With `linesearch = true`, `func` gives an objective first, `(f, r, A)`
(`r` the gradient of the scalar `f`), and each step `-A⁻¹r` is scaled by a backtracking line
search (cubic interpolation, Armijo's condition) until `f` decreases enough. No gradients
flow through the result: see `newton_raphson_with_grad`.
"""
function newton_raphson(func::Function, u0::Union{AbstractArray,PyObject},
                        θ::Union{Missing,PyObject,AbstractArray{<:Real}} = missing,
                        args::PyObject...; kwargs...)
    o = options.newton_raphson
    length(size(u0)) == 1 || throw(ArgumentError("newton_raphson: the initial guess must be a vector"))
    f = (θ, u) -> func(θ, u, args...; kwargs...)
    u = convert_to_tensor(u0)
    out0 = f(θ, u)
    o.linesearch && length(out0) != 3 && throw(ArgumentError(string("newton_raphson: with a line ",
        "search, `func(θ, u)` must give the objective, the residual and the Jacobian, got ",
        length(out0), " values. Hint: f(θ, u) = (sum((u - 1)^2), 2(u - 1), 2spdiag(length(u)))")))
    # the objective (nothing if func gives none), the residual and the Newton step at x
    function step(x)
        out = f(θ, x)
        val, r, J = length(out) == 2 ? (nothing, out...) : out
        return val, r, (o.LM > 0 ? J + o.LM * diagm(ones(length(u0))) : J) \ r
    end
    function condition(i, ta_r, ta_u)
        function going()
            tol, rel_tol = read(ta_r, i - 1), read(ta_r, i - 2)
            o.verbose && (tol = bind(tol, tfcall("print", "Newton iteration ", i - 2, ": r (abs) =",
                                                 tol, " r (rel) =", rel_tol; summarize = -1)))
            large = tfcall("math.logical_and", tol >= o.tol, rel_tol >= o.rtol)
            return tfcall("math.logical_and", large, i <= o.max_iter)
        end
        return if_else(tfcall("equal", i, 2), constant(true), going)
    end
    function body(i, ta_r, ta_u)
        x = read(ta_u, i - 1)
        val, r, δ = step(x)
        α = o.linesearch ? backtracking(x -> f(θ, x)[1], x, val, r, δ, o.linesearch_options) : 1.0
        return i + 1, write(ta_r, i, norm(r)), write(ta_u, i, x - α * δ)
    end
    tol0 = norm(out0[end-1])
    ta_r = write(TensorArray(o.max_iter), 1, tol0)
    ta_u = write(TensorArray(o.max_iter), 1, u)
    i_, ta_r_, ta_u_ = while_loop(condition, body, [constant(2; dtype = Int32), ta_r, ta_u];
                                  back_prop = false)
    r_out, u_out = stack(ta_r_), stack(ta_u_)
    done0 = tfcall("less", tol0, o.tol)
    n = cast(Int64, i_) - 2
    sol = if_else(done0, u, u_out[i_ - 1, :])
    res = if_else(done0, reshape(tol0, (1,)), tfcall("slice", r_out, constant([1]), stack([n])))
    u_his = if_else(done0, reshape(u, (1, length(u0))),
                    tfcall("slice", u_out, constant([0, 0]), stack([n, constant(length(u0))])))
    iter = if_else(done0, constant(1), n)
    converged = tfcall("less", i_, o.max_iter)
    return NRResult(stop_gradient(sol), stop_gradient(res), u_his', converged, iter)
end

"""
    backtracking(objective, u, f0, r0, δ0, o::OptionsNewtonRaphson_LineSearch) -> PyObject

The step size `α` along `-δ0` from `u` (where the objective is `f0` and its gradient `r0`):
starting from `o.αinitial`, each try is the minimizer of the quadratic (first) or cubic
interpolation of the objective along the line, kept within `[o.ρ_lo, o.ρ_hi]` times the last,
until Armijo's condition `objective(u - α δ0) <= f0 + o.c1 α f'(0)` holds (at most
`o.iterations` tries). Along a direction that does not descend, `o.αinitial`. As LineSearches.jl's `BackTracking(order=3)`, ADCME's line search.
"""
function backtracking(objective::Function, u::PyObject, f0::PyObject, r0::PyObject,
                      δ0::PyObject, o::OptionsNewtonRaphson_LineSearch)
    o.ρ_lo < o.ρ_hi && o.iterations > 0 || throw(ArgumentError(string("newton_raphson: the line ",
        "search needs ρ_lo < ρ_hi and iterations > 0, got ρ_lo = ", o.ρ_lo, ", ρ_hi = ", o.ρ_hi,
        ", iterations = ", o.iterations, ". Hint: reset_default_options()")))
    df0 = -sum(r0 * δ0)  # the slope of the objective along -δ0
    # Not a descent direction (a Jacobian that is not positive definite): the full step, as ADCME.
    descent = df0 < 0
    function condition(i, ta_α, ta_f)
        sufficient = read(ta_f, i) <= f0 + o.c1 * read(ta_α, i) * df0
        going = tfcall("math.logical_and", descent, i <= o.iterations)
        return tfcall("math.logical_and", tfcall("math.logical_not", sufficient), going)
    end
    function body(i, ta_α, ta_f)
        α1, α2, f1, f2 = read(ta_α, i - 1), read(ta_α, i), read(ta_f, i - 1), read(ta_f, i)
        quadratic() = -df0 * α2^2 / (2 * (f2 - f0 - df0 * α2))
        function cubic()
            d = 1 / (α1^2 * α2^2 * (α2 - α1))
            a = (α1^2 * (f2 - f0 - df0 * α2) - α2^2 * (f1 - f0 - df0 * α1)) * d
            b = (-α1^3 * (f2 - f0 - df0 * α2) + α2^3 * (f1 - f0 - df0 * α1)) * d
            return if_else(abs(a) < 1e-10, () -> -df0 / (2b),
                           () -> (-b + sqrt(max(b^2 - 3a * df0, 0.0))) / (3a))
        end
        α = if_else(tfcall("equal", i, 2), quadratic, cubic)
        α = if_else(tfcall("math.is_nan", α), () -> α2 * o.ρ_hi,
                    () -> max(min(α, α2 * o.ρ_hi), α2 * o.ρ_lo))
        return i + 1, write(ta_α, i + 1, α), write(ta_f, i + 1, objective(u - α * δ0))
    end
    α0 = constant(o.αinitial)
    ta_α = write(write(TensorArray(o.iterations + 1), 1, α0), 2, α0)
    ta_f = write(write(TensorArray(o.iterations + 1), 1, f0), 2, objective(u - α0 * δ0))
    i, ta_α, _ = while_loop(condition, body, [constant(2; dtype = Int32), ta_α, ta_f];
                            back_prop = false)
    return read(ta_α, i)
end

"""
    newton_raphson_with_grad(f, u0, θ=missing, args::PyObject...; kwargs...) -> PyObject

The solution of `newton_raphson(f, u0, θ, args...)`, differentiable with respect to `θ` (and
`args`) by the implicit function theorem: `du/dθ = -A⁻¹ ∂r/∂θ`, `A` the Jacobian `f` gives.
With `θ` not a tensor there is nothing to differentiate (a warning says so).
"""
function newton_raphson_with_grad(func::Function, u0::Union{AbstractArray,PyObject},
                                  θ::Union{Missing,PyObject,AbstractArray{<:Real}} = missing,
                                  args::PyObject...; kwargs...)
    f = (θ, u) -> func(θ, u, args...; kwargs...)
    x = newton_raphson(f, u0, θ).x
    θ isa PyObject || (@warn("θ is not a PyObject, no gradients is available"); return x)
    r, A = f(θ, x)
    # At the solution r = 0: the value is x, the gradient -A⁻¹ ∂r/∂θ (x itself is constant).
    return x - A \ r
end

"""
    NonlinearConstrainedProblem(f, L, θ, u0) -> (loss, u, grad)

For `min L(u)` subject to `r(θ, u) = 0` (`r, A = f(θ, u)`, `A` the Jacobian in `u`): the loss
at the Newton-Raphson solution `u` (from `u0`), `u`, and the gradient of the loss in `θ` by
the adjoint method, e.g. for `BFGS!(sess, loss, grad, θ)`.
"""
function NonlinearConstrainedProblem(f::Function, L::Function, θ::Union{AbstractVector{Float64},PyObject},
                                     u0::Union{PyObject,AbstractArray{Float64}})
    θ = convert_to_tensor(θ)
    nr = newton_raphson(f, u0, θ)
    r, A = f(θ, nr.x)
    l = L(nr.x)
    g = independent(A' \ convert_to_tensor(gradients(l, nr.x)))
    return l, nr.x, convert_to_tensor(-gradients(sum(r * g), θ))
end
