"""The host's request loop: serve Julia's requests, call Julia back, and wait for its replies.

Both sides run the same loop ("wait for the reply to my message, serving whatever else
arrives"), so callbacks nest: a request can call a Julia function, whose body can make requests
of its own, and so on, as deep as Python's recursion limit leaves room for (`STACK_HEADROOM`).
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
from collections.abc import Callable, Sequence
from types import FrameType
from typing import Any

import numpy as np

from devplace.bridge import error_text, frames, shm, wire
from devplace.bridge.callbacks import CallbackDepthError, JuliaError, JuliaFunction
from devplace.bridge.handles import HandleTable
from devplace.bridge.requests import BY_HANDLE, FLAGS, IN_PLACE, OPERATIONS, ByHandle, opcode_name
from devplace.errors import Error

__all__ = ["PROTOCOL_VERSION", "STACK_HEADROOM", "Host", "ProtocolError", "StreamClosed"]

PROTOCOL_VERSION = 4

#: Python frames a callback into Julia leaves free below the recursion limit: every level below
#: must still be able to catch an error, format it and send it back, or Julia's replies would
#: be abandoned mid-wait (the cause of "reply to N while waiting for M").
STACK_HEADROOM = 120


def _descend(n: int) -> int:
    return n and _descend(n - 1)


def _headroom_left(n: int) -> bool:
    """Can `n` more nested calls be made before the recursion limit? (C-level calls count
    towards the limit too, so counting frames is not enough: this tries, unless the stack holds
    fewer Python frames than a quarter of the limit, where the C calls between them cannot fill
    the rest: trying costs more than the callback's round trip.)"""
    try:
        sys._getframe(sys.getrecursionlimit() // 4)
    except ValueError:
        return True
    try:
        _descend(n)
    except RecursionError:
        return False
    return True


class ProtocolError(Error):
    """A well-framed message that breaks the protocol (bad kind, opcode or body)."""


class StreamClosed(BaseException):
    """The frame stream ended or broke; the host must exit. Not an `Exception`, so library code
    that catches `Exception` while a callback runs cannot swallow it."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


class Host:
    """One connection to a Julia process: handle table, callbacks, and the loop."""

    def __init__(
        self,
        rfd: int,
        wfd: int,
        max_frame: int = frames.DEFAULT_MAX_FRAME,
        preload: Sequence[str] = (),
        shm_dir: str | None = None,
        shm_min: int = 0,
    ) -> None:
        self.reader = frames.FrameReader(rfd, max_frame)
        self.writer = frames.FrameWriter(wfd)
        self.handles = HandleTable()
        self.julia_functions = 0  # live JuliaFunction proxies
        self._dropped: list[int] = []
        self._seq = 0
        self._thread = threading.get_ident()
        self.preload = tuple(preload)
        self._depth = 0  # callbacks into Julia now waiting for their reply
        self.interruptible = False  # True while a request's own code runs (not the bridge's)
        # Arrays to Julia through shared memory only when Julia asked for it (--shm-dir).
        self.outbox = shm.Outbox(shm_dir, shm_min) if shm_dir else None
        self.inbox = shm.Inbox()

    # --- the codec's context --------------------------------------------------------------
    def to_handle(self, obj: Any) -> int:
        return self.handles.put(obj.obj if type(obj) is ByHandle else obj)

    def from_handle(self, id: int) -> Any:
        return self.handles.get(id)

    def julia_function(self, id: int, name: str) -> JuliaFunction:
        self.julia_functions += 1
        return JuliaFunction(self, id, name)

    def julia_id(self, obj: Any) -> int | None:
        if type(obj) is JuliaFunction and obj._caller is self:
            return obj.id
        return None

    def share(self, a: np.ndarray[Any, Any], dtype: np.dtype[Any]) -> tuple[str, int, int] | None:
        return None if self.outbox is None else self.outbox.write(a, dtype)

    def shared_array(
        self, dtype: np.dtype[Any], shape: tuple[int, ...], path: str, offset: int, stamp: int
    ) -> Any:
        try:
            return self.inbox.read(dtype, shape, path, offset, stamp)
        except shm.SegmentError as err:
            raise wire.DecodeError(str(err)) from None

    # --- sending ----------------------------------------------------------------------------
    def drop_julia(self, id: int) -> None:
        """Called when a JuliaFunction proxy dies (maybe inside GC): queue the release."""
        self.julia_functions -= 1
        self._dropped.append(id)

    def _send(self, kind: int, seq: int, body: list[Any]) -> None:
        if self._dropped:
            dropped, self._dropped = self._dropped, []
            self.writer.write(frames.RELEASE, 0, [wire.encode_bytes(dropped)])
        self.writer.write(kind, seq, body)
        if self.outbox is not None and self.outbox.pending():
            self.outbox.fill()  # Julia copies each array out behind this (shm.py)

    def _encode(self, value: Any) -> wire.Encoder:
        """`value` encoded; nothing placed in the outbox stays behind if it cannot be."""
        enc = wire.Encoder(self)
        try:
            wire.encode(value, enc)
        except BaseException:
            if self.outbox is not None:
                self.outbox.discard()
            raise
        return enc

    def _send_value(self, kind: int, seq: int, value: Any) -> None:
        """Send a REPLY (or HELLO); a value that cannot be encoded becomes an ERROR instead."""
        try:
            enc = self._encode(value)
        except Exception as exc:  # e.g. nesting too deep: report instead of a half message
            self._send_error(seq, exc)
            return
        self._send(kind, seq, enc.buffers())

    def _send_error(self, seq: int, exc: BaseException) -> None:
        """ERROR `(type, message, traceback, julia_id)`: `julia_id` numbers the Julia exception
        a `JuliaError` carries (else None), so Julia can throw that exception again."""
        julia_id = exc.julia_id if isinstance(exc, JuliaError) else None
        payload = (*error_text.describe(exc), julia_id)
        self._send(frames.ERROR, seq, [wire.encode_bytes(payload)])

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

    def _stats(self) -> dict[str, int]:
        return {
            "handles": len(self.handles),
            "julia_functions": self.julia_functions,
            "pid": os.getpid(),
        }

    def _serve(self, kind: int, seq: int, body: memoryview) -> None:
        """Handle a frame that is not the reply being waited for."""
        if kind == frames.RELEASE:
            try:
                self.handles.release(wire.decode(body))
            except Exception as exc:
                self._send_error(seq, ProtocolError(f"bad release list: {exc}"))
            return
        if kind != frames.REQUEST:
            self._send_error(seq, ProtocolError(f"unexpected frame kind {kind} (seq {seq})"))
            return
        try:
            if len(body) < 1:
                raise ProtocolError("request without an opcode")
            op = body[0]
            entry = OPERATIONS.get(op & ~FLAGS)
            if entry is None:
                raise ProtocolError(f"unknown opcode {op}")
            name, fn = entry
            self.inbox.in_place = bool(op & IN_PLACE)
            try:
                args = wire.decode(body[1:], self)
            finally:
                self.inbox.in_place = False
            if type(args) is not tuple:
                raise ProtocolError(f"{name}: arguments must be a tuple, got {type(args).__name__}")
            result = self._stats() if fn is None else self._run(fn, args)
            if op & BY_HANDLE:
                result = ByHandle(result)
        except StreamClosed:
            raise
        except BaseException as exc:  # noqa: BLE001 - every failure goes back to Julia
            if isinstance(exc, TypeError) and len(body) and exc.__traceback__ is not None:
                if exc.__traceback__.tb_next is None:  # the operation itself was misused
                    exc = TypeError(f"{opcode_name(body[0])}: {exc}")
            self._send_error(seq, exc)
            return
        self._send_value(frames.REPLY, seq, result)

    def _run(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> Any:
        """Run a request's operation; Ctrl-C forwarded by Julia may interrupt it (only it)."""
        outer, self.interruptible = self.interruptible, True
        try:
            return fn(*args)
        finally:
            self.interruptible = outer

    def interrupt(self, signum: int, frame: FrameType | None) -> None:
        """SIGINT handler: interrupt the running request, never the bridge's own IO."""
        if self.interruptible:
            raise KeyboardInterrupt

    def serve_forever(self) -> int:
        """Serve until Julia closes the stream; the exit code (0 clean, 2 broken stream)."""
        hello = {"protocol": PROTOCOL_VERSION, "pid": os.getpid(), "python": sys.version}
        try:
            self._send_value(frames.HELLO, 0, hello)
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
    def call_julia(
        self,
        fn: JuliaFunction,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        op_info: tuple[str, str, str] | None = None,
    ) -> Any:
        """Call a Julia function and wait for its result, serving nested requests meanwhile.

        Once the CALLBACK is sent nothing but its REPLY or ERROR (or the end of the stream)
        ends the wait: `_serve` answers every nested request itself, and a callback that would
        leave less than `STACK_HEADROOM` frames for that is refused before it is sent.
        """
        if threading.get_ident() != self._thread:
            raise RuntimeError(
                f"Julia function {fn.name} was called from a Python thread other than the "
                "host's main thread; Julia callbacks only work on the main thread"
            )
        if not _headroom_left(STACK_HEADROOM):
            limit = sys.getrecursionlimit()
            raise CallbackDepthError(
                f"Julia function {fn.name}: callbacks between Julia and Python are nested "
                f"{self._depth} deep, as deep as Python's recursion limit ({limit} frames) "
                "allows. Hint: recurse in Julia or in Python instead of through the bridge, or "
                "raise the limit in the host (sys.setrecursionlimit)"
            )
        self._seq = (self._seq + 1) & 0xFFFFFFFF
        seq = self._seq
        outer, self.interruptible = self.interruptible, False
        self._depth += 1
        try:
            return self._await_reply(fn, seq, args, kwargs, op_info)
        finally:
            self._depth -= 1
            self.interruptible = outer

    def _await_reply(
        self,
        fn: JuliaFunction,
        seq: int,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        op_info: tuple[str, str, str] | None,
    ) -> Any:
        call = (fn.id, args, kwargs) if op_info is None else (fn.id, args, kwargs, op_info)
        enc = self._encode(call)  # fails here, in Python, before anything is sent
        self._send(frames.CALLBACK, seq, enc.buffers())
        while True:
            kind, rseq, body = self._next()
            if kind in (frames.REPLY, frames.ERROR):
                if rseq != seq:  # the peer lost count: nothing after this can be trusted
                    raise StreamClosed(
                        f"devplace bridge: reply to callback {rseq} while waiting for {seq}", 2
                    )
                value = wire.decode(body, self)
                if kind == frames.REPLY:
                    return value
                raise JuliaError(*value)
            self._serve(kind, rseq, body)
