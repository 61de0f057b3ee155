"""
    DevPlace

Device placement for TensorFlow graphs from Julia, in the style of ADCME's parallel computing
chapter. TensorFlow runs in Julia's own process (libpython called directly) wherever it can,
else in a Python host process (`python -m devplace.bridge`); `set_transport` chooses. Every call
forwards to it. See docs/design.md and docs/protocol.md in the repository.
"""
module DevPlace

export tf, pybuiltin, pyimport, PyObject, PyError, HostError, @pywith, @cpu, @gpu,
       Variable, constant, placeholder, gradients, Session, init, run_profile, save_profile,
       placement, placement_log, get_collection, UPDATE_OPS, bn, batch_norm,
       control_dependencies, canonical_device, pycall, autoplace, LocalCluster, ClusterSession,
       last_profile, mean

# ADCME's core API (src/adcme/; the table of names is julia/DevPlace/ADCME_NAMES.tsv).
export reset_default_graph, enable_eager_execution, while_loop, if_else, stop_gradient,
       independent, tensor, tensorname, has_mpi, get_mpi, get_mpirun, has_gpu, gpu_info, get_gpu,
       cell, set_shape, get_dtype, get_variable, variable_scope, gradient_magnitude, hessian,
       constant_initializer, glorot_normal_initializer, random_normal_initializer,
       random_uniform_initializer, truncated_normal_initializer, uniform_unit_scaling_initializer,
       variance_scaling_initializer, sym, spd, convert_to_tensor, hessian_vector, TensorArray,
       gradient_checkpointing, zeros_like, ones_like, gradients_colocate, is_variable, jacobian,
       AUTO_REUSE, einsum, sigmoid, softplus, softmax, softsign, relu, relu6, squeeze, diag, diagm,
       det, triangular_solve, group_assign, assign, cast, group, clip, scatter_add, scatter_sub,
       scatter_update, stack, concat, unstack, norm, cvec, rvec, pad, leaky_relu, fft, ifft, I, svd,
       vector, pmap, std, lgamma, topk, argsort, batch_matmul, dot, selu, elu, tr, tril, triu,
       solve_batch, swish, hard_sigmoid, hard_swish, concat_elu, concat_hard_swish, concat_relu,
       fourier, rollmean, rollsum, rollvar, rollstd, softmax_cross_entropy_with_logits, seed!,
       categorical, choice, logpdf, uniform, normal, beta, bernoulli, gamma, truncatednormal,
       cauchy, chi, chi2, exponential, gumbel, halfcauchy, halfnormal, horseshoe,
       inversegamma, inversegaussian, kumaraswamy, pareto, sinharcsinh, studentt, vonmises, poisson
# ADCME's sparse matrices (src/adcme/sparse.jl).
export SparseTensor, RawSparseTensor, spdiag, spzero, spdiagm, dense_to_sparse, find, rows, cols,
       compress, zero_out_row, factorize, solve, trisolve, SparseAssembler, accumulate, assemble

# ADCME's optimizers, layers and files (src/adcme/optim.jl, layers.jl, io.jl).
export AdamOptimizer, AdadeltaOptimizer, AdagradDAOptimizer, AdagradOptimizer,
       GradientDescentOptimizer, RMSPropOptimizer, minimize, ScipyOptimizerInterface,
       ScipyOptimizerMinimize, BFGS!, Optimize!, CustomOptimizer, newton_raphson,
       newton_raphson_with_grad, NonlinearConstrainedProblem, reset_default_options, ae, ae_init, ae_num,
       ae_to_code, fc, fc_init, fc_num, fc_to_code, fcx, dense, dropout, save, load, psave, pload,
       Diary, scalar, activate
# ADCME's radial basis functions (src/adcme/rbf.jl).
export RBF2D, RBF3D, interp1
# ADCME's normalizing flows (src/adcme/flow.jl).
export FlowOp, LinearFlow, AffineConstantFlow, ActNorm, SlowMAF, MAF, IAF, Invertible1x1Conv,
       AffineHalfFlow, NeuralCouplingFlow, NormalizingFlow, NormalizingFlowModel,
       autoregressive_network, TanhFlow, AffineScalarFlow, InvertFlow, AffineFlow, Abs, Exp, Log,
       MaskedAutoregressiveFlow, Permute, PowerTransform, Sigmoid, Softplus, Square
# ADCME's views (src/adcme/kit.jl; ADCMEKit.jl's too).
export linedata, lineview, meshdata, meshview, pcolormeshview, gradview, jacview, PCLview, animate,
       saveanim

# ADCME's time integrators (src/adcme/ode.jl).
export rk4, ode45, αscheme, αscheme_time, TR_BDF2, ExplicitNewmark, Newmark

# ADCME's extras that need no compiled operator (src/adcme/extra.jl).
export xavier_init, register, list_physical_devices, timestamp, sleep_for

