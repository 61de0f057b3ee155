# ADCME's src/rbf.jl: radial basis functions on 2D and 3D domains (`RBF2D`, `RBF3D`) and linear
# interpolation in 1D (`interp1`). ADCME computes them with compiled operators; here they are
# TensorFlow ops, with TensorFlow's gradients.

# ADCME's `kind` numbers: φ(r; ε) for each.
const RBF_KINDS = ("0 (Gaussian)", "1 (multiquadric)", "2 (inverse quadratic)",
                   "3 (inverse multiquadric)")

function rbf_phi(r2, kind)
    kind == 0 && return exp(-r2)
    kind == 1 && return sqrt(1 + r2)
    kind == 2 && return 1 / (1 + r2)
    return 1 / sqrt(1 + r2)
end

"""
Check a radial basis function's settings as ADCME does; its coefficients (a new variable of
zeros if `missing`) and shape parameters (ones if `missing`; a number for all centers) as tensors.
"""
function rbf_parameters(fname, ncenters, c, eps, d, kind, nd)
    0 <= kind <= 3 || wrong_argument(fname, "kind", kind, string("one of ", join(RBF_KINDS, ", ")),
                                     string(fname, "(...; kind=0)"))
    length(d) in (0, 1, nd) || wrong_argument(fname, "d", d, "of length 0, 1 or $nd",
        "d holds the constant term, then one coefficient per coordinate (or only the constant)")
    eps isa Real && (eps = eps * ones(ncenters))
    c = coalesce(c, Variable(zeros(ncenters)))
    eps = coalesce(eps, ones(ncenters))
    length(c) == ncenters == length(eps) || throw(DimensionMismatch(string(fname,
        ": there are ", ncenters, " centers but ", length(c), " coefficients c and ", length(eps),
        " shape parameters eps. Hint: give one c and one eps per center")))
    return constant(eps), constant(c), constant(d)
end

"""
The radial basis function with these centers at the points (one vector per coordinate):
`Σᵢ cᵢ φ(|p - centerᵢ|; εᵢ) + d₀ + d₁ p₁ + d₂ p₂ ...` (the linear terms only when `d` has them).
"""
function rbf_values(points, centers, eps, c, d, kind)
    points = [constant(p; dtype = Float64) for p in points]
    r2 = sum((reshape(p, (-1, 1)) - reshape(q, (1, -1)))^2 for (p, q) in zip(points, centers))
    out = rbf_phi(r2 .* reshape(eps, (1, -1))^2, kind) * c
    length(d) >= 1 && (out = out + d[1])
    if length(d) > 1
        out = out + sum(d[i+1] * p for (i, p) in enumerate(points))
    end
    return out
end

const RBF_DOC_TAIL = """
`kind` chooses φ: 0 Gaussian `exp(-(εr)²)`, 1 multiquadric `sqrt(1 + (εr)²)`, 2 inverse quadratic
`1/(1 + (εr)²)`, 3 inverse multiquadric `1/sqrt(1 + (εr)²)`. `c` defaults to a new variable of
zeros (so it can be trained), `eps` to ones (a number sets it for every center).
"""

"""
    RBF2D(xc, yc; c=missing, eps=missing, d=zeros(0), kind=0)

A radial basis function on a 2D domain with centers `(xc[i], yc[i])`, called as `rbf(x, y)`
(vectors of the points' coordinates) for the vector of

    f(x, y) = Σᵢ cᵢ φ(r; εᵢ) + d₀ + d₁x + d₂y

where `d` has 0, 1 (only d₀) or 3 entries.
$RBF_DOC_TAIL"""
mutable struct RBF2D
    xc::PyObject
    yc::PyObject
    eps::PyObject
    c::PyObject
    d::PyObject
    kind::Int64

    function RBF2D(xc::Union{PyObject,Array{Float64,1}}, yc::Union{PyObject,Array{Float64,1}};
                   c::Union{PyObject,Array{Float64,1},Missing} = missing,
                   eps::Union{PyObject,Array{Float64,1},Real,Missing} = missing,
                   d::Union{PyObject,Array{Float64,1}} = zeros(0), kind::Int64 = 0)
        length(xc) == length(yc) || throw(DimensionMismatch(string("RBF2D: xc has ", length(xc),
            " centers and yc ", length(yc), ". Hint: one x and one y per center")))
        eps, c, d = rbf_parameters("RBF2D", length(xc), c, eps, d, kind, 3)
        new(constant(xc), constant(yc), eps, c, d, kind)
    end
