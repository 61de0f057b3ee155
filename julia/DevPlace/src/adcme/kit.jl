# ADCME's src/kit.jl (and ADCMEKit.jl's views): the loss landscape along a line or on a plane
# (`lineview`, `meshview`, `pcolormeshview`), gradient tests that compare finite differences with
# the linearization by automatic differentiation (`gradview`, `jacview`, `PCLview`), and
# matplotlib animations (`animate`, `saveanim`). Julia computes the numbers; the host draws them
# with matplotlib's pyplot (python/devplace/bridge/adcme/kit.py), on the current figure as
# ADCME draws with PyPlot, so PyPlot's `savefig` (or `pyplot.savefig`) saves the view. Files are
# named relative to Julia's working folder (the host's may differ).

using LinearAlgebra: norm

kit_rule(name::String, args...; kwargs...) = bridge_rule("adcme.kit", name, args...; kwargs...)

"The step sizes of ADCME's gradient tests: `scale` times 10⁻¹ … 10⁻⁵."
gradient_steps(scale) = scale ./ 10 .^ (1:5)

"""
    linedata(θ1, θ2=nothing; n=10) -> Vector

`n` points evenly spaced on the segment from `θ1` to `θ2` (a random point near `θ1`,
`θ1 .* (1 .+ randn(...))`, if `nothing`), the ends included.
"""
function linedata(θ1, θ2 = nothing; n::Integer = 10)
    θ2 === nothing && (θ2 = θ1 .* (1 .+ randn(size(θ1)...)))
    return [θ1 * (1 - x) + θ2 * x for x in LinRange(0.0, 1.0, n)]
end

"""
    lineview(losses::Array{Float64})
    lineview(sess, pl, loss, θ1, θ2=nothing; n=10) -> Vector{Float64}

Plot the loss along a line, `h(α) = loss((1-α)θ₁ + αθ₂)` for `n` values of α from 0 to 1 (the
placeholder `pl` fed each point of `linedata(θ1, θ2; n)`), and return those losses. The first
form plots losses already computed.
"""
lineview(losses::Array{Float64}) = (kit_rule("line_view", losses); losses)

function lineview(sess::PyObject, pl::PyObject, loss::PyObject, θ1, θ2 = nothing; n::Integer = 10)
    return lineview([Float64(run(sess, loss, pl => θ)) for θ in linedata(θ1, θ2; n = n)])
end

"""
    meshdata(θ; a=1, b=1, m=10, n=10, direction=missing) -> Matrix

The `m×n` points `θ + αδ + βγ` for α in `LinRange(-a, a, m)` and β in `LinRange(-b, b, n)`, with
random directions δ and γ; with `direction`, δ points from θ to it and γ is random with δ's norm.
"""
function meshdata(θ; a::Real = 1, b::Real = 1, m::Integer = 10, n::Integer = 10,
                  direction::Union{Array{<:Real},Missing} = missing)
    if direction === missing
        δ, γ = randn(size(θ)...), randn(size(θ)...)
    else
        δ = direction - θ
        γ = randn(size(θ)...)
        γ = γ / norm(γ) * norm(δ)
    end
    return [θ + δ * α + γ * β for α in LinRange(-a, a, m), β in LinRange(-b, b, n)]
end

"The grid of (α, β) of a mesh of losses, α down the rows and β along the columns."
function mesh_grid(losses, a, b)
    m, n = size(losses)
    return [α for α in LinRange(-a, a, m), _ in 1:n], [β for _ in 1:m, β in LinRange(-b, b, n)]
end

"The losses at the points of `meshdata(θ; ...)` (the placeholder `pl` fed each)."
function mesh_losses(sess, pl, loss, θ; kwargs...)
    return [Float64(run(sess, loss, pl => p)) for p in meshdata(θ; kwargs...)]
end

"""
    meshview(losses::Array{Float64}, a=1, b=1) -> (α, β, losses)
    meshview(sess, pl, loss, θ; a=1, b=1, m=9, n=9, direction=missing) -> (α, β, losses)

Plot the loss on a plane through θ as a 3D wireframe over (α, β) (the center, θ itself, in red):
the losses at `meshdata(θ; a, b, m, n, direction)`, the placeholder `pl` fed each point. Returns
the grid and the losses.
"""
function meshview(losses::Array{Float64}, a::Real = 1, b::Real = 1)
    α, β = mesh_grid(losses, a, b)
    kit_rule("mesh_view", α, β, losses)
    return α, β, losses
end

meshview(sess::PyObject, pl::PyObject, loss::PyObject, θ; a::Real = 1, b::Real = 1, m::Integer = 9,
         n::Integer = 9, direction::Union{Array{<:Real},Missing} = missing) =
    meshview(mesh_losses(sess, pl, loss, θ; a = a, b = b, m = m, n = n, direction = direction), a, b)

"""
    pcolormeshview(losses::Array{Float64}, a=1, b=1) -> (α, β, losses)
    pcolormeshview(sess, pl, loss, θ; a=1, b=1, m=9, n=9, direction=missing) -> (α, β, losses)

As `meshview`, drawn as a color map with a color bar (the center a star).
"""
function pcolormeshview(losses::Array{Float64}, a::Real = 1, b::Real = 1)
    α, β = mesh_grid(losses, a, b)
    kit_rule("pcolormesh_view", α, β, losses)
    return α, β, losses
end

pcolormeshview(sess::PyObject, pl::PyObject, loss::PyObject, θ; a::Real = 1, b::Real = 1,
               m::Integer = 9, n::Integer = 9, direction::Union{Array{<:Real},Missing} = missing) =
    pcolormeshview(mesh_losses(sess, pl, loss, θ; a = a, b = b, m = m, n = n, direction = direction), a, b)

