"""A TCP forwarder from loopback ports outside a network namespace to the same ports inside.

The launcher binds one listening socket per task on `127.0.0.1` and hands them to this
process, which then moves itself into a fresh loopback-only namespace. Every connection
accepted outside is joined to `127.0.0.1:<same port>` inside, where the TF servers listen. So
the cluster spec's addresses mean the same thing to a client outside and to the servers
inside, and only processes on this machine reach the servers.

Run by file path, not as `-m devplace.cluster.forward`: it needs only the standard library,
and must not import TensorFlow (whose threads would stay outside the namespace).
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import sys
import threading
from pathlib import Path

if __package__:
    from devplace.cluster import netns, procs
    from devplace.core import atomic
else:  # run as a script: the sibling modules and core/atomic.py, without importing devplace
    sys.path.append(str(Path(__file__).resolve().parents[1] / "core"))
    import atomic  # type: ignore[import-not-found, no-redef]
    import netns  # type: ignore[import-not-found, no-redef]
    import procs  # type: ignore[import-not-found, no-redef]

__all__ = ["main"]

_CHUNK = 1 << 16


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(_CHUNK):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        for sock, how in ((sink, socket.SHUT_WR), (source, socket.SHUT_RD)):
            try:
                sock.shutdown(how)
            except OSError:
                pass


def _join(outside: socket.socket, port: int) -> None:
    try:
        inside = socket.create_connection(("127.0.0.1", port), timeout=5)
    except OSError:
        outside.close()  # the server is gone: the client sees the connection closed at once
        return
    inside.settimeout(None)
    for sock in (inside, outside):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    back = threading.Thread(target=_pump, args=(inside, outside), daemon=True)
    back.start()
    _pump(outside, inside)
    back.join()
    inside.close()
    outside.close()


def _serve(listener: socket.socket) -> None:
    port = listener.getsockname()[1]
    while True:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        threading.Thread(target=_join, args=(conn, port), daemon=True).start()


def main(argv: list[str] | None = None) -> int:
    """Forward the inherited listening sockets (`--fds`) into a new loopback-only namespace."""
    parser = argparse.ArgumentParser(prog="devplace-forward", description=__doc__)
    parser.add_argument("--fds", required=True, help="comma-separated listening socket fds")
    parser.add_argument("--ready-file", required=True, help="written once forwarding works")
    args = parser.parse_args(argv)
    listeners = [socket.socket(fileno=int(fd)) for fd in args.fds.split(",")]
    netns.isolate()  # before any thread: the whole process moves
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    procs.exit_with_parent()
    for listener in listeners:
        threading.Thread(target=_serve, args=(listener,), daemon=True).start()
    atomic.write_text(args.ready_file, f"{os.getpid()}\n")
    threading.Event().wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
