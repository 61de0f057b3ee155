"""
    DevPlace.Codec

The bridge's wire format, the lowest floor: the constants both languages read from
`protocol.tsv` and the opcodes from `opcodes.tsv`, frames, values encoded and decoded, large arrays
through shared memory. It reaches no other floor.
"""
module Codec

include("protocol.jl")
include("frames.jl")
include("shm.jl")
include("wire.jl")
include("requests.jl")

end # module
