"""
    DevPlace.ADCMEAPI

ADCME's API (one file per ADCME source file of the same name; `ADCME_NAMES.tsv`
lists each name and its file), on the devplace API below it. Not `ADCME`: that name is DevPlace
itself, for ADCME's qualified names.
"""
module ADCMEAPI

using Statistics: mean
using ..Codec: BY_HANDLE, OP_GETATTR, OP_IMPORT, PyDict
using ..Objects: PyObject, TF_MODULE, argument_errors, attribute, bounds_errors, call_python,
    lazy_pyobject, pyhasattr, request, semantics
using ..API: @pywith, Variable, feed_dict, get_collection, init, pyimport, tf, wrong_argument
import ..API: constant, control_dependencies, gradients, placeholder

include("calls.jl")
include("variable.jl")
include("core.jl")
include("gpu.jl")
include("ops.jl")
include("random.jl")
include("io.jl")
include("optim.jl")
include("layers.jl")
include("sparse.jl")
include("rbf.jl")
include("flow.jl")
include("ode.jl")
include("extra.jl")
include("kit.jl")
include("pcl.jl")
include("sqlite.jl")
include("ot.jl")

end # module
