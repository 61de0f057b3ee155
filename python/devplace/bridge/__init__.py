"""The bridge that lets Julia (DevPlace.jl) drive devplace: in Julia's own process, or in this
one (`python -m devplace.bridge`, the host process). It stands on the floors (`core/`,
`adapter/`, `facts/`); docs/protocol.md is the protocol, and DevPlace.jl's files of the same
names (`frames.jl`, `wire.jl`, `requests.jl`, `protocol.jl`, `peer.jl`, `transports/`) are the
other ends.

Modules:

- `__main__`: `python -m devplace.bridge` runs the host process (parent death, its fds)
- `protocol`: the constants of `protocol.tsv`, which DevPlace.jl reads too: value tags, frame
  kinds, opcode flags, limits, the shared-memory layout and segment names, Julia's elementwise
  functions
- `wire`: the value codec (tagged values)
- `frames`: frame kinds, and length-prefixed frames on a pair of pipes
- `requests`: one function per request, numbered in `opcodes.tsv` (which DevPlace.jl reads too)
- `peer`: what Julia's messages mean, whatever carries them: the handle table, the codec's
  context, the answer to a request, callbacks into Julia (`Peer`)
- `transports`: what carries them: `host` (the host process's loop over pipes), `shm` (its
  shared memory), `inprocess` (Julia's own process), `startup` (Python's start and exit
  there)
- `handles`: Python objects Julia holds by number
- `callbacks`: Julia callables seen from Python, and Julia exceptions raised through them
- `error_text`: what Julia is shown of a Python exception: short, a hint, the full text kept
  (`DevPlace.last_error()`)
- `tasks`: TensorFlow's scopes kept per Julia task (`switch_task`)
- `julia_semantics`: Julia's operator, indexing and display rules applied to Python objects;
  the one home of the index rule (`zero_based`) and of `dims` to `axis` (`axes`)
- `graph_ops`: Julia's elementwise ops and scalar constants made straight into the graph
- `adcme`: ADCME's rules that need several TF ops, one module per DevPlace.jl `src/adcme/` file
"""

from devplace.core._lazy import lazy_attributes

# Loaded on first use: Julia's process imports `transports.startup` (standard library only)
# through this package before numpy and TensorFlow load.
_LAZY = {
    "CallbackDepthError": "devplace.bridge.callbacks",
    "JuliaError": "devplace.bridge.callbacks",
    "JuliaFunction": "devplace.bridge.callbacks",
    "PROTOCOL_VERSION": "devplace.bridge.transports.host",
    "Host": "devplace.bridge.transports.host",
}
__all__ = ["PROTOCOL_VERSION", "CallbackDepthError", "Host", "JuliaError", "JuliaFunction"]
__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, __all__)
