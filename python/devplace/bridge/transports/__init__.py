"""What carries Julia's messages to `devplace.bridge.peer.Peer` and back. DevPlace.jl's
`src/transports/` holds the other ends, and its `transport.jl` chooses between them.

Modules:

- `host`: the isolating transport: a Python process of its own (`python -m devplace.bridge`),
  its request loop over two pipes, callbacks as frames
- `shm`: the host's large arrays through shared memory: this side's outbox, Julia's copied out
- `inprocess`: Julia's own process: calls through libpython's C API, arrays by address,
  TensorFlow imported under `RTLD_DEEPBIND`, py_func Julia calls handed to Julia's thread
- `startup`: Python's start in Julia's process (TensorFlow imported in the background) and exit
- `numpy_memory`: a fetched array's memory handed to Julia whole, in process (Julia's array
  owns it, numpy forgets it)
"""
