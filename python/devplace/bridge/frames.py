"""Length-prefixed frames on a pair of file descriptors (docs/protocol.md, "Frames").

A frame is `u32 length | u8 kind | u32 seq | body`, where `length` counts the bytes after
itself. Reading never trusts `length` for an allocation larger than the data that arrived.
"""

from __future__ import annotations

import os
import select
import struct
import time
from typing import Any

from devplace.bridge.protocol import FRAMES
from devplace.core.errors import Error

__all__ = [
    "ABANDON",
    "CALLBACK",
    "ERROR",
    "HELLO",
    "RELEASE",
    "REPLY",
    "REQUEST",
    "FrameError",
    "FrameReader",
    "FrameWriter",
]

# Frame kinds (protocol.tsv says what each carries).
REQUEST = FRAMES["REQUEST"]
REPLY = FRAMES["REPLY"]
ERROR = FRAMES["ERROR"]
CALLBACK = FRAMES["CALLBACK"]
RELEASE = FRAMES["RELEASE"]
HELLO = FRAMES["HELLO"]
ABANDON = FRAMES["ABANDON"]
#: HELLO's protocol version; both ends refuse another.
PROTOCOL_VERSION = FRAMES["PROTOCOL_VERSION"]
KINDS = frozenset((REQUEST, REPLY, ERROR, CALLBACK, RELEASE, HELLO, ABANDON))

HEADER = struct.Struct("<IBI")
#: Bytes of kind + seq, counted in `length`.
MIN_LENGTH = FRAMES["HEADER_BYTES"]
#: Largest frame either side sends or accepts (bytes after the length field, docs/protocol.md):
#: a longer one is refused at once, not waited for.
DEFAULT_MAX_FRAME = 1 << 31
#: Frames up to this size are read straight into one buffer; larger ones grow with the data.
_DIRECT = 1 << 28
_CHUNK = 1 << 24
_READ_SIZE = 1 << 16
#: Microseconds a reader polls before it blocks (env DEVPLACE_SPIN_US overrides; 0: never).
DEFAULT_SPIN_US = float(os.environ.get("DEVPLACE_SPIN_US", "250"))


class FrameError(Error):
    """The byte stream is not a sequence of frames any more (the stream is unusable)."""


class FrameReader:
    """Reads frames from a file descriptor, spinning briefly before it blocks.

    `spin_us`: how long to poll without sleeping when no data is buffered before blocking in
    `read(2)`. Waking a blocked process costs 25-50 µs on a virtual machine, more than the
    rest of a round trip; the next request usually arrives within microseconds.
    """

    def __init__(
        self, fd: int, max_frame: int = DEFAULT_MAX_FRAME, spin_us: float = DEFAULT_SPIN_US
    ) -> None:
        self.fd = fd
        self.max_frame = max_frame
        self.spin_s = max(0.0, spin_us) * 1e-6
        self._poll = select.poll()
        self._poll.register(fd, select.POLLIN)
        self._buf = b""
        self._pos = 0

    def _await_data(self) -> None:
        """Return once `fd` has data (or hit its end): spin up to `spin_s`, then block."""
        if not self.spin_s or self._poll.poll(0):
            return
        end = time.perf_counter() + self.spin_s
        while time.perf_counter() < end:
            if self._poll.poll(0):
                return
            os.sched_yield()  # a busy core goes to Julia

    def _fill(self) -> bool:
        """Refill the empty buffer with one `read(2)`; False at end of stream."""
        self._await_data()
        self._buf = os.read(self.fd, _READ_SIZE)
        self._pos = 0
        return bool(self._buf)

    def _into(self, view: memoryview) -> int:
        """Read into `view` (buffered bytes first, big reads straight in); 0 at end of stream."""
        if self._pos == len(self._buf):
            if view.nbytes >= _READ_SIZE:
                self._await_data()
                return os.readv(self.fd, [view])
            if not self._fill():
                return 0
        k = min(view.nbytes, len(self._buf) - self._pos)
        view[:k] = self._buf[self._pos : self._pos + k]
        self._pos += k
        return k

    def _filled(self, view: memoryview) -> int:
        """Fill `view`; fewer bytes only at end of stream."""
        got = 0
        while got < view.nbytes:
            k = self._into(view[got:])
            if not k:
                break
            got += k
        return got

    def _exactly(self, n: int) -> bytearray | None:
        """`n` bytes, or None at a clean end of stream before the first byte."""
        if n > _DIRECT:
            return self._grown(n)
        out = bytearray(n)
        got = self._filled(memoryview(out))
        if got == n:
            return out
        if got == 0:
            return None
        raise FrameError(f"stream ended inside a frame: got {got} of {n} bytes")

    def _grown(self, n: int) -> bytearray:
        """`n` bytes of a huge frame, growing with the data, not with the claimed length."""
        out = bytearray()
        while len(out) < n:
            chunk = bytearray(min(_CHUNK, n - len(out)))
            k = self._filled(memoryview(chunk))
            out += memoryview(chunk)[:k]
            if k < len(chunk):
                raise FrameError(f"stream ended inside a frame: got {len(out)} of {n} bytes")
        return out

    def read(self) -> tuple[int, int, memoryview] | None:
        """The next `(kind, seq, body)`, or None when the peer closed the stream."""
        head = self._exactly(4)
        if head is None:
            return None
        (length,) = struct.unpack("<I", head)
        if length < MIN_LENGTH:
            raise FrameError(f"frame length {length} is shorter than its header ({MIN_LENGTH})")
        if length > self.max_frame:
            raise FrameError(f"frame of {length} bytes exceeds the limit of {self.max_frame}")
        data = self._exactly(length)
        if data is None:
            raise FrameError("stream ended after a frame length")
        kind, seq = struct.unpack_from("<BI", data, 0)
        return kind, seq, memoryview(data)[MIN_LENGTH:]


class FrameWriter:
    """Writes frames to a file descriptor."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def write(self, kind: int, seq: int, body: list[Any]) -> None:
        """Write one frame whose body is the concatenation of the buffers in `body`."""
        n = sum(memoryview(b).nbytes for b in body)
        if MIN_LENGTH + n > DEFAULT_MAX_FRAME:
            raise ValueError(
                f"message of {n} bytes is larger than a frame may be ({DEFAULT_MAX_FRAME} bytes, "
                "2 GiB); hint: fetch smaller arrays, or let large ones go through shared memory"
            )
        head = HEADER.pack(MIN_LENGTH + n, kind, seq)
        if n < 1 << 16:  # one write for the common small message
            self._write_all(b"".join([head, *body]))
            return
        self._write_all(head)
        for b in body:
            self._write_all(b)

    def _write_all(self, data: Any) -> None:
        view = memoryview(data).cast("B")
        k = os.write(self.fd, view)
        while k < view.nbytes:
            view = view[k:]
            k = os.write(self.fd, view)
