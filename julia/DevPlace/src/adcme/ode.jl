# ADCME's src/ode.jl: time integrators built into the graph as `while_loop`s over TensorArrays,
# so gradients flow through every step: Runge-Kutta (`rk4`, `ode45`), the generalized α scheme
# (`αscheme`, `αscheme_time`), TR-BDF2 for D₁ẏ + D₀y = f (`TR_BDF2`) and Newmark's schemes for
# M d̈ + C ḋ + K d (+ f) = 0 (`ExplicitNewmark`, `Newmark`, one `step` each).

"One classical Runge-Kutta (order 4) step of dy/dt = f(t, y, θ) from (t, y) by Δt."
function runge_kutta_one_step(f::Function, t, y, Δt, θ)
    k1 = Δt * f(t, y, θ)
    k2 = Δt * f(t + Δt / 2, y + k1 / 2, θ)
    k3 = Δt * f(t + Δt / 2, y + k2 / 2, θ)
    k4 = Δt * f(t + Δt, y + k3, θ)
    return y + k1 / 6 + k2 / 3 + k3 / 3 + k4 / 6
end

"One Dormand-Prince (order 5, its 7 stages) step of dy/dt = f(t, y, θ) from (t, y) by h."
function ode45_one_step(f::Function, t, y, h, θ)
    k1 = h * f(t, y, θ)
    k2 = h * f(t + h / 5, y + k1 / 5, θ)
    k3 = h * f(t + 3h / 10, y + (3 / 40) * k1 + (9 / 40) * k2, θ)
    k4 = h * f(t + 4h / 5, y + (44 / 45) * k1 - (56 / 15) * k2 + (32 / 9) * k3, θ)
    k5 = h * f(t + 8h / 9, y + (19372 / 6561) * k1 - (25360 / 2187) * k2 + (64448 / 6561) * k3 -
                          (212 / 729) * k4, θ)
    k6 = h * f(t + h, y + (9017 / 3168) * k1 - (355 / 33) * k2 + (46732 / 5247) * k3 +
                      (49 / 176) * k4 - (5103 / 18656) * k5, θ)
    return y + (35 / 384) * k1 + (500 / 1113) * k3 + (125 / 192) * k4 - (2187 / 6784) * k5 +
           (11 / 84) * k6
end

const RUNGE_KUTTA_STEPS = Dict("rk4" => runge_kutta_one_step, "rk45" => ode45_one_step)

"""
    runge_kutta(f, T, NT, y, θ=missing; method="rk4") -> PyObject

Solve dy/dt = f(t, y, θ) from `y` at t = 0 to t = `T` in `NT` equal steps with `method`
(`"rk4"` or `"rk45"`); `f(t, y, θ)` gives a tensor of `y`'s shape. The result stacks the
`NT + 1` states along a new first dimension (`out[end, :]` is y(T) for a vector `y`).
"""
function runge_kutta(f::Function, T::Union{PyObject,Real}, NT::Union{PyObject,Integer},
                     y::Union{PyObject,Real,AbstractArray{<:Real}}, θ = missing;
                     method::String = "rk4")
    one_step = get(RUNGE_KUTTA_STEPS, lowercase(method)) do
        wrong_argument("runge_kutta", "method", method, "\"rk4\" or \"rk45\"", "rk4(f, 1.0, 100, y0)")
    end
    y = convert_to_tensor(y)
    Δt = convert_to_tensor(T / NT)
    condition(i, ta) = i <= NT + 1
    function body(i, ta)
        t = (cast(get_dtype(Δt), i) - 2) * Δt  # state i - 1 is at (i - 2)Δt
        return i + 1, write(ta, i, one_step(f, t, read(ta, i - 1), Δt, θ))
    end
    _, ta = while_loop(condition, body, [constant(2; dtype = Int32), write(TensorArray(NT + 1), 1, y)])
    return stack(ta)
end

"""
    rk4(f, T, NT, y, θ=missing) -> PyObject

Solve dy/dt = f(t, y, θ), y(0) = `y`, up to t = `T` in `NT` steps of the classical Runge-Kutta
method (order 4); the `NT + 1` states stacked along the first dimension. See `runge_kutta`.
"""
rk4(args...; kwargs...) = runge_kutta(args...; method = "rk4", kwargs...)

"""
    ode45(f, T, NT, y, θ=missing) -> PyObject

As `rk4`, with the Dormand-Prince Runge-Kutta method (order 5) at a fixed step.
"""
ode45(args...; kwargs...) = runge_kutta(args...; method = "rk45", kwargs...)

"The generalized α scheme's (αm, αf, γ, β) for the spectral radius ρ∞ = `ρ`."
function α_parameters(ρ::Real)
    αm, αf = (2ρ - 1) / (ρ + 1), ρ / (1 + ρ)
    return αm, αf, 1 / 2 - αm + αf, (1 - αm + αf)^2 / 4
