"""Large numeric arrays through shared memory (docs/protocol.md, "Shared memory").

Each side writes the arrays of its messages into its own *outbox*, one file in the segment
folder (`/dev/shm`) kept mapped and reused, so no transfer pays for fresh pages (on a virtual
machine a fresh tmpfs page costs more than copying it); the frame carries only each array's
dtype, shape, path, offset and stamp. The receiver keeps the peer's outbox mapped and copies
each array out at once, or reads it in place until its reply for a request Julia sent with
`IN_PLACE` (Julia's `run`: no copy of the feeds). The host writes its arrays after it sent the
frame, in chunks, each followed by how much is written (`ready`), so that Julia copies out while
the host writes (`Outbox.fill`). A side writes its outbox again only after the peer sent a frame,
so after it decoded the last message; the stamp written before each array makes a later
overwrite an error, never wrong data. DevPlace.jl's `shm.jl` is the other end. An outbox that
cannot be made or grown (no such folder, read-only, not enough space) leaves arrays to the pipe,
with one line on stderr saying why. Each outbox is locked (`flock`) while its owner lives: that,
not its process id (which another PID namespace sharing the folder reads as another process),
tells Julia's cleaner which outboxes are left over (`shm.jl`, `clean_stale_segments`).
"""

from __future__ import annotations

import errno
import fcntl
import mmap
import os
import platform
import struct
import sys
from typing import Any

import numpy as np

from devplace.bridge.protocol import SHM, segment_name
from devplace.core.errors import Error

__all__ = ["PREFIX", "Inbox", "Outbox", "SegmentError"]

PREFIX = str(SHM["PREFIX"])
_STAMP = struct.Struct("<Q")
#: Before each array: how many of its bytes are written (`ready`), then its stamp.
_HEAD = int(SHM["HEAD_BYTES"])
#: Arrays start 64-byte aligned: TensorFlow feeds an array in place only then (Eigen's alignment).
ALIGN = int(SHM["ARRAY_ALIGN"])
#: `fill` publishes its progress after about this many bytes.
CHUNK = 1 << 20
#: Stores become visible to the other core in program order (x86's TSO), so a reader may copy
#: what `ready` says is written while the rest is still being written. Elsewhere a message's
#: arrays are written whole before it is sent.
_PROGRESSIVE = platform.machine().lower() in ("x86_64", "amd64")
#: Names tried for a new outbox: a process of another PID namespace may hold ours.
_NAMES = int(SHM["OUTBOX_NAMES"])


class SegmentError(Error, ValueError):
    """A shared-array description that does not name a readable array."""


