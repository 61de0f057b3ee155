"""Loopback-only network namespaces (Linux): make one, join one, and check the OS allows it.

TF servers listen on every interface with no authentication. In a fresh network namespace
the only interface is `lo`, so nothing outside this machine (or outside the namespace) can
reach them. Making a namespace needs `CAP_SYS_ADMIN` (root, `unshare -n`); `supported()`
says whether it works here and, if not, why.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import fcntl
import os
import shutil
import socket
import struct
import subprocess
import sys
from functools import cache

from devplace.core.errors import Error

__all__ = ["NamespaceError", "isolate", "join_command", "loopback_up", "supported"]

_CLONE_NEWNET = 0x40000000
_SIOCGIFFLAGS = 0x8913
_SIOCSIFFLAGS = 0x8914
_IFF_UP = 0x1


class NamespaceError(Error, OSError):
    """A network namespace could not be made or joined."""


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def loopback_up() -> None:
    """Bring this namespace's `lo` interface up (a new namespace starts with it down)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH", b"lo", 0)
        flags = struct.unpack("16sH", fcntl.ioctl(sock, _SIOCGIFFLAGS, request)[:18])[1]
        fcntl.ioctl(sock, _SIOCSIFFLAGS, struct.pack("16sH", b"lo", flags | _IFF_UP))


def isolate() -> None:
    """Move this process into a new network namespace holding only `lo`, and bring `lo` up.

    Call it before starting threads. Sockets opened before keep their old namespace, which is
    how the forwarder listens outside while reaching the servers inside.
    """
    if sys.platform != "linux":
        raise NamespaceError(f"network namespaces need Linux, this is {sys.platform}")
    if _libc().unshare(_CLONE_NEWNET) != 0:
        errno = ctypes.get_errno()
        raise NamespaceError(errno, f"unshare(CLONE_NEWNET) failed: {os.strerror(errno)}")
    loopback_up()


def _probe() -> None:
    isolate()
    with socket.create_server(("127.0.0.1", 0)) as server:
        with socket.create_connection(server.getsockname(), timeout=2):
            print("ok")


@cache
def supported() -> tuple[bool, str]:
    """Whether a loopback-only namespace can be made here, and the reason if not.

    Tried once per process, in a short-lived child so this process stays where it is. The
    servers join the namespace with `nsenter`, so that program must exist too.
    """
    if sys.platform != "linux":
        return False, f"network namespaces need Linux, this is {sys.platform}"
    if shutil.which("nsenter") is None:
        return False, "the nsenter program (util-linux) is not installed"
    try:
        done = subprocess.run(
            [sys.executable, "-P", __file__, "--probe"], capture_output=True, text=True, timeout=20
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        return False, f"the namespace probe failed: {err}"
    if done.returncode == 0 and done.stdout.strip() == "ok":
        return True, ""
    lines = done.stderr.strip().splitlines()
    return False, lines[-1] if lines else f"the namespace probe exited with {done.returncode}"


def join_command(pid: int) -> list[str]:
    """The command prefix that runs a program in the network namespace of process `pid`."""
    return ["nsenter", f"--net=/proc/{int(pid)}/ns/net", "--"]


if __name__ == "__main__" and sys.argv[1:] == ["--probe"]:
    # Run by file path (`python -P netns.py --probe`): stdlib only, so TF is never imported.
    _probe()
