"""
    DevPlace.Transports

What carries a request to Python and its answer back: the peer both transports share
(handles released later, Python's errors, callbacks into Julia), the host process over pipes,
libpython in this process, and which of them serves (`roundtrip`).
"""
module Transports

using ..Codec: ABANDON, BIG_PART, CALLBACK, ERROR, Encoder, HELLO, IN_PLACE, OP_STATS,
    OP_SWITCH_TASK, PROTOCOL_VERSION, RELEASE, REPLY, REQUEST, SHM_DIR, SHM_MIN, WireError,
    WireNumber, clean_stale_segments, decode_value, drop_inbox, dtype_code, dtype_of, encode!,
    encode_value, keep_in_place, make_handle, message_parts, nbytes, op_name, read_frame,
    read_shared, retire_outbox, write_frame
import ..Codec: lookup_function, register_function!, shared_array

include("fdio.jl")
include("gcqueue.jl")
include("errors.jl")
include("peer.jl")
include("host.jl")
include("cpython.jl")
include("inprocess.jl")
include("transport.jl")

end # module
