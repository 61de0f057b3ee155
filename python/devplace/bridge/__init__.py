"""The bridge that lets Julia (DevPlace.jl) drive devplace: in Julia's own process, or in this
one (`python -m devplace.bridge`, the host process).

Modules (docs/protocol.md): `protocol` (the constants of `protocol.tsv`, which DevPlace.jl
reads too), `wire` (value codec), `frames` (frame kinds and framing),
`requests` (the operations, numbered in `opcodes.tsv`, which DevPlace.jl reads too), `peer`
(what Julia's messages mean, whatever carries them), `handles` (objects Julia holds),
`callbacks` (Julia functions called from Python), `tasks` (each Julia task's TensorFlow
scopes), `error_text` (what Julia is shown of an exception), `transports` (`host`: the host
process's loop over pipes, `shm`: its shared memory; `inprocess`: Julia's process), and the
meaning of Julia's calls: `julia_semantics` (Julia's operator and indexing rules applied to
Python objects), `graph_ops` and `adcme`. DevPlace.jl's files of the same names (`frames.jl`,
`wire.jl`, `requests.jl`, `protocol.jl`, `peer.jl`, `transports/`) are the other ends.
"""

from devplace.bridge.callbacks import CallbackDepthError, JuliaError, JuliaFunction
from devplace.bridge.transports.host import PROTOCOL_VERSION, Host

__all__ = ["PROTOCOL_VERSION", "CallbackDepthError", "Host", "JuliaError", "JuliaFunction"]
