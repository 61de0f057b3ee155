"""
    DevPlace.API

The devplace API by its Python names (`tf`, `Session`, `placement`, `autoplace`, ...), the
device scopes and `@pywith`, clusters, and rich display in notebooks.
"""
module API

using ..Codec: BY_HANDLE, IN_PLACE, OP_BUILTIN, OP_CALL, OP_ENTER, OP_EXIT, OP_GETATTR, OP_IMPORT,
    PyDict, WireNumber, summary_of
using ..Transports: SOURCE_DIR
using ..Objects: DP_MODULE, PyObject, SEMANTICS, TF_MODULE, attribute, call_python,
    direct_fetches, in_live_host, lazy_pyobject, request, resolve_lazy, run_direct, semantics

include("macros.jl")
include("devplace.jl")
include("cluster.jl")
include("display.jl")

end # module
