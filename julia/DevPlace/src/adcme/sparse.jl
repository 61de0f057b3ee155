# ADCME's src/sparse.jl: `SparseTensor`, sparse matrices of float64 values in the graph, made
# from SparseMatrixCSC, (ii, jj, vv) or diagonals; arithmetic, products, concatenation,
# indexing, block updates and sums as TensorFlow ops; `A \ b`, `factorize` and `solve` run
# scipy's sparse LU in the host (python/devplace/bridge/adcme/sparse.py), with gradients.
# Indices count from 1, as in ADCME.

using SparseArrays: SparseArrays, SparseMatrixCSC, sparse, spzeros, findnz, spdiagm
import LinearAlgebra: factorize, isdiag

"""
    SparseTensor

A sparse matrix in the graph (ADCME's type). `o` is the `tf.SparseTensor` (indices from 0,
row-major, float64 values), `_diag` whether it is marked diagonal. `run(sess, s)` gives a
`SparseMatrixCSC`. Made by `SparseTensor(A::SparseMatrixCSC)`, `SparseTensor(ii, jj, vv, m, n)`,
`SparseTensor(A::Matrix)`, `spdiag`, `spzero`, `dense_to_sparse` or `constant(A)` of a sparse `A`.
"""
mutable struct SparseTensor
    o::PyObject
    _diag::Bool
    SparseTensor(o::PyObject, _diag::Bool = false) = new(o, _diag)
end

const IndexVector = Union{AbstractVector{<:Integer},PyObject}
const SparseSize = Union{Integer,PyObject,Nothing}

"Julia sizes as the rule takes them; `nothing` is the largest index (Julia's `sparse`)."
function sparse_size(n::SparseSize, index)
    n === nothing || return n
    index isa PyObject && throw(ArgumentError(string("SparseTensor: give the size (m, n) when ",
        "the indices are tensors. Hint: SparseTensor(ii, jj, vv, m, n)")))
    return isempty(index) ? 0 : Int(maximum(index))
end

"""
    SparseTensor(ii, jj, vv, m=nothing, n=nothing; is_diag=false) -> SparseTensor
    SparseTensor(indices::PyObject, vv, shape) -> SparseTensor

The m×n sparse matrix with `A[ii[k], jj[k]] = vv[k]` (indices from 1; Julia vectors or
tensors; `vv` float64, a tensor too; repeated places add up when used, as in ADCME). With a
tensor of index pairs (nnz×2, from 1), the values and the size `[m, n]`.
"""
function SparseTensor(ii::IndexVector, jj, vv::Union{AbstractVector{<:Real},PyObject},
                      m::SparseSize = nothing, n::SparseSize = nothing; is_diag::Bool = false)
    if ii isa PyObject && ndims(ii) == 2 && size(ii, 2) == 2
        return SparseTensor(bridge_rule("adcme.sparse", "from_indices", ii, jj, vv[1], vv[2], 1), is_diag)
    end
    jj isa IndexVector || wrong_argument("SparseTensor", "jj", jj, "a vector of column indices",
                                         "SparseTensor([1, 2], [1, 2], [1.0, 2.0], 2, 2)")
    ii isa PyObject || jj isa PyObject || length(ii) == length(jj) == length(vv) ||
        throw(DimensionMismatch(string("SparseTensor: ii, jj and vv must have one length, got ",
                                       length(ii), ", ", length(jj), ", ", length(vv))))
    o = bridge_rule("adcme.sparse", "from_ijv", scatter_index(ii), scatter_index(jj), float_values(vv),
                    sparse_size(m, ii), sparse_size(n, jj))
    SparseTensor(o, is_diag)
end

float_values(v::PyObject) = v
float_values(v::AbstractArray{<:Real}) = Vector{Float64}(vec(v))

"""
    RawSparseTensor(indices, vv, m, n; is_diag=false) -> SparseTensor

As `SparseTensor(indices, vv, [m, n])` with `indices` (nnz×2) counted from 0, as TensorFlow's.
"""
RawSparseTensor(indices::Union{PyObject,AbstractMatrix{<:Integer}}, vv::Union{PyObject,AbstractVector{<:Real}},
                m::Union{PyObject,Integer}, n::Union{PyObject,Integer}; is_diag::Bool = false) =
    SparseTensor(bridge_rule("adcme.sparse", "from_indices", indices, float_values(vv), m, n, 0), is_diag)

