# The bridge's constants (docs/protocol.md), read from the one table both ends use,
# python/devplace/bridge/protocol.tsv: value tags, frame kinds, opcode flags, limits, the
# shared-memory layout and Julia's elementwise functions. The Python side (protocol.py) reads
# the same file.

const PROTOCOL_FILE = normpath(joinpath(@__DIR__, "..", "..", "..", "..", "python", "devplace",
                                        "bridge", "protocol.tsv"))
include_dependency(PROTOCOL_FILE)

"protocol.tsv's rows, each its tab-separated fields: group, name, value, meaning, ..."
const PROTOCOL_ROWS = [String.(split(line, '\t')) for line in eachline(PROTOCOL_FILE)
                       if !isempty(line) && !startswith(line, '#')]

"The rows of `group`."
protocol_rows(group::String) = filter(row -> row[1] == group, PROTOCOL_ROWS)

"The value of `name` in `group`, as the table writes it."
protocol_text(group::String, name::String) =
    only(row[3] for row in PROTOCOL_ROWS if row[1] == group && row[2] == name)

"The number `name` of `group` (decimal or 0x hex in the table)."
protocol_number(group::String, name::String) = parse(Int, protocol_text(group, name))

"The byte `name` of `group`: a value tag, frame kind or opcode flag."
protocol_byte(group::String, name::String) = UInt8(protocol_number(group, name))
