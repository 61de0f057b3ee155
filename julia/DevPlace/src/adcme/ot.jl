# ADCME's src/ot.jl: optimal transport without ADCME's compiled operators or downloaded plugins
# (python/devplace/bridge/adcme/ot.py). `sinkhorn` is a TensorFlow while loop (gradients with
# respect to a, b and M are TensorFlow's); `emd` is scipy's HiGHS linear program in the host,
# its gradient with respect to M the optimal plan; `dtw` is dynamic programming in the host.

const OT = "adcme.ot"

const OTInput = Union{PyObject,AbstractArray{<:Real}}

"Check weights given as a Julia array: non-negative, summing to 1 (as ADCME asserts)."
function check_weights(fname, name, w)
    w isa AbstractArray || return
    all(>=(0), w) && isapprox(sum(w), 1.0) || wrong_argument(fname, name, w,
        "non-negative weights summing to 1", string(name, " / sum(", name, ")"))
end

"""
    sinkhorn(a, b, M; reg=1.0, iter=1000, tol=1e-9, method="sinkhorn", returnall=false) -> PyObject

The entropic optimal transport cost `sum(P .* M)` from weights `a` (an m-vector) to `b` (an
n-vector) under the m×n cost `M`, where the plan `P` (`P 1 = a`, `P' 1 = b`, `P ≥ 0`) minimises
`sum(P .* M) + reg * sum(P .* (log.(P) .- 1))`. Sinkhorn's iterations (`method="sinkhorn"`), or
Greenkhorn's one row or column at a time (`"greenkhorn"`; `iter` counts single updates), stop
after `iter` or when the marginals are within `tol`; in the log domain, so small `reg` is
stable. `method="lp"` is [`emd`](@ref). A graph op: its gradients with respect to `a`, `b`, `M`
and `reg` are TensorFlow's, through the iterations. `returnall=true` gives `(P, loss)`.
"""
function sinkhorn(a::OTInput, b::OTInput, M::OTInput; reg::Union{PyObject,Real} = 1.0,
                  iter::Integer = 1000, tol::Real = 1e-9, method::AbstractString = "sinkhorn",
                  returnall::Bool = false)
    check_weights("sinkhorn", "a", a)
    check_weights("sinkhorn", "b", b)
    if a isa AbstractArray && b isa AbstractArray && M isa AbstractArray &&
       size(M) != (length(a), length(b))
        wrong_argument("sinkhorn", "M", M, "a $(length(a))×$(length(b)) matrix (length(a)×length(b))",
                       "M[i, j] is the cost of moving weight from a[i] to b[j]")
    end
    iter >= 1 || wrong_argument("sinkhorn", "iter", iter, "at least 1", "iter = 1000")
    bridge_rule(OT, "sinkhorn", a, b, M, reg isa Real ? Float64(reg) : reg, Int(iter),
                Float64(tol), String(method), returnall)
end

"""
    emd(a, b, M; iter=1000, tol=1e-9, returnall=false) -> PyObject

The earth mover's distance `sum(P .* M)` of the optimal plan `P` from weights `a` to `b` (each
summing to 1) under cost `M`, solved exactly by scipy's HiGHS linear program in the host
(`iter` and `tol` are accepted for ADCME's signature). Its gradient with respect to `M` is `P`.
`returnall=true` gives `(P, loss)`.
"""
emd(a::OTInput, b::OTInput, M::OTInput; iter::Integer = 1000, tol::Real = 1e-9,
    returnall::Bool = false) =
    sinkhorn(a, b, M; reg = 0.0, iter = iter, tol = tol, method = "lp", returnall = returnall)