class Outbox:
    """This side's outbox in `folder`, for arrays of at least `min_bytes` (0: never)."""

    def __init__(self, folder: str, min_bytes: int) -> None:
        self.folder = folder
        self.min_bytes = min_bytes
        self.path = ""
        self._count = 0
        self._fd = -1
        self._map: mmap.mmap | None = None
        self._used = 0
        self._stamp = 0
        self._told: set[str] = set()
        self._unwritten: list[tuple[int, np.ndarray[Any, Any], np.dtype[Any]]] = []

    def start_message(self) -> None:
        """The peer has read everything sent so far: the next message may reuse the space."""
        self._used = 0

    def write(self, a: np.ndarray[Any, Any], dtype: np.dtype[Any]) -> tuple[str, int, int] | None:
        """Place `a` as `dtype` (little-endian), column-major, after the message's earlier
        arrays; its (path, offset, stamp), or None (said once why) to send it by value. Its
        bytes are written by `fill`, after the message is sent, where that is safe; else now."""
        if self.min_bytes <= 0 or a.nbytes < self.min_bytes:
            return None
        if self._used == 0 and self._fd >= 0 and not _names_file(self.path, self._fd):
            self._drop()  # deleted under us: Julia could not open it; a new one, then
        offset = -(-(self._used + _HEAD) // ALIGN) * ALIGN
        need = offset + a.nbytes
        if (self._map is None or need > len(self._map)) and not self._grow(need):
            return None
        assert self._map is not None
        self._stamp += 1
        _STAMP.pack_into(self._map, offset - _STAMP.size, self._stamp)
        _STAMP.pack_into(self._map, offset - _HEAD, 0)  # nothing written yet
        self._unwritten.append((offset, a, dtype))
        self._used = need
        if not _PROGRESSIVE:
            self.fill()
        return self.path, offset, self._stamp

    def fill(self) -> None:
        """Write the arrays of the message just placed, in column-major chunks of about `CHUNK`
        bytes, each followed by its array's `ready` count: the peer copies out behind it."""
        unwritten, self._unwritten = self._unwritten, []
        m = self._map
        for offset, a, dtype in unwritten:
            assert m is not None
            dest: np.ndarray[Any, Any] = np.ndarray(
                a.shape, dtype, buffer=m, offset=offset, order="F"
            )
            # Column-major: a slice of the last dimension is one contiguous piece of `dest`.
            last = a.shape[-1]
            step = max(1, CHUNK * last // max(a.nbytes, 1))
            for start in range(0, last, step):
                stop = min(start + step, last)
                dest[..., start:stop] = a[..., start:stop]
                _STAMP.pack_into(m, offset - _HEAD, a.nbytes * stop // last)
            del dest

    def pending(self) -> bool:
        """Whether arrays placed for the last message are still to be written (`fill`)."""
        return bool(self._unwritten)

    def discard(self) -> None:
        """Forget the arrays placed for a message that will not be sent (encoding failed)."""
        self._unwritten = []

    def _grow(self, need: int) -> bool:
        """Reserve `need` bytes or more (before mapping: writing a mapped file that does not fit
        is SIGBUS, not an error) and map them."""
        try:
            if self._fd < 0:
                self._fd = self._create()
            size = max(need, 2 * (len(self._map) if self._map is not None else 0))
            try:
                os.posix_fallocate(self._fd, 0, size)
            except OSError:
                size = need  # no room to spare: exactly what is needed, then
                os.posix_fallocate(self._fd, 0, size)
            new = mmap.mmap(self._fd, size)
        except OSError as err:
            what = "cannot create" if self._fd < 0 else "cannot reserve"
            self._refuse(what, f"{what} {self.path} ({need} bytes): {err.strerror}", err)
            return False
        if self._map is not None:
            self._map.close()
        self._map = new
        return True

    def _create(self) -> int:
        """A new outbox file, locked as long as this process lives (the sign that it does)."""
        for _ in range(_NAMES):
            self._count += 1
            self.path = os.path.join(self.folder, segment_name(os.getpid(), self._count))
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
            except FileExistsError:
                continue  # a process of another PID namespace
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                if _names_file(self.path, fd):  # else a cleaner took it before the lock
                    return fd
            except BlockingIOError:
                pass
            os.close(fd)
        raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), self.path)

    def _drop(self) -> None:
        """Unmap and close the outbox; the next array makes a new one."""
        if self._map is not None:
            self._map.close()
            self._map = None
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def close(self) -> None:
        """Delete the outbox (the host exits), unmap and close it."""
        if self._fd >= 0 and _names_file(self.path, self._fd):
            os.unlink(self.path)  # before the lock goes with the fd: no cleaner races us
        self._drop()

    def _refuse(self, what: str, reason: str, err: OSError) -> None:
        """Say `reason` once per kind of failure (`what`, errno)."""
        kind = f"{what}: {err.errno}"
        if kind not in self._told:
            self._told.add(kind)
            print(
                f"devplace: large arrays go through the pipe instead of shared memory ({reason})",
                file=sys.stderr,
                flush=True,
            )


def _names_file(path: str, fd: int) -> bool:
    """Whether `path` still names the file open as `fd` (not deleted, not replaced)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    own = os.fstat(fd)
    return (st.st_ino, st.st_dev) == (own.st_ino, own.st_dev)


class Inbox:
    """The peer's outbox, mapped once (again when it grew or changed); arrays are copied out,
    or, while `in_place` is set (a request Julia sent with `IN_PLACE`), read where they are."""

    def __init__(self) -> None:
        self.path = ""
        self.in_place = False
        self._map: mmap.mmap | None = None

    def read(
        self, dtype: np.dtype[Any], shape: tuple[int, ...], path: str, offset: int, stamp: int
    ) -> np.ndarray[Any, Any]:
        """A copy of the array at `offset` of `path`, checked against its `stamp`; with
        `in_place`, a read-only view of it instead (valid until the request's reply)."""
        if not os.path.basename(path).startswith(PREFIX):
            raise SegmentError(f"shared array path {path} is not a devplace segment")
        nbytes = dtype.itemsize * int(np.prod(shape, dtype=object))
        if offset < _HEAD:
            raise SegmentError(f"shared array offset {offset} is out of range")
        if self._map is None or path != self.path or len(self._map) < offset + nbytes:
            self._remap(path, offset + nbytes)
        m = self._map
        assert m is not None
        if _STAMP.unpack_from(m, offset - _STAMP.size)[0] != stamp:
            raise SegmentError(f"shared array in {path} was overwritten before it was read")
        if _STAMP.unpack_from(m, offset - _HEAD)[0] != nbytes:  # Julia writes before it sends
            raise SegmentError(f"shared array in {path} is not written whole")
        out = np.ndarray(shape, dtype, buffer=m, offset=offset, order="F")
        if self.in_place:
            return out
        out = out.copy(order="F")
        if _STAMP.unpack_from(m, offset - _STAMP.size)[0] != stamp:
            raise SegmentError(f"shared array in {path} was overwritten while it was read")
        return out

    def _remap(self, path: str, need: int) -> None:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError as err:
            raise SegmentError(f"cannot open shared array {path}: {err.strerror}") from None
        try:
            size = os.fstat(fd).st_size
            if size < need:
                raise SegmentError(f"shared arrays file {path} holds {size} bytes, {need} expected")
            new = mmap.mmap(fd, size, prot=mmap.PROT_READ)
        finally:
            os.close(fd)
        # The old mapping is not closed but dropped: an array read in place keeps it (numpy
        # holds the mmap as its base), and it is unmapped when the last such array goes.
        self._map, self.path = new, path
