"""
    DevPlace

Device placement for TensorFlow graphs from Julia, in the style of ADCME's parallel computing
chapter. TensorFlow runs in a Python host process (`python -m devplace.bridge`) started on first
use; every call forwards to it. See docs/design.md and docs/protocol.md in the repository.
"""
module DevPlace

export tf, pybuiltin, pyimport, PyObject, PyError, HostError, @pywith, @cpu, @gpu,
       Variable, constant, placeholder, gradients, Session, init, run_profile, save_profile,
       placement, placement_log, get_collection, UPDATE_OPS, bn, batch_norm,
       control_dependencies, canonical_device, pycall, autoplace, LocalCluster, ClusterSession

ENDIAN_BOM == 0x04030201 || error("DevPlace's wire format needs a little-endian machine")

# Layers, each file using only those above it (docs/protocol.md, "Layout"): the wire format,
# the transport (pipes, host process, request loop), Python objects, then the API.
include("frames.jl")
include("wire.jl")
include("requests.jl")
include("fdio.jl")
include("gcqueue.jl")
include("host.jl")
include("pyobject.jl")
include("operators.jl")
include("macros.jl")
include("api.jl")
include("cluster.jl")
include("precompile.jl")

function __init__()
    t = get(ENV, "DEVPLACE_TIMEOUT", "")
    isempty(t) || set_timeout(parse(Float64, t))
    spin = get(ENV, "DEVPLACE_SPIN_US", "")
    isempty(spin) || (SPIN_NS[] = round(UInt64, 1000 * max(0.0, parse(Float64, spin))))
    atexit(() -> stop_host(wait = false))
    get(ENV, "DEVPLACE_PRESTART", "1") == "0" || @async prestart_host()
end

end # module