"""
    ot_dist(x, y, order=2)

The n×m matrix of distances `M[i, j] = norm(x[i, :] - y[j, :], order)` between the rows of `x`
(n×d) and `y` (m×d); vectors are one column. A Julia matrix for Julia arrays, else a tensor
(with gradients; at a zero distance the gradient is not defined, as in ADCME).
"""
function ot_dist(x::AbstractArray{<:Real}, y::AbstractArray{<:Real}, order::Real = 2)
    x, y = reshape(x, size(x, 1), :), reshape(y, size(y, 1), :)
    size(x, 2) == size(y, 2) || wrong_argument("ot_dist", "y", y,
        "as many columns as x ($(size(x, 2)))", "one row per sample, one column per dimension")
    return [LinearAlgebra.norm(x[i, :] - y[j, :], order) for i in 1:size(x, 1), j in 1:size(y, 1)]
end
ot_dist(x::OTInput, y::OTInput, order::Union{Real,PyObject} = 2) = bridge_rule(OT, "ot_dist", x, y, order)

"""
    empirical_sinkhorn(x, y; reg=1.0, iter=1000, tol=1e-9, method="sinkhorn", dist=2,
                       returnall=false, normalized=false) -> PyObject

[`sinkhorn`](@ref) between the samples `x` (rows; a vector is one column) and `y`, each with
equal weights, under the cost `dist(x, y)`: an integer `dist` is [`ot_dist`](@ref) of that order,
a function takes the two sample tensors. `normalized=true` divides the cost by its maximum.
"""
function empirical_sinkhorn(x::OTInput, y::OTInput; reg::Union{PyObject,Real} = 1.0,
                            iter::Integer = 1000, tol::Real = 1e-9,
                            method::AbstractString = "sinkhorn", dist::Union{Integer,Function} = 2,
                            returnall::Bool = false, normalized::Bool = false)
    x, y, a, b = bridge_rule(OT, "empirical_weights", x, y)
    M = dist isa Integer ? ot_dist(x, y, dist) : dist(x, y)
    normalized && (M = M / maximum(M))
    sinkhorn(a, b, M; reg = reg, iter = iter, tol = tol, method = method, returnall = returnall)
end

"""
    empirical_emd(x, y; iter=1000, tol=1e-9, dist=2, returnall=false, normalized=false) -> PyObject

[`empirical_sinkhorn`](@ref) with the earth mover's distance ([`emd`](@ref)): the exact optimal
transport between the samples `x` and `y`.
"""
empirical_emd(x::OTInput, y::OTInput; iter::Integer = 1000, tol::Real = 1e-9,
              dist::Union{Integer,Function} = 2, returnall::Bool = false, normalized::Bool = false) =
    empirical_sinkhorn(x, y; iter = iter, tol = tol, method = "lp", dist = dist,
                       returnall = returnall, normalized = normalized)

"""
    ot_plot1D(a, b, M)

Draw a transport plan `M` between 1-D weights `a` (source, left) and `b` (target, top) on
pyplot's figure 4, as ADCME does; `savefig` (PyPlot's, or `pyplot.savefig`) saves it. Returns
the figure.
"""
function ot_plot1D(a::AbstractVector{<:Real}, b::AbstractVector{<:Real}, M::AbstractMatrix{<:Real})
    size(M) == (length(a), length(b)) || wrong_argument("ot_plot1D", "M", M,
        "a $(length(a))×$(length(b)) matrix", "the plan from a to b, e.g. run(sess, P)")
    bridge_rule(OT, "ot_plot1d", Float64.(a), Float64.(b), Float64.(M))
end

"""
    dtw(s, t, use_fast=false) -> (cost, path)

The dynamic time warping distance between the series `s` and `t` (the least sum of
`abs(s[i] - t[j])` along a monotone path from `(1, 1)` to `(length(s), length(t))`) and that
path, an int64 tensor with a row `[i j]` per step (from 1). The path is found exactly by dynamic
programming in the host (ADCME's downloaded FastDTW plugin approximated it with
`use_fast=true`; here both are exact); `cost`'s gradient with respect to `s` and `t` is that of
the sum along the path.
"""
dtw(s::OTInput, t::OTInput, use_fast::Bool = false) = bridge_rule(OT, "dtw", s, t)