"""
    SparseTensor(A::SparseMatrixCSC) -> SparseTensor
    SparseTensor(A::Matrix) -> SparseTensor

`A`'s stored entries as a sparse tensor (of a dense matrix, its nonzeros); marked diagonal when
`A` is.
"""
function SparseTensor(A::SparseMatrixCSC{<:Real})
    ii, jj, vv = findnz(A)
    SparseTensor(ii, jj, vv, size(A)...; is_diag = isdiag(A))
end
SparseTensor(A::AbstractMatrix{<:Real}) = SparseTensor(sparse(A))
SparseTensor(s::SparseTensor) = s

"""
    constant(A::SparseMatrixCSC) -> SparseTensor

A Julia sparse matrix becomes a `SparseTensor` (as in ADCME); a `SparseTensor` stays as it is.
"""
constant(A::SparseMatrixCSC{<:Real}) = SparseTensor(A)
constant(s::SparseTensor) = s

"""
    dense_to_sparse(o) -> SparseTensor

The nonzero entries of a dense matrix (a Julia matrix or a tensor).
"""
dense_to_sparse(o::AbstractMatrix{<:Real}) = SparseTensor(sparse(o))
dense_to_sparse(o::PyObject) = SparseTensor(bridge_rule("adcme.sparse", "from_dense", o))

"""
    spdiag(n::Integer) -> SparseTensor
    spdiag(v) -> SparseTensor
    spdiag(n, k1 => v1, k2 => v2, ...) -> SparseTensor

The n×n identity; the diagonal matrix with the vector `v` (a tensor or Julia vector) on its
diagonal (marked diagonal); the n×n matrix with `vk` on diagonal `k` (0 the main diagonal,
`k > 0` above, `k < 0` below; each `vk` of length `n - |k|`).
"""
spdiag(n::Integer) = SparseTensor(sparse(1:n, 1:n, ones(n), n, n))
function spdiag(v::Union{PyObject,AbstractVector{<:Real}})
    ndims(v) == 1 && size(v, 1) !== nothing ||
        wrong_argument("spdiag", "v", v, "a vector of known length", "spdiag(constant(ones(3)))")
    n = size(v, 1)
    SparseTensor(collect(1:n), collect(1:n), float_values(v), n, n; is_diag = true)
end
function spdiag(n::Integer, pairs::Pair{<:Integer}...)
    values = Any[v isa PyObject ? v : float_values(v) for (_, v) in pairs]
    SparseTensor(bridge_rule("adcme.sparse", "diagonals", Int(n), Int[k for (k, _) in pairs], values))
end

"""
    spdiagm(k1 => v1, ...) with tensors -> SparseTensor

SparseArrays' `spdiagm` of tensor diagonals (of known lengths): `spdiag(n, k1 => v1, ...)`.
"""
function SparseArrays.spdiagm(pairs::Pair{<:Integer,PyObject}...)
    n = maximum(abs(k) + size(v, 1) for (k, v) in pairs)
    spdiag(n, pairs...)
end

"""
    spzero(m, n=m) -> SparseTensor

The m×n sparse matrix with no entries.
"""
spzero(m::Integer, n::Union{Integer,Missing} = missing) =
    SparseTensor(Int[], Int[], Float64[], m, n === missing ? m : n; is_diag = true)

# --- traits ----------------------------------------------------------------------------

"`size(s)`: the matrix's size (`nothing` where unknown before running); `size(s, d)`."
Base.size(s::SparseTensor) = Tuple(bridge_rule("adcme.sparse", "static_dims", s.o))
Base.size(s::SparseTensor, d::Integer) = size(s)[d]
Base.lastindex(s::SparseTensor, d::Integer) = size(s, d)
Base.ndims(::SparseTensor) = 2
Base.eltype(s::SparseTensor) = (Int64, Float64)
Base.show(io::IO, s::SparseTensor) =
    print(io, "SparseTensor(", join((d === nothing ? "?" : d for d in size(s)), ", "), ")")