end

# The loops below that solve sparse systems run one iteration at a time: their matrices do not
# depend on the state, so TensorFlow would factorize those of later iterations ahead, more at
# once than the host keeps factors of one op (adcme_sparse.py's KEPT_PER_OP).

const SparseOrTensor = Union{SparseTensor,SparseMatrixCSC{<:Real},PyObject}

"""
    αscheme(M, C, K, Force, d0, v0, a0, Δt; solve=missing, extsolve=missing, ρ=1.0) -> (d, v, a)

The generalized α scheme for M d̈ + C ḋ + K d = F: from `d0`, `v0`, `a0` (vectors of length p),
time steps `Δt` (a vector of n, variable steps allowed) and `Force` (n × p: row i the force at
`t_{i+1-αf}`, see `αscheme_time`), the displacements, velocities and accelerations at the n + 1
times, each (n + 1) × p. `ρ` ∈ [0, 1] is the spectral radius at infinite frequency (1: no
numerical damping; then the scheme is the trapezoidal rule). `solve(A, rhs)` or
`extsolve(A, rhs, i)` replaces `A \\ rhs` (e.g. for boundary conditions at step i).
"""
function αscheme(M::SparseOrTensor, C::SparseOrTensor, K::SparseOrTensor,
                 Force::Union{AbstractMatrix{<:Real},PyObject},
                 d0::Union{AbstractVector{<:Real},PyObject}, v0::Union{AbstractVector{<:Real},PyObject},
                 a0::Union{AbstractVector{<:Real},PyObject}, Δt::AbstractVector{<:Real};
                 solve::Union{Missing,Function} = missing,
                 extsolve::Union{Missing,Function} = missing, ρ::Real = 1.0)
    solve === missing || extsolve === missing || throw(ArgumentError(
        "αscheme: give `solve` or `extsolve`, not both. Hint: extsolve(A, rhs, i) sees the step i"))
    0 <= ρ <= 1 || wrong_argument("αscheme", "ρ", ρ, "a number in [0, 1]", "αscheme(...; ρ=0.5)")
    nt, p = length(Δt), length(d0)
    αm, αf, γ, β = α_parameters(ρ)
    M, C, K = constant(M), constant(C), constant(K)
    Force, d0, v0, a0, Δt = convert_to_tensor([Force, d0, v0, a0, Δt], fill(Float64, 5))
    # the acceleration a_{n+1} from the balance of forces at t_{n+1-αf}
    function acceleration(dc, vc, ac, dt, force, i)
        dn = dc + dt * vc + dt^2 / 2 * (1 - 2β) * ac
        vn = vc + dt * ((1 - γ) * ac)
        rhs = force - (M * (αm * ac) + C * ((1 - αf) * vn + αf * vc) + K * ((1 - αf) * dn + αf * dc))
        A = (1 - αm) * M + (1 - αf) * C * dt * γ + (1 - αf) * K * β * dt^2
        return solve !== missing ? solve(A, rhs) : extsolve !== missing ? extsolve(A, rhs, i) : A \ rhs
    end
    condition(i, tas...) = i <= nt
    function body(i, ta_d, ta_v, ta_a)
        dc, vc, ac, dt = read(ta_d, i), read(ta_v, i), read(ta_a, i), Δt[i]
        an = acceleration(dc, vc, ac, dt, Force[i], i)
        dn = dc + dt * vc + dt^2 / 2 * ((1 - 2β) * ac + 2β * an)
        vn = vc + dt * ((1 - γ) * ac + γ * an)
        return i + 1, write(ta_d, i + 1, dn), write(ta_v, i + 1, vn), write(ta_a, i + 1, an)
    end
    start(x) = write(TensorArray(nt + 1), 1, x)
    _, d, v, a = while_loop(condition, body, [constant(1; dtype = Int32), start(d0), start(v0), start(a0)];
                            parallel_iterations = 1)
    return Tuple(set_shape(stack(x), (nt + 1, p)) for x in (d, v, a))
end

"""
    αscheme_time(Δt::AbstractVector; ρ=1.0) -> Vector{Float64}

The times t_{i+1-αf} = (1 - αf) t_{i+1} + αf t_i at which `αscheme` balances forces, one per
step of `Δt` (from t = 0): where to evaluate `Force`'s rows.
"""
function αscheme_time(Δt::AbstractVector{<:Real}; ρ::Real = 1.0)
    αf = α_parameters(ρ)[2]
    t = [0.0; cumsum(Δt)]
    return [(1 - αf) * t[i+1] + αf * t[i] for i in 1:length(Δt)]
end