"""
    gradview(sess, pl, loss, u0; scale=1.0, mpi=false) -> (v1, v2)
    gradview(sess, pl, loss, u0, grad; scale=1.0, mpi=false) -> (v1, v2)

Check the gradient `grad` of `loss` with respect to the placeholder `pl` (TensorFlow's, if not
given) at `u0`: for a random direction v and γ = `scale`·10⁻¹…10⁻⁵, `v1` holds the errors
`|L(u0+γv) - L(u0)|` of the finite-difference prediction (they fall as γ) and `v2` those of the
linearization `|L(u0+γv) - L(u0) - γ⟨grad, v⟩|` (as γ² when the gradient is right). Plots both on
log axes (and, with `mpi`, saves the plot to mpi_gradview.png as ADCME does).
"""
function gradview(sess::PyObject, pl::PyObject, loss::PyObject, u0, grad::PyObject;
                  scale::Float64 = 1.0, mpi::Bool = false)
    v = u0 isa Number ? rand() : rand(size(u0)...)
    γs = gradient_steps(scale)
    L0, J0 = run(sess, [loss, grad], pl => u0)
    Ls = [run(sess, loss, pl => u0 + v * γ) for γ in γs]
    slope = size(J0) == size(v) ? sum(J0 .* v) : J0 * v
    v1 = [norm(L - L0) for L in Ls]
    v2 = [norm(L - L0 - γ * slope) for (L, γ) in zip(Ls, γs)]
    kit_rule("convergence_view", γs, v1, v2, mpi ? abspath("mpi_gradview.png") : nothing)
    return v1, v2
end

function gradview(sess::PyObject, pl::PyObject, loss::PyObject, u0; scale::Float64 = 1.0, mpi::Bool = false)
    grad = tfcall("convert_to_tensor", gradients(loss, pl))
    return gradview(sess, pl, loss, u0, grad; scale = scale, mpi = mpi)
end

"""
    jacview(sess, f, θ, u0, args...) -> (v1, v2)

Check a Jacobian: `f(θ, u) -> (r, J)` gives the residual vector `r` and its Jacobian `J` (a matrix
or a `SparseTensor`) with respect to `u` (`θ`, a nuisance parameter, is passed as given). At
`u0`, with `args` fed to every run, the errors of the finite-difference and linearized
predictions of `r(u0 + γv)` as in `gradview` (norms), plotted.
"""
function jacview(sess::PyObject, f::Function, θ::Union{Array{Float64},PyObject,Missing},
                 u0::Array{Float64}, args...)
    u = placeholder(Float64; shape = [length(u0)])
    r, J = f(θ, u)
    init(sess)
    r0, J0 = run(sess, r, u => u0, args...), run(sess, J, u => u0, args...)
    v = rand(length(u0))
    γs = gradient_steps(1.0)
    rs = [run(sess, r, u => u0 + v * γ, args...) for γ in γs]
    v1 = [norm(r1 - r0) for r1 in rs]
    v2 = [norm(r1 - r0 - γ * J0 * v) for (r1, γ) in zip(rs, γs)]
    kit_rule("convergence_view", γs, v1, v2)
    return v1, v2
end

"""
    PCLview(sess, f, L, θ, u0, args...; options=missing) -> (v1, v2)

Check the gradient of a physics constrained learning problem (`NonlinearConstrainedProblem(f,
L, θ, u0; options)`: the loss `L(u)` of the solution `u` of `f(θ, u) = 0`) with respect to θ at
`θ` (a vector, number, or a tensor evaluated first), as `gradview` does, and plot it.
"""
function PCLview(sess::PyObject, f::Function, L::Function, θ::Union{PyObject,Array{Float64,1},Float64},
                 u0::Union{PyObject,Array{Float64}}, args...; options::Union{Dict{String,<:Real},Missing} = missing)
    θ isa PyObject && (θ = run(sess, θ, args...))
    x = placeholder(Float64; shape = [length(θ)])
    newton_options = options === missing ? () : (options = options,)
    l, _, g = NonlinearConstrainedProblem(f, L, x, u0; newton_options...)
    init(sess)
    l0, g0 = run(sess, l, x => θ, args...), run(sess, g, x => θ, args...)
    v = rand(length(θ))
    γs = gradient_steps(1.0)
    ls = [run(sess, l, x => θ + v * γ, args...) for γ in γs]
    v1 = [l1 - l0 for l1 in ls]
    v2 = [l1 - l0 - γ * sum(g0 .* v) for (l1, γ) in zip(ls, γs)]
    kit_rule("convergence_view", γs, v1, v2)
    return v1, v2
end

"""
    animate(update::Function, frames; kwargs...) -> PyObject

A matplotlib animation of the current figure (`FuncAnimation`): `update(frame)` is called for
each of `frames` (a number of frames, or the frames themselves) to change the figure. Save it
with `saveanim`.
"""
function animate(update::Function, frames; kwargs...)
    frames isa Integer || (frames = collect(frames))
    animation = pyimport("matplotlib.animation")
    return animation.FuncAnimation(kit_rule("pyplot").gcf(), update; frames = frames, kwargs...)
end

"""
    saveanim(anim::PyObject, filename::String; kwargs...)

Save an animation made by `animate` (a .gif, for one) with ImageMagick, as ADCME does, or
with Pillow where ImageMagick is not installed.
"""
saveanim(anim::PyObject, filename::String; kwargs...) =
    kit_rule("save_animation", anim, abspath(filename); kwargs...)
