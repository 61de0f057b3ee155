# ADCME's src/pcl.jl, second order physics constrained learning: Hessians propagated backwards
# through an operator (`pcl_hessian` in the graph; `pcl_square_sum`, `pcl_linear_op`,
# `pcl_sparse_solve`, `pcl_compress` in Julia), and the finite-difference checks of Jacobians
# and Hessians that go with them (`test_jacobian`, `test_hessian`, from ADCME's src/kit.jl).

"""
    test_jacobian(f, x0; scale=1.0, showfig=true) -> (err1, err2)

Check a Jacobian by finite differences: `y, J = f(x)` gives a vector and its Jacobian. Along a
random direction `v` and steps `γ = scale/10, ..., scale/10⁵`, `err1[k] = ‖f(x0 + γv) - f(x0)‖`
(falls as γ) and `err2[k] = ‖f(x0 + γv) - f(x0) - γJv‖` (falls as γ² when `J` is right).
`showfig` draws both against γ (log-log) into `test.png`.
"""
function test_jacobian(f::Function, x0::AbstractVector{Float64}; scale::Float64 = 1.0,
                       showfig::Bool = true)
    v = rand(length(x0))
    γs = scale ./ 10 .^ (1:5)
    y0, J = f(x0)
    y = [f(x0 + γ * v)[1] for γ in γs]
    err1 = [norm(y[k] - y0) for k in 1:5]
    err2 = [norm(y[k] - y0 - γs[k] * J * v) for k in 1:5]
    showfig && draw_convergence(γs, err1, err2, "test.png")
    return err1, err2
end

"""
    test_hessian(f, x0; scale=1.0, showfig=true) -> (err1, err2)

Check a Hessian by finite differences: `g, H = f(x)` gives a gradient and its Hessian (the
gradient's Jacobian); see `test_jacobian`.
"""
test_hessian(f::Function, x0::AbstractVector{Float64}; kwargs...) = test_jacobian(f, x0; kwargs...)

"The finite-difference errors against the step (log-log, steps falling) in `file`, as ADCME."
function draw_convergence(γs, err1, err2, file)
    pyimport("matplotlib").use("Agg")
    plt = pyimport("matplotlib.pyplot")
    plt.close("all")
    plt.loglog(γs, err1; label = "Finite Difference")
    plt.loglog(γs, err2; label = "Automatic Differentiation")
    plt.loglog(γs, γs * 0.5 * err1[1] / γs[1], "--"; label = raw"$\mathcal{O}(\gamma)$")
    plt.loglog(γs, γs .^ 2 * 0.5 * err2[1] / γs[1]^2, "--"; label = raw"$\mathcal{O}(\gamma^2)$")
    plt.gca().invert_xaxis()
    plt.legend()
    plt.savefig(abspath(file))  # the host's working folder may not be Julia's
    @info "Results saved to $file"
    println("Finite difference: ", err1)
    println("Automatic differentiation: ", err2)
end

"""
    pcl_square_sum(n; scaling=1.0) -> Matrix{Float64}

The Hessian `2 scaling I` (n×n) of `scaling ‖u - u₀‖²`: where the backward propagation of a
least squares loss starts.
"""
pcl_square_sum(n::Integer; scaling::Real = 1.0) = Matrix{Float64}(2 * scaling * I, n, n)

"""
    pcl_linear_op(J, W) -> Matrix{Float64}

The Hessian `J W Jᵀ` in `x` of a linear operator `y = Jᵀx + b`, `W` the Hessian in `y`.
"""
pcl_linear_op(J::AbstractMatrix{<:Real}, W::AbstractMatrix{<:Real}) = J * W * J'

"""
    pcl_hessian(y, x, loss) -> (H, W)

For `y = F(x)` (vectors) inside a graph that ends in `loss`: the Hessian `H` of the loss in
`x`, `Jᵀ W J + ∇²(dyᵀ y)` (`J` the Jacobian of `y`, `dy` the loss's gradient in `y`, fixed), a
tensor of the placeholder `W`, the Hessian in `y` from further down (feed it, e.g.
`W => pcl_square_sum(length(y))`).
"""
function pcl_hessian(y::PyObject, x::PyObject, loss::PyObject)
    length(size(x)) == length(size(y)) == 1 || throw(ArgumentError(string("pcl_hessian: x and ",
        "y must be vectors, got sizes ", size(x), " and ", size(y), ". Hint: reshape(y, (-1,))")))
    J = jacobian(y, x)
    J === nothing && throw(ArgumentError("pcl_hessian: y does not depend on x (jacobian(y, x) is nothing)"))
    W = placeholder(Float64; shape = (length(y), length(y)))
    dy = independent(gradients(loss, y))
    return J' * W * J + hessian(dot(dy, y), x), W
end

"""
    pcl_sparse_solve(indices, vals, u, hessian_u, grad_u) -> Matrix{Float64}

For `A u = f` with `A` sparse (entry k at row `indices[k, 1]`, column `indices[k, 2]`, value
`vals[k]`), the Hessian of the loss in `vals` from its Hessian `hessian_u` and gradient `grad_u`
in `u`: `J hessian_u Jᵀ` plus the second derivatives of the solve itself, with
`J[k, :] = ∂u/∂vals[k] = -A⁻¹ e_{indices[k,1]} u[indices[k,2]]`.
"""
function pcl_sparse_solve(indices::AbstractMatrix{<:Integer}, vals::AbstractVector{<:Real},
                          u::AbstractVector{<:Real}, hessian_u::AbstractMatrix{<:Real},
                          grad_u::AbstractVector{<:Real})
    rows, cols = indices[:, 1], indices[:, 2]
    A = sparse(rows, cols, vals, length(u), length(u))
    J = -inv(Matrix(A))[:, rows]' .* u[cols]
    x = A' \ grad_u  # the adjoint: the loss's gradient in vals is -x[rows] .* u[cols]
    M = x[rows] .* J[:, cols]'  # M[l, r] = x[rows[l]] J[r, cols[l]]
    return J * hessian_u * J' - (M + M')
end

"""
    pcl_compress(indices) -> Matrix{Float64}

The Jacobian `J[i, j] = ∂u_j/∂v_i` of `compress` (entries at one place added together,
row-major order), from the values `v` at `indices` (one row `[row col]` per entry) to the
compressed values `u`: 1 where entry i goes into compressed entry j.
"""
function pcl_compress(indices::AbstractMatrix{<:Integer})
    places = [(indices[k, 1], indices[k, 2]) for k in 1:size(indices, 1)]
    kept = sort(unique(places))
    position = Dict(p => j for (j, p) in enumerate(kept))
    J = zeros(length(places), length(kept))
    for (i, p) in enumerate(places)
        J[i, position[p]] = 1.0
    end
    return J
end
