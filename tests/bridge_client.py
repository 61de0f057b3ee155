"""A Python client of the bridge host, speaking the frame protocol as DevPlace.jl does.

Used by the bridge tests and benchmarks to drive `python -m devplace.bridge` without Julia.
"""

from __future__ import annotations

import os
import select
import struct
import subprocess
import sys
from typing import Any

from devplace.bridge import frames, wire
from devplace.bridge.requests import CODES

#: Request name -> opcode (python/devplace/bridge/opcodes.tsv, the table both ends read).
OPCODES = CODES


class HostError(Exception):
    """An ERROR frame from the host."""

    def __init__(self, type_: str, message: str, tb: str, julia_id: int | None = None) -> None:
        super().__init__(f"{type_}: {message}")
        self.type, self.message, self.traceback = type_, message, tb
        self.julia_id = julia_id


class HostProcess:
    """`python -m devplace.bridge` as a subprocess, with a deadline on every read."""

    def __init__(self, *args: str, timeout: float = 30.0, env: dict[str, str] | None = None):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "devplace.bridge", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, **(env or {})},
        )
        self.timeout = timeout
        self.seq = 0
        self.callbacks: dict[int, Any] = {}
        self.released: list[int] = []
        self.stderr = ""  # what the host wrote to stderr, after close()
        kind, _, body = self.read_frame()
        assert kind == frames.HELLO, kind
        self.hello = wire.decode(body)

    # raw IO -----------------------------------------------------------------------------------
    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def _read_exactly(self, n: int) -> bytes:
        assert self.proc.stdout is not None
        out = bytearray()
        fd = self.proc.stdout.fileno()
        while len(out) < n:
            ready, _, _ = select.select([fd], [], [], self.timeout)
            if not ready:
                raise TimeoutError(f"host sent nothing for {self.timeout} s")
            chunk = os.read(fd, n - len(out))
            if not chunk:
                raise EOFError("host closed its frame pipe")
            out += chunk
        return bytes(out)

    def read_frame(self) -> tuple[int, int, bytes]:
        (length,) = struct.unpack("<I", self._read_exactly(4))
        data = self._read_exactly(length)
        kind, seq = struct.unpack_from("<BI", data)
        return kind, seq, data[5:]

    def read_message(self) -> tuple[int, int, bytes]:
        """The next frame other than RELEASE (whose ids are kept in `released`)."""
        while True:
            kind, seq, body = self.read_frame()
            if kind != frames.RELEASE:
                return kind, seq, body
            self.released.extend(int(i) for i in wire.decode(body))

    def send_frame(self, kind: int, seq: int, body: bytes) -> None:
        self.send_raw(frames.HEADER.pack(5 + len(body), kind, seq) + body)

    # protocol -----------------------------------------------------------------------------------
    def request(self, op: str | int, *args: Any, by_handle: bool = False) -> Any:
        """Send one request and wait for its reply, answering callbacks meanwhile."""
        return self.wait(self.send_request(op, *args, by_handle=by_handle))

    def send_request(self, op: str | int, *args: Any, by_handle: bool = False) -> int:
        """Send one request; its seq."""
        self.seq += 1
        code = OPCODES[op] if isinstance(op, str) else op
        if by_handle:
            code |= 0x80
        self.send_frame(frames.REQUEST, self.seq, bytes([code]) + wire.encode_bytes(tuple(args)))
        return self.seq

    def wait(self, seq: int) -> Any:
        while True:
            kind, rseq, body = self.read_message()
            if kind == frames.CALLBACK:
                fid, args, kwargs = wire.decode(body)
                try:
                    value = self.callbacks[fid](*args, **kwargs)
                except Exception as exc:
                    err = (type(exc).__name__, str(exc), "")
                    self.send_frame(frames.ERROR, rseq, wire.encode_bytes(err))
                else:
                    self.send_frame(frames.REPLY, rseq, wire.encode_bytes(value))
                continue
            assert rseq == seq, (rseq, seq)
            value = wire.decode(body)
            if kind == frames.ERROR:
                raise HostError(*value)
            assert kind == frames.REPLY, kind
            return value

    def release(self, ids: list[int]) -> None:
        self.send_frame(frames.RELEASE, 0, wire.encode_bytes(ids))

    def close(self) -> int:
        """Close the pipe and wait for the exit code."""
        if self.proc.stdin and not self.proc.stdin.closed:
            try:
                self.proc.stdin.close()
            except BrokenPipeError:
                pass
        try:
            return self.proc.wait(self.timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            if self.proc.stderr:
                self.stderr = self.proc.stderr.read().decode("utf-8", "replace")
            for f in (self.proc.stdout, self.proc.stderr):
                if f:
                    f.close()