Base.copy(s::SparseTensor) = SparseTensor(s.o, s._diag)

"""
    find(s::SparseTensor) -> (rows, cols, values)

The stored entries as three tensors: rows and columns (from 1) and values, in row-major order.
"""
find(s::SparseTensor) = Tuple(bridge_rule("adcme.sparse", "find", s.o))

"""
    rows(s), cols(s), values(s) -> PyObject

The rows (from 1), columns (from 1) and values of `s`'s stored entries, as `find` gives them.
"""
rows(s::SparseTensor) = find(s)[1]
@doc (@doc rows) cols(s::SparseTensor) = find(s)[2]
@doc (@doc rows) Base.values(s::SparseTensor) = s.o.values

"""
    Array(s::SparseTensor) -> PyObject

The dense matrix of `s`, a tensor (repeated places added).
"""
Base.Array(s::SparseTensor) = bridge_rule("adcme.sparse", "to_dense", s.o)

"""
    run(sess, s::SparseTensor, feeds...) -> SparseMatrixCSC

The value of `s` as a Julia sparse matrix.
"""
function Base.run(sess::PyObject, s::SparseTensor, feeds...)
    indices, values, shape = run(sess, bridge_rule("adcme.sparse", "parts", s.o), feeds...)
    isempty(values) && return spzeros(Float64, shape...)
    sparse(indices[:, 1] .+ 1, indices[:, 2] .+ 1, values, shape...)
end

"`bind(s, ops...)`: `s` whose values run only after `ops`, as `bind` of a tensor."
Base.bind(s::SparseTensor, ops...) = bind(s.o.values, ops...)

# --- arithmetic: sparse with sparse stays sparse, with dense gives dense ------------------

const SparseLike = Union{SparseTensor,SparseMatrixCSC{<:Real}}
const DenseLike = Union{PyObject,AbstractMatrix{<:Real}}

"""
    -s, s1 + s2, s1 - s2, s + D, D - s, c * s, s / c (s, s1, s2 sparse)

Sums and differences of sparse matrices (tensors or Julia's) are sparse; with a dense matrix
`D` (a tensor or Julia matrix) they are dense tensors; `c * s` and `s / c` scale by a number or
scalar tensor. `missing` counts as zero, as in ADCME.
"""
Base.:-(s::SparseTensor) = SparseTensor(bridge_rule("adcme.sparse", "scale", s.o, -1.0), s._diag)
Base.:+(a::SparseTensor, b::SparseLike) = add_sparse(a, constant(b))
Base.:+(a::SparseMatrixCSC{<:Real}, b::SparseTensor) = add_sparse(constant(a), b)
Base.:-(a::SparseTensor, b::SparseLike) = add_sparse(a, -constant(b))
Base.:-(a::SparseMatrixCSC{<:Real}, b::SparseTensor) = add_sparse(constant(a), -b)
add_sparse(a::SparseTensor, b::SparseTensor) =
    SparseTensor(bridge_rule("adcme.sparse", "add", a.o, b.o), a._diag && b._diag)

Base.:+(s::SparseTensor, o::DenseLike) = bridge_rule("adcme.sparse", "add_dense", s.o, o)
Base.:+(o::DenseLike, s::SparseTensor) = s + o
Base.:-(s::SparseTensor, o::DenseLike) = bridge_rule("adcme.sparse", "add_dense", s.o, -convert_to_tensor(o))
Base.:-(o::DenseLike, s::SparseTensor) = bridge_rule("adcme.sparse", "add_dense", (-s).o, o)

Base.:*(c::Real, s::SparseTensor) =
    SparseTensor(bridge_rule("adcme.sparse", "scale", s.o, Float64(c)), s._diag)
Base.:*(s::SparseTensor, c::Real) = c * s
Base.:/(s::SparseTensor, c::Real) = (1 / c) * s

Base.:+(s::SparseTensor, ::Missing) = s
Base.:-(s::SparseTensor, ::Missing) = s
Base.:+(::Missing, s::SparseTensor) = s
Base.:-(::Missing, s::SparseTensor) = -s
Base.:*(::SparseTensor, ::Missing) = missing
Base.:*(::Missing, ::SparseTensor) = missing
Base.:/(::SparseTensor, ::Missing) = missing
Base.:/(::Missing, ::SparseTensor) = missing

