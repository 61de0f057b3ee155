# The request opcodes (docs/protocol.md, "Requests"), read from the one table both ends use,
# python/devplace/bridge/opcodes.tsv: constants `OP_GETATTR`, `OP_CALL`, ... and `OP_NAMES`.
# The Python side (requests.py) reads the same file and checks it against its functions.

const OPCODES_FILE = normpath(joinpath(@__DIR__, "..", "..", "..", "..", "python", "devplace",
                                       "bridge", "opcodes.tsv"))
include_dependency(OPCODES_FILE)

"Request name by opcode, for messages."
const OP_NAMES = Dict{UInt8,String}()

for line in eachline(OPCODES_FILE)
    (isempty(line) || startswith(line, '#')) && continue
    code, name = split(line, '\t')[1:2]
    OP_NAMES[parse(UInt8, code)] = name
    @eval const $(Symbol("OP_", uppercase(name))) = $(parse(UInt8, code))
end

"`opcode | BY_HANDLE` asks for the result as a handle even when it could travel by value."
const BY_HANDLE = protocol_byte("flag", "BY_HANDLE")

"""
`opcode | IN_PLACE` lets the host read the request's shared arrays where they are, without a
copy: Julia keeps them there until the reply (the outbox's `floor`). Only for requests whose
Python side keeps no reference to them (`run`'s feeds).
"""
const IN_PLACE = protocol_byte("flag", "IN_PLACE")

op_name(op::UInt8) = get(OP_NAMES, op & ~(BY_HANDLE | IN_PLACE), "unknown")
