"""`python -m devplace.bridge`: serve one Julia process; frames arrive on fd 0.

Replies go to `--write-fd` (DevPlace.jl passes a dedicated pipe as fd 3 and points fd 1 at its
stderr). With the default, fd 1, the frame pipe is first moved to a fresh fd and fd 1 pointed at
fd 2. Either way whatever Python, TensorFlow's C++ or a subprocess prints lands on stderr, never
inside a frame, and no subprocess inherits a frame pipe.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import signal
import sys
import threading
import time


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


_PR_SET_PDEATHSIG = 1
#: Seconds between the watchdog's checks that the parent process still lives.
_WATCH_INTERVAL = 0.2


def _die_with_parent(parent: int) -> None:
    """Exit at once when `parent` (the Julia process) dies, whatever the host is doing.

    On Linux the kernel kills the host when its parent exits (PR_SET_PDEATHSIG); a watchdog
    thread checks the parent too (other systems, or a parent that died before prctl).
    """
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass  # the watchdog below still works

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(_WATCH_INTERVAL)
        os._exit(3)

    threading.Thread(target=watch, name="devplace-parent-watchdog", daemon=True).start()


def main(argv: list[str] | None = None) -> int:
    """Run the host until Julia closes the pipe; returns the exit code."""
    parser = argparse.ArgumentParser(prog="python -m devplace.bridge", description=__doc__)
    parser.add_argument(
        "--max-frame",
        type=int,
        default=os.environ.get("DEVPLACE_MAX_FRAME"),
        help="largest frame accepted, in bytes (default and most 2 GiB, or $DEVPLACE_MAX_FRAME)",
    )
    parser.add_argument(
        "--write-fd", type=int, default=1, help="fd for frames to Julia (default 1, stdout)"
    )
    parser.add_argument(
        "--preload",
        action="append",
        default=[],
        metavar="MODULE",
        help="import MODULE right after start-up, before the first request (repeatable)",
    )
    parser.add_argument(
        "--shm-dir",
        default=None,
        metavar="FOLDER",
        help="send arrays of --shm-min bytes or more through segments in FOLDER (/dev/shm)",
    )
    parser.add_argument(
        "--shm-min", type=int, default=1 << 18, help="smallest array sent through shared memory"
    )
    parser.add_argument(
        "--parent-pid",
        type=int,
        default=os.getppid(),
        help="exit when this process dies (default: the parent process)",
    )
    args = parser.parse_args(argv)
    _die_with_parent(args.parent_pid)
    rfd, wfd = _claim_frame_fds(args.write_fd)
    # Ctrl-C at a terminal must not reach the host directly: its own process group keeps it
    # out, and Julia forwards one SIGINT per interrupted call, which stops only that call's code.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if os.getpid() != os.getpgrp():
        os.setpgid(0, 0)
    from devplace.bridge import frames
    from devplace.bridge.transports.host import Host

    host = Host(
        rfd,
        wfd,
        max_frame=min(args.max_frame or frames.DEFAULT_MAX_FRAME, frames.DEFAULT_MAX_FRAME),
        preload=args.preload,
        shm_dir=args.shm_dir,
        shm_min=args.shm_min,
    )
    signal.signal(signal.SIGINT, host.interrupt)
    return host.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