"""
    s * x, x * s, s1 * s2 with sparse matrices

A sparse matrix times a dense matrix or vector (a tensor or Julia array) is a dense tensor, a
dense matrix times a sparse one too; a product of sparse matrices (tensors or Julia's) is
sparse. A scalar tensor scales.
"""
function Base.:*(s::SparseTensor, o::PyObject)
    ndims(o) == 0 && return SparseTensor(bridge_rule("adcme.sparse", "scale", s.o, o), s._diag)
    bridge_rule("adcme.sparse", "matmul_dense", s.o, o)
end
Base.:*(s::SparseTensor, o::AbstractArray{<:Real}) = bridge_rule("adcme.sparse", "matmul_dense", s.o, o)
function Base.:*(o::PyObject, s::SparseTensor)
    ndims(o) == 0 && return s * o
    bridge_rule("adcme.sparse", "dense_matmul", o, s.o)
end
Base.:*(o::AbstractMatrix{<:Real}, s::SparseTensor) = bridge_rule("adcme.sparse", "dense_matmul", o, s.o)
Base.:*(a::SparseTensor, b::SparseTensor) =
    SparseTensor(bridge_rule("adcme.sparse", "matmul", a.o, b.o), a._diag && b._diag)
Base.:*(a::SparseTensor, b::SparseMatrixCSC{<:Real}) = a * constant(b)
Base.:*(a::SparseMatrixCSC{<:Real}, b::SparseTensor) = constant(a) * b

"`s'`: the transpose of a sparse matrix (sparse, row-major)."
Base.adjoint(s::SparseTensor) = SparseTensor(bridge_rule("adcme.sparse", "transpose", s.o), s._diag)

"""
    sum(s::SparseTensor; dims) -> PyObject

The sum of all entries; with `dims=1` the column sums, with `dims=2` the row sums (vectors).
"""
Base.sum(s::SparseTensor; dims::Union{Integer,Missing,Nothing} = missing) =
    argument_errors(() -> bridge_rule("adcme.sparse", "reduce_sum", s.o,
                                      dims === missing ? nothing : dims))

"""
    reshape(s::SparseTensor, m, n) -> SparseTensor

`tf.sparse.reshape`: the entries in row-major order, as TensorFlow (and ADCME).
"""
Base.reshape(s::SparseTensor, dims::Integer...) =
    SparseTensor(bridge_rule("adcme.sparse", "reshape", s.o, Int[d for d in dims]))

# --- concatenation, indexing, block updates -----------------------------------------------

"""
    [A; B], [A B], [A B; C] of SparseTensors -> SparseTensor

Sparse matrices stacked (`vcat`), side by side (`hcat`), or in block rows (`hvcat`).
"""
Base.vcat(s::SparseTensor, ss::SparseTensor...) = sparse_concat(0, s, ss...)
Base.hcat(s::SparseTensor, ss::SparseTensor...) = sparse_concat(1, s, ss...)
function Base.hvcat(counts::Tuple{Vararg{Int}}, ss::SparseTensor...)
    sum(counts) == length(ss) || throw(ArgumentError(string("hvcat: block rows of ", counts,
        " entries need ", sum(counts), " sparse matrices, got ", length(ss))))
    ends = cumsum(collect(counts))
    vcat((hcat(ss[e - c + 1:e]...) for (c, e) in zip(counts, ends))...)
end
sparse_concat(axis, ss::SparseTensor...) =
    length(ss) == 1 ? ss[1] : SparseTensor(bridge_rule("adcme.sparse", "concat", axis, [s.o for s in ss]))

const SparseIndex = Union{Integer,Colon,AbstractVector{<:Integer},AbstractVector{Bool},PyObject}

"Check Julia indices against a known size (a `BoundsError` naming both)."
function check_sparse_index(s::SparseTensor, idx::Tuple)
    dims = size(s)
    for (d, i) in enumerate(idx)
        (i isa Union{Colon,PyObject} || dims[d] === nothing) && continue
        i isa AbstractVector{Bool} && length(i) != dims[d] && throw(BoundsError(s, idx))
        i isa AbstractVector{Bool} || all(x -> 1 <= x <= dims[d], i) || throw(BoundsError(s, idx))
    end
