"""`python -m devplace.bridge`: serve one Julia process; frames arrive on fd 0.

Replies go to `--write-fd` (DevPlace.jl passes a dedicated pipe as fd 3 and points fd 1 at its
stderr). With the default, fd 1, the frame pipe is first moved to a fresh fd and fd 1 pointed at
fd 2. Either way whatever Python, TensorFlow's C++ or a subprocess prints lands on stderr, never
inside a frame, and no subprocess inherits a frame pipe.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys


def _claim_frame_fds(write_fd: int) -> tuple[int, int]:
    rfd = os.dup(0)  # fds made by dup are not inherited by subprocesses
    if write_fd == 1:
        wfd = os.dup(1)
        os.dup2(2, 1)
    else:
        wfd = write_fd
        os.set_inheritable(wfd, False)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    return rfd, wfd


def main(argv: list[str] | None = None) -> int:
    """Run the host until Julia closes the pipe; returns the exit code."""
    parser = argparse.ArgumentParser(prog="python -m devplace.bridge", description=__doc__)
    parser.add_argument(
        "--max-frame",
        type=int,
        default=int(os.environ.get("DEVPLACE_MAX_FRAME", (1 << 32) - 1)),
        help="largest frame accepted, in bytes (default 4 GiB - 1, or $DEVPLACE_MAX_FRAME)",
    )
    parser.add_argument(
        "--write-fd", type=int, default=1, help="fd for frames to Julia (default 1, stdout)"
    )
    args = parser.parse_args(argv)
    rfd, wfd = _claim_frame_fds(args.write_fd)
    # Ctrl-C in the Julia REPL reaches the whole process group; Julia decides what to do.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from devplace.bridge.host import Host

    return Host(rfd, wfd, max_frame=args.max_frame).serve_forever()


if __name__ == "__main__":
    sys.exit(main())
