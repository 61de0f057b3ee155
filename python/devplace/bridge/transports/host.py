"""The pipe transport's loop: a Python process of its own serves Julia's frames, calls Julia
back, and waits for its replies (the meaning of each request is `peer.Peer`'s).

Both sides run the same loop ("wait for the reply to my message, serving whatever else
arrives"), so callbacks nest: a request can call a Julia function, whose body can make requests
of its own, and so on, as deep as Python's recursion limit leaves room for (`STACK_HEADROOM`).
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from devplace.bridge import frames, wire
from devplace.bridge.peer import STACK_HEADROOM, Peer, ProtocolError, StreamClosed
from devplace.bridge.transports import shm

__all__ = ["PROTOCOL_VERSION", "STACK_HEADROOM", "Host", "ProtocolError", "StreamClosed"]

PROTOCOL_VERSION = frames.PROTOCOL_VERSION


class Host(Peer):
    """One connection to a Julia process over two pipes, arrays through shared memory."""

    def __init__(
        self,
        rfd: int,
        wfd: int,
        max_frame: int = frames.DEFAULT_MAX_FRAME,
        preload: Sequence[str] = (),
        shm_dir: str | None = None,
        shm_min: int = 0,
    ) -> None:
        super().__init__()
        self.reader = frames.FrameReader(rfd, max_frame)
        self.writer = frames.FrameWriter(wfd)
        self._seq = 0
        self.preload = tuple(preload)
        # Arrays to Julia through shared memory only when Julia asked for it (--shm-dir).
        self.outbox = shm.Outbox(shm_dir, shm_min) if shm_dir else None
        self.inbox = shm.Inbox()
        self._running: list[int] = []  # seqs of the requests being answered, outermost first
        self._dropped_callbacks: set[int] = set()  # callbacks whose answers nobody waits for

    # --- shared memory ----------------------------------------------------------------------
    def share(self, a: np.ndarray[Any, Any], dtype: np.dtype[Any]) -> tuple[str, int, int] | None:
        return None if self.outbox is None else self.outbox.write(a, dtype)

    def shared_array(
        self, dtype: np.dtype[Any], shape: tuple[int, ...], path: str, offset: int, stamp: int
    ) -> Any:
        self.inbox.in_place = self.in_place
        try:
            return self.inbox.read(dtype, shape, path, offset, stamp)
        except shm.SegmentError as err:
            raise wire.DecodeError(str(err)) from None

    def discard_shared(self) -> None:
        if self.outbox is not None:
            self.outbox.discard()

    # --- sending ----------------------------------------------------------------------------
    def _send(self, kind: int, seq: int, body: list[Any]) -> None:
        dropped = self.take_dropped()
        if dropped:
            self.writer.write(frames.RELEASE, 0, [wire.encode_bytes(dropped)])
        self.writer.write(kind, seq, body)
        if self.outbox is not None and self.outbox.pending():
            self.outbox.fill()  # Julia copies each array out behind this (shm.py)

    # --- receiving --------------------------------------------------------------------------
    def _next(self) -> tuple[int, int, memoryview]:
        try:
            frame = self.reader.read()
        except frames.FrameError as err:
            raise StreamClosed(f"devplace bridge: {err}", 2) from None
        if frame is None:
            raise StreamClosed("", 0)
        if self.outbox is not None:  # Julia sends only after it has read what we sent
            self.outbox.start_message()
        return frame

    def _serve(self, kind: int, seq: int, body: memoryview) -> None:
        """Handle a frame that is not the reply being waited for."""
        if kind == frames.RELEASE:
            try:
                self.release(body)
            except Exception as exc:
                error = ProtocolError(f"bad release list: {exc}")
                self._send(frames.ERROR, seq, self.error_buffers(error))
            return
        if kind == frames.ABANDON:
            self.abandoned(seq)
            return
        if kind in (frames.REPLY, frames.ERROR) and seq in self._dropped_callbacks:
            self._dropped_callbacks.discard(seq)
            self._drop_answer(body)
            return
        if kind != frames.REQUEST:
            error = ProtocolError(f"unexpected frame kind {kind} (seq {seq})")
            self._send(frames.ERROR, seq, self.error_buffers(error))
            return
        self._running.append(seq)
        try:
            kind, buffers = self.answer(body)
        finally:
            self._running.pop()
        self._send(kind, seq, buffers)

    def abandoned(self, seq: int) -> None:
        """Julia stopped waiting for request `seq` (Ctrl-C; its SIGINT came first). Where that
        request still runs, and the SIGINT found only the bridge's code (a callback's wait, the
        request's decoding), its code is stopped now: the frame is read in a callback's wait,
        whose `KeyboardInterrupt` unwinds the request, so nothing Julia sends later is served
        inside it. Else the SIGINT was for an answer already sent, and is forgotten."""
        self.interrupt_pending = False
        if seq in self._running:
            raise KeyboardInterrupt

    def _drop_answer(self, body: memoryview) -> None:
        """Read and forget a late answer to a callback whose request was abandoned."""
        try:
            wire.decode(body, self)
        except Exception:  # noqa: BLE001, S110 - nobody waits for it, nor for its faults
            pass

    def serve_forever(self) -> int:
        """Serve until Julia closes the stream; the exit code (0 clean, 2 broken stream)."""
        hello = {"protocol": PROTOCOL_VERSION, "pid": os.getpid(), "python": sys.version}
        try:
            kind, buffers = self.value_buffers(hello)
            self._send(frames.HELLO if kind == frames.REPLY else kind, 0, buffers)
        except BrokenPipeError:  # Julia exited before it needed this host
            return 0
        # Julia is ready to send requests now; modules it will need (TensorFlow: seconds) load
        # while it compiles its first call or the user types it. A failure shows on first use.
        for name in self.preload:
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001 - the request that needs it reports it
                pass
        try:
            if self.preload:  # an empty RELEASE: start-up is over (Julia's bound on it ends)
                self.writer.write(frames.RELEASE, 0, [wire.encode_bytes([])])
            while True:
                self._serve(*self._next())
        except BrokenPipeError:  # Julia closed its end while we answered: it left
            return 0
        except StreamClosed as closed:
            if closed.code and str(closed):
                print(str(closed), file=sys.stderr)
            return closed.code
        finally:
            if self.outbox is not None:
                self.outbox.close()

    # --- callbacks into Julia -----------------------------------------------------------------
    def exchange_callback(self, call: tuple[Any, ...]) -> tuple[int, Any]:
        """Once the CALLBACK is sent nothing but its REPLY or ERROR (or the end of the stream)
        ends the wait: `_serve` answers every nested request meanwhile."""
        self._seq = (self._seq + 1) & 0xFFFFFFFF
        seq = self._seq
        enc = self.encode(call)  # fails here, in Python, before anything is sent
        self._send(frames.CALLBACK, seq, enc.buffers())
        while True:
            kind, rseq, body = self._next()
            if kind in (frames.REPLY, frames.ERROR) and rseq not in self._dropped_callbacks:
                if rseq != seq:  # the peer lost count: nothing after this can be trusted
                    raise StreamClosed(
                        f"devplace bridge: reply to callback {rseq} while waiting for {seq}", 2
                    )
                value = wire.decode(body, self)
                self.raise_pending_interrupt()  # Julia was interrupted after it answered
                return kind, value
            try:
                self._serve(kind, rseq, body)
            except KeyboardInterrupt:  # the request was abandoned: this answer comes too late
                self._dropped_callbacks.add(seq)
                raise