end

"""
    s[rows, cols] -> SparseTensor or PyObject

The block of `s` at `rows` and `cols` (each an integer, a range, a vector, a Bool mask, `:` or
an integer tensor; indices from 1, picked in the order given), sparse; an integer index drops
its dimension and gives a dense vector (or number).
"""
function Base.getindex(s::SparseTensor, i::SparseIndex, j::SparseIndex)
    check_sparse_index(s, (i, j))
    out = SparseTensor(bridge_rule("adcme.sparse", "select", s.o, scatter_index(i), scatter_index(j)))
    i isa Integer || j isa Integer || return out
    dense = Array(out)
    i isa Integer && j isa Integer && return dense[1, 1]
    return i isa Integer ? dense[1, :] : dense[:, 1]
end

for (name, kind, op) in ((:scatter_update, "update", "="), (:scatter_add, "add", "+="))
    @eval begin
        @doc $("""
            $name(A, rows, cols, B) with sparse A and B -> SparseTensor

        A copy of the sparse matrix `A` (a `SparseTensor` or `SparseMatrixCSC`) with
        `A[rows, cols] $op B`, `B` sparse of that block's size; indices as for `A[rows, cols]`.
        """)
        function $name(A::SparseLike, i::SparseIndex, j::SparseIndex, B::SparseLike)
            A, B = constant(A), constant(B)
            check_sparse_index(A, (i, j))
            SparseTensor(bridge_rule("adcme.sparse", "scatter", $kind, A.o, scatter_index(i),
                                     scatter_index(j), B.o))
        end
    end
end

"""
    compress(s::SparseTensor) -> SparseTensor

`s` with the entries stored at one place added into one, in row-major order.
"""
compress(s::SparseTensor) = SparseTensor(bridge_rule("adcme.sparse", "compress", s.o), s._diag)

"""
    zero_out_row(A, rows::Vector{Int}) -> SparseTensor

The sparse matrix `A` (a `SparseTensor` or `SparseMatrixCSC`) without its entries in `rows`
(from 1): `A[rows, :] .= 0`.
"""
function zero_out_row(A::SparseLike, bd::Union{AbstractVector{<:Integer},PyObject})
    A = constant(A)
    check_sparse_index(A, (bd, :))
    SparseTensor(bridge_rule("adcme.sparse", "zero_out_row", A.o, scatter_index(bd)))
end

# --- solving ---------------------------------------------------------------------------

const SparseVectorArg = Union{PyObject,AbstractVector{<:Real}}
const SPARSE_SOLVERS = String[]

"ADCME's names of sparse solvers, as the host lists them (read once)."
function sparse_solvers()
    isempty(SPARSE_SOLVERS) && append!(SPARSE_SOLVERS, bridge_module("adcme.sparse").METHODS)
    return SPARSE_SOLVERS
end

"""
    A \\ b, \\(A, b, method) with a SparseTensor A -> PyObject

The solution of `A x = b` for a square `A` (scipy's sparse LU in the host, on a CPU); the
least squares solution for a tall `A` (minimum norm for a wide one). `b` is a vector, or a
matrix whose rows are right-hand sides (then row `i` of the result solves against row `i`, as
ADCME's documentation says). Gradients flow to `b` and to `A`'s values. `method` is one of
ADCME's solver names ("auto", "SparseLU", "SparseQR", ...; another is refused, listing them);
all use the LU factorization, which gives the one solution of a regular system. A singular
matrix fails when run, naming it.
"""
function Base.:\(s::SparseTensor, o::Union{PyObject,AbstractArray{<:Real}}, method::String = "auto")
    method in sparse_solvers() || wrong_argument("\\", "method", method,
        string("one of ", join(sparse_solvers(), ", ")), "\\(A, b, \"SparseLU\")")
    bridge_rule("adcme.sparse", "solve", s.o, o isa PyObject ? o : float_values_nd(o), method)
end
Base.:\(A::SparseMatrixCSC{<:Real}, o::PyObject) = constant(A) \ o

