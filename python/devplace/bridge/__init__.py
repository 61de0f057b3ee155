"""The bridge that lets Julia (DevPlace.jl) drive devplace in this Python process.

`python -m devplace.bridge` runs the host: it reads request frames from Julia and answers them
(docs/protocol.md). Modules: `wire` (value codec), `frames` (framing), `handles` (objects Julia
holds), `callbacks` (Julia functions called from Python), `requests` (the operations, numbered
in `opcodes.tsv`, which DevPlace.jl reads too), `host` (the loop), `julia_semantics` (Julia's
operator and indexing rules applied to Python objects). DevPlace.jl's files of the same names
(`frames.jl`, `wire.jl`, `requests.jl`, `host.jl`) are the other ends.
"""

from devplace.bridge.callbacks import CallbackDepthError, JuliaError, JuliaFunction
from devplace.bridge.transports.host import PROTOCOL_VERSION, Host

__all__ = ["PROTOCOL_VERSION", "CallbackDepthError", "Host", "JuliaError", "JuliaFunction"]