"""
    TR_BDF2(D0, D1, Δt::Float64)

A TR-BDF2 integrator (a trapezoidal half step, then the second order backward difference
formula) for the DAE D₁ẏ + D₀y = f with step `Δt`. `D0`, `D1` are Julia sparse matrices (the
integrator then computes in Julia) or `SparseTensor`s (it builds graph ops; `constant(td)`
turns the former into the latter: `td.symbolic`). `td(y, f1, f2, f3)` is one step from `y`, the
right-hand sides at `t_n`, `t_{n+1/2}`, `t_{n+1}`; `td(y0, F)` all steps, `F` of (2NT + 1) × DOF
rows (`t_0`, `t_{1/2}`, `t_1`, ...), the (NT + 1) × DOF states.
"""
mutable struct TR_BDF2
    D0::Union{SparseTensor,SparseMatrixCSC}
    D1::Union{SparseTensor,SparseMatrixCSC}
    Δt::Float64
    _D0::Union{SparseTensor,SparseMatrixCSC}  # the half step's matrix D₁ + Δt/4 D₀
    _D1::Union{SparseTensor,SparseMatrixCSC}  # the BDF2 step's matrix 3/Δt D₁ + D₀
    symbolic::Bool
    function TR_BDF2(D0::Union{SparseTensor,SparseMatrixCSC}, D1::Union{SparseTensor,SparseMatrixCSC},
                     Δt::Float64)
        symbolic = D0 isa SparseTensor || D1 isa SparseTensor
        symbolic && ((D0, D1) = (constant(D0), constant(D1)))
        size(D0, 1) == size(D0, 2) == size(D1, 1) == size(D1, 2) || throw(DimensionMismatch(
            string("TR_BDF2: D0 and D1 must be square of one size, got ", size(D0), " and ", size(D1))))
        return new(D0, D1, Δt, D1 + Δt / 4 * D0, 3 / Δt * D1 + D0, symbolic)
    end
end

"""
    constant(td::TR_BDF2) -> TR_BDF2

The integrator with its matrices as `SparseTensor`s: it builds graph ops.
"""
constant(td::TR_BDF2) = TR_BDF2(constant(td.D0), constant(td.D1), td.Δt)

Base.show(io::IO, td::TR_BDF2) =
    print(io, "TR_BDF2 (DOF = ", size(td.D0, 1), ", Δt = ", td.Δt, td.symbolic ? ", symbolic)" : ")")

const VectorLike = Union{PyObject,AbstractVector{<:Real}}

"One TR-BDF2 step (`y`, `f1..f3` tensors or Julia vectors alike)."
function tr_bdf2_step(td::TR_BDF2, y, f1, f2, f3)
    y_half = td._D0 \ (td.Δt / 4 * (f2 + f1) - td.Δt / 4 * (td.D0 * y) + td.D1 * y)
    return td._D1 \ (f3 + 2 / td.Δt * (td.D1 * (2 * y_half - 0.5 * y)))
end

function (td::TR_BDF2)(y::VectorLike, f1::VectorLike, f2::VectorLike, f3::VectorLike)
    if td.symbolic || any(x -> x isa PyObject, (y, f1, f2, f3))
        td.symbolic || (td = constant(td))
        return tr_bdf2_step(td, convert_to_tensor([y, f1, f2, f3], fill(Float64, 4))...)
    end
    return tr_bdf2_step(td, y, f1, f2, f3)
end

function (td::TR_BDF2)(y0::VectorLike, F::Union{PyObject,AbstractMatrix{<:Real}})
    dof = size(td.D0, 1)
    size(F, 2) == dof && isodd(size(F, 1)) || throw(DimensionMismatch(string("TR_BDF2: F must ",
        "have 2NT + 1 rows (t_0, t_1/2, t_1, ...) and ", dof, " columns, got ", size(F))))
    nt = size(F, 1) ÷ 2
    if !td.symbolic && !(y0 isa PyObject) && !(F isa PyObject)
        y = zeros(nt + 1, dof)
        y[1, :] = y0
        for i in 1:nt
            y[i+1, :] = td(y[i, :], F[2i-1, :], F[2i, :], F[2i+1, :])
        end
        return y
    end
    td.symbolic || (td = constant(td))
    y0, F = convert_to_tensor([y0, F], [Float64, Float64])
    condition(i, ta) = i <= nt
    body(i, ta) = (i + 1, write(ta, i + 1, td(read(ta, i), F[2i-1], F[2i], F[2i+1])))
    _, ta = while_loop(condition, body, [constant(1; dtype = Int32), write(TensorArray(nt + 1), 1, y0)];
                       parallel_iterations = 1)
    return set_shape(stack(ta), (nt + 1, dof))
end

const MatrixLike = Union{SparseTensor,PyObject,AbstractMatrix{<:Real}}