float_values_nd(o::AbstractArray{<:Real}) = convert(Array{Float64}, o)

"""
    factorize(A::Union{SparseTensor,SparseMatrixCSC}, max_cache_size=nothing) -> (A, handle)

`A` with a handle to its LU factors, made once per run of the graph; `solve(Afac, b)` and
`Afac \\ b` use them, so several right-hand sides share one factorization. At most
`max_cache_size` factorize ops keep their factors (the least recently used is dropped);
`nothing` is ADCME's default, 999999.
"""
function factorize(A::SparseLike, max_cache_size::Union{Integer,Nothing} = nothing)
    A = constant(A)
    limit = max_cache_size === nothing ? nothing : Int(max_cache_size)
    (A, bridge_rule("adcme.sparse", "factorize", A.o, limit))
end

"""
    solve(Afac, rhs) -> PyObject
    Afac \\ rhs

The solution of `A x = rhs` with `Afac = factorize(A)`'s factors; gradients flow to `rhs` and
`A`'s values.
"""
solve(Afac::Tuple{SparseTensor,PyObject}, rhs::Union{PyObject,AbstractArray{<:Real}}) =
    bridge_rule("adcme.sparse", "factorized_solve", Afac[1].o, Afac[2],
                rhs isa PyObject ? rhs : float_values_nd(rhs))
Base.:\(Afac::Tuple{SparseTensor,PyObject}, rhs::Union{PyObject,AbstractArray{<:Real}}) =
    solve(Afac, rhs)

"""
    trisolve(a, b, c, d) -> PyObject

The solution `x` of the tridiagonal system `a[i] x[i-1] + b[i] x[i] + c[i] x[i+1] = d[i]`
(`a` the subdiagonal and `c` the superdiagonal, one shorter than `b` and `d`); tensors or
Julia vectors, with gradients.
"""
function trisolve(a::SparseVectorArg, b::SparseVectorArg, c::SparseVectorArg, d::SparseVectorArg)
    args = map(x -> x isa PyObject ? x : float_values(x), (a, b, c, d))
    bridge_rule("adcme.sparse", "trisolve", args...)
end

# --- assembling row by row while the graph runs -------------------------------------------

"""
    SparseAssembler(handle, n, tol=0.0) -> PyObject

An op that opens sparse assembler `handle` (an integer) for a matrix of `n` rows when run (an
open one is kept, so several matrices need several handles); `accumulate` adds to its rows and
`assemble` makes the matrix. Values of magnitude at most `tol` are left out. The entries live in
the host process while the graph runs.

```julia
handle = SparseAssembler(100, 5, 1e-8)
op1 = accumulate(handle, 1, [1; 2; 3], [1.0; 2.0; 3.0])
op2 = accumulate(handle, 2, [1; 2; 3], [1.0; 2.0; 3.0])
J = assemble(5, 5, [op1; op2])   # a SparseTensor
```
"""
SparseAssembler(handle::Union{PyObject,Integer}, n::Union{PyObject,Integer},
                tol::Union{PyObject,Real} = 0.0) =
    bridge_rule("adcme.sparse", "assembler", handle, n, tol isa PyObject ? tol : Float64(tol))

"""
    accumulate(handle::PyObject, row, cols, vals) -> PyObject

An op that, when run, adds `vals[k]` at `A[row, cols[k]]` of the assembler `handle` (from
`SparseAssembler`; `row` and `cols` from 1); give its result to `assemble`.
"""
Base.accumulate(handle::PyObject, row::Union{PyObject,Integer},
                cols::Union{PyObject,AbstractVector{<:Integer}},
                vals::Union{PyObject,AbstractVector{<:Real}}) =
    bridge_rule("adcme.sparse", "assembler_add", handle, row, cols, float_values(vals))

"""
    assemble(m, n, ops) -> SparseTensor

The m×n sparse matrix of what the `accumulate` ops `ops` (one, or several as `[op1; op2]`)
added, when run; the assembler is then closed (run `SparseAssembler` again to reuse it).
"""
assemble(m::Union{PyObject,Integer}, n::Union{PyObject,Integer}, ops::PyObject) =
    SparseTensor(bridge_rule("adcme.sparse", "assembler_take", ops, m, n))