end

(o::RBF2D)(x, y) = rbf_values((x, y), (o.xc, o.yc), o.eps, o.c, o.d, o.kind)

"""
    RBF3D(xc, yc, zc; c=missing, eps=missing, d=zeros(0), kind=0)

A radial basis function on a 3D domain with centers `(xc[i], yc[i], zc[i])`, called as
`rbf(x, y, z)` for the vector of

    f(x, y, z) = Σᵢ cᵢ φ(r; εᵢ) + d₀ + d₁x + d₂y + d₃z

where `d` has 0, 1 (only d₀) or 4 entries.
$RBF_DOC_TAIL"""
mutable struct RBF3D
    xc::PyObject
    yc::PyObject
    zc::PyObject
    eps::PyObject
    c::PyObject
    d::PyObject
    kind::Int64

    function RBF3D(xc::Union{PyObject,Array{Float64,1}}, yc::Union{PyObject,Array{Float64,1}},
                   zc::Union{PyObject,Array{Float64,1}};
                   c::Union{PyObject,Array{Float64,1},Missing} = missing,
                   eps::Union{PyObject,Array{Float64,1},Real,Missing} = missing,
                   d::Union{PyObject,Array{Float64,1}} = zeros(0), kind::Int64 = 0)
        length(xc) == length(yc) == length(zc) || throw(DimensionMismatch(string("RBF3D: xc, yc ",
            "and zc have ", length(xc), ", ", length(yc), " and ", length(zc), " centers. Hint: ",
            "one x, y and z per center")))
        eps, c, d = rbf_parameters("RBF3D", length(xc), c, eps, d, kind, 4)
        new(constant(xc), constant(yc), constant(zc), eps, c, d, kind)
    end
end

(o::RBF3D)(x, y, z) = rbf_values((x, y, z), (o.xc, o.yc, o.zc), o.eps, o.c, o.d, o.kind)

function Base.show(io::IO, o::Union{RBF2D,RBF3D})
    trainable(t) = t.op.type in ("VariableV2", "VarHandleOp")
    print(io, "RadialBasisFunction(NumOfCenters=", length(o.xc), ",NumOfAdditionalTerm=",
          length(o.d), ",CoeffIsVariable=", trainable(o.c), ",ShapeIsVariable=", trainable(o.eps),
          ",AdditionalTermIsVariable=", trainable(o.d), ")")
end

"""
    interp1(x, v, xq) -> PyObject

The values at the query points `xq` of the piecewise linear function through the points
`(x[i], v[i])` (`x` sorted ascending), as MATLAB's `interp1`. A query point outside
`[x[1], x[end]]` fails when run, naming it. Differentiable with respect to `v`.
"""
function interp1(x::Union{Array{Float64,1},PyObject}, v::Union{Array{Float64,1},PyObject},
                 xq::Union{Array{Float64,1},PyObject})
    x, v, xq = convert_to_tensor(Any[x, v, xq], [Float64, Float64, Float64])
    n = tfcall("size", x; out_type = tf.int64)
    lo, hi = tfcall("gather", x, 0), tfcall("gather", x, n - 1)
    in_range = tfcall("logical_and", tfcall("greater_equal", xq, lo), tfcall("less_equal", xq, hi))
    check = tfcall("debugging.Assert", tfcall("reduce_all", in_range),
                   ["interp1: interpolation points outside the range of x, [x[1], x[end]] = ",
                    tfcall("stack", [lo, hi]), ": ",
                    tfcall("boolean_mask", xq, tfcall("logical_not", in_range))]; summarize = 10)
    control_dependencies(check) do
        # Each query point's interval [x[k], x[k+1]] (k from 0), the last one for xq == x[end].
        k = tfcall("clip_by_value", tfcall("searchsorted", x, xq; side = "right", out_type = tf.int64),
                   1, n - 1) - 1
        x1, x2 = tfcall("gather", x, k), tfcall("gather", x, k + 1)
        v1, v2 = tfcall("gather", v, k), tfcall("gather", v, k + 1)
        return v1 + (v2 - v1) / (x2 - x1) * (xq - x1)
    end
end