"""
    ExplicitNewmark(M, Z1, Z2, Δt::Float64; factorize_A=true)

The explicit (central difference) Newmark integrator for M d̈ + Z₁ḋ + Z₂d + f = 0 (`Z1`, `Z2`
may be `missing`): `step(en, d0, d1, f)` gives d^{n+1} from d^{n-1} = `d0`, d^n = `d1`:
(M/Δt² + Z₁/(2Δt)) d^{n+1} = (2M/Δt² - Z₂) d^n - (M/Δt² - Z₁/(2Δt)) d^{n-1} - f.
A sparse left-hand side is factorized once (`factorize_A`).
"""
mutable struct ExplicitNewmark
    A::Union{PyObject,SparseTensor,Tuple{SparseTensor,PyObject}}
    B::Union{PyObject,SparseTensor}
    C::Union{PyObject,SparseTensor}
    function ExplicitNewmark(M::Union{MatrixLike,SparseMatrixCSC}, Z1::Union{Missing,MatrixLike,SparseMatrixCSC},
                             Z2::Union{Missing,MatrixLike,SparseMatrixCSC}, Δt::Float64;
                             factorize_A::Bool = true)
        M = constant(M)
        A, B, C = M / Δt^2, 2 / Δt^2 * M, -M / Δt^2
        Z1 === missing || ((A, C) = (A + constant(Z1) / (2Δt), C + constant(Z1) / (2Δt)))
        Z2 === missing || (B = B - constant(Z2))
        return new(A isa SparseTensor && factorize_A ? factorize(A) : A, B, C)
    end
end

Base.show(io::IO, en::ExplicitNewmark) = print(io, "ExplicitNewmark(DOF=", size(en.B, 1), ")")

"""
    step(en::ExplicitNewmark, d0, d1, f) -> PyObject

d^{n+1} from d^{n-1} = `d0`, d^n = `d1` and the load `f`; see `ExplicitNewmark`.
"""
function Base.step(en::ExplicitNewmark, d0::VectorLike, d1::VectorLike, f::VectorLike)
    d0, d1, f = convert_to_tensor([d0, d1, f], fill(Float64, 3))
    return en.A \ (en.B * d1 + en.C * d0 - f)
end

"""
    Newmark(M, C, K, Δt::Float64; β=1/4, γ=1/2, factorize_S=true)

Newmark's β-γ integrator ("a-form") for M d̈ + C ḋ + K d + F = 0: `step(nm, d, v, a, F)` gives
d, v, a one step `Δt` later. β = 1/4, γ = 1/2 (the average acceleration rule) is second order
and unconditionally stable (2β ≥ γ ≥ 1/2); `ExplicitNewmark` is β = 0, γ = 1/2. The matrix
S = M + γΔt C + βΔt² K is factorized once (`factorize_S`).
"""
mutable struct Newmark
    M::SparseTensor
    C::SparseTensor
    K::SparseTensor
    S::Union{Tuple{SparseTensor,PyObject},SparseTensor}
    β::Float64
    γ::Float64
    Δt::Float64
    function Newmark(M::Union{MatrixLike,SparseMatrixCSC}, C::Union{MatrixLike,SparseMatrixCSC},
                     K::Union{MatrixLike,SparseMatrixCSC}, Δt::Float64; β::Float64 = 1 / 4,
                     γ::Float64 = 1 / 2, factorize_S::Bool = true)
        M, C, K = sparse_tensor(M), sparse_tensor(C), sparse_tensor(K)
        S = M + γ * Δt * C + β * Δt^2 * K
        return new(M, C, K, factorize_S ? factorize(S) : S, β, γ, Δt)
    end
end

"A matrix of any kind as a SparseTensor."
sparse_tensor(A::Union{SparseTensor,SparseMatrixCSC,AbstractMatrix{<:Real}}) = SparseTensor(A)
sparse_tensor(A::PyObject) = dense_to_sparse(A)

Base.show(io::IO, nm::Newmark) =
    print(io, "Newmark(DOF=", size(nm.M, 1), ", γ=", nm.γ, ", β=", nm.β, ")")

"""
    step(nm::Newmark, d, v, a, F) -> (d, v, a)

One step of `nm` from displacement `d`, velocity `v`, acceleration `a` under the load `F`.
"""
function Base.step(nm::Newmark, d::PyObject, v::PyObject, a::PyObject, F::VectorLike)
    β, γ, Δt = nm.β, nm.γ, nm.Δt
    d_pred = d + Δt * v + Δt^2 / 2 * (1 - 2β) * a
    v_pred = v + (1 - γ) * Δt * a
    a_new = nm.S \ (-F - nm.C * v_pred - nm.K * d_pred)
    return d_pred + β * Δt^2 * a_new, v_pred + γ * Δt * a_new, a_new
end