# ADCME's physics constrained learning (src/adcme/pcl.jl).
export test_jacobian, test_hessian, pcl_square_sum, pcl_linear_op, pcl_hessian, pcl_sparse_solve,
       pcl_compress

# ADCME's SQLite databases and optimal transport (src/adcme/sqlite.jl, ot.jl).
export Database, execute, commit, sinkhorn, ot_dist, empirical_sinkhorn, emd, empirical_emd,
       ot_plot1D, dtw
# `PyCall.PyError` in ADCME's code: the module PyCall below.
export PyCall

# ADCME's qualified names (`ADCME.options`, `ADCME.save`) name DevPlace itself: `using DevPlace`
# binds `ADCME` (so do `import DevPlace: ADCME` and `using DevPlace.ADCME`).
export ADCME

"""
    ADCME

DevPlace itself under ADCME's name, for code written with ADCME's qualified names:
`ADCME.options.newton_raphson.verbose = true`, `ADCME.save(sess, "w.mat")`.
"""
const ADCME = DevPlace

ENDIAN_BOM == 0x04030201 || error("DevPlace's wire format needs a little-endian machine")

# The floors, lowest first, each a module in its folder that reaches only those below it, by the
# `using ..Lower: names` at its top (test/layering.jl checks it; docs/layout.md): the wire format,
# the transports (pipes to a host process; libpython in this process), Python objects, the
# devplace API, ADCME's API.
include("codec/Codec.jl")
include("transports/Transports.jl")
include("objects/Objects.jl")
include("api/API.jl")
include("adcme/ADCMEAPI.jl")

"DevPlace's floors, lowest first."
const FLOORS = (Codec, Transports, Objects, API, ADCMEAPI)

# Every floor's own names are DevPlace's (`DevPlace.request`, `DevPlace.HOST`, the exports above),
# as they were before the floors.
for floor in FLOORS, name in names(floor; all = true, imported = true)
    owner = Base.binding_module(floor, name)  # another floor's: imported from that floor
    startswith(string(name), '#') || name in (:eval, :include, nameof(floor)) ||
        (owner !== floor && owner in FLOORS) ||
        Core.eval(DevPlace, Expr(:import, Expr(:., :., nameof(floor), name)))
end

# ADCME's code names PyCall's error type (`@test_throws PyCall.PyError ...`): `using DevPlace`
# binds `PyCall` (exported above) to this module, DevPlace's own types under PyCall's names.
module PyCall
import ..DevPlace: PyError, PyObject
export PyError, PyObject
end

# Documented here, not inside the module, so that DevPlace's docs hold it as for every export.
@doc """
    PyCall

PyCall's names for DevPlace's own Python types, for code written for ADCME and PyCall:
`PyCall.PyError` is [`PyError`](@ref), `PyCall.PyObject` is [`PyObject`](@ref).
""" PyCall

# The exports that are Base's libraries' own names (`I`, `spdiagm`): from the floor that uses them.
for name in names(DevPlace)
    isdefined(DevPlace, name) && continue
    i = findfirst(f -> isdefined(f, name), FLOORS)
    i === nothing && error("DevPlace exports `", name, "`, which no floor defines")
    Core.eval(DevPlace, Expr(:import, Expr(:., :., nameof(FLOORS[i]), name)))
end

include("precompile.jl")

function __init__()
    how = get(ENV, "DEVPLACE_TRANSPORT", "auto")
    Symbol(how) in TRANSPORTS || error("ENV[\"DEVPLACE_TRANSPORT\"] is \"", how,
                                       "\"; hint: inprocess, process or auto")
    TRANSPORT[] = Symbol(how)
    t = get(ENV, "DEVPLACE_TIMEOUT", "")
    isempty(t) || set_timeout(parse(Float64, t))
    spin = get(ENV, "DEVPLACE_SPIN_US", "")
    isempty(spin) || (SPIN_NS[] = round(UInt64, 1000 * max(0.0, parse(Float64, spin))))
    SHM_DIR[] = get(ENV, "DEVPLACE_SHM_DIR", SHM_DIR[])
    SHM_MIN[] = parse(Int, get(ENV, "DEVPLACE_SHM_MIN", string(SHM_MIN[])))
    atexit(() -> (stop_host(wait = false); retire_outbox(); finish_python()))
    Transports.COMPILE_BRIDGE[] = precompile_bridge
    get(ENV, "DEVPLACE_PRESTART", "1") == "0" && return
    ccall(:jl_generating_output, Cint, ()) == 1 && return  # loaded to precompile another package
    try  # in process, TensorFlow's import begins now, not once a task has compiled its way there
        in_process_wanted() && python_first()
    catch err  # said again where the first call starts Python
        err isa HostError || rethrow()
    end
    @async prestart_host()
end

end # module
