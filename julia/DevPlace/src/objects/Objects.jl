"""
    DevPlace.Objects

Python objects in Julia: `PyObject` and its requests, module objects found lazily,
and Julia's operators, indexing and broadcasting on them.
"""
module Objects

using ..Codec: BY_HANDLE, Encoder, MAX_DEPTH, OP_CALL, OP_DIR, OP_GETATTR, OP_HASATTR, OP_HASH,
    OP_IMPORT, OP_ISEQUAL, OP_ISINSTANCE, OP_REPR, OP_SETATTR, OP_STR, PyDict, TAG_HANDLE,
    protocol_rows, summary_of
import ..Codec: encode!, make_handle
using ..Transports: HOST, Host, InProcess, OP_INFO, Peer, PyError, direct_feed, exchange, op_field,
    queue_release, roundtrip, run_fetch, with_peer

include("pyobject.jl")
include("operators.jl")

end # module
