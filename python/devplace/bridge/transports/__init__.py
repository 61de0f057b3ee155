"""What carries Julia's messages to `devplace.bridge.peer.Peer` and back.

- `host`: a Python process of its own (`python -m devplace.bridge`), frames on two pipes, large
  arrays through shared memory (`shm`): the isolating transport.
- `inprocess`: Julia's own process, calls through libpython's C API, large arrays by address.

DevPlace.jl's `src/transports/` holds the other ends, `src/transport.jl` chooses between them.
"""
