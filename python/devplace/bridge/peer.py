"""What Julia's requests mean, whatever carries them (docs/protocol.md, "Requests").

A `Peer` holds the objects Julia refers to (the handle table), is the codec's context, answers
one request body with a reply or an error, and calls Julia back. Two transports carry its
messages: `host.Host` (a Python process of its own, frames on pipes, large arrays in shared
memory) and `inprocess.InProcess` (Julia's own process: calls through libpython's C API, large
arrays by address). Each supplies how arrays are shared and how a callback reaches Julia.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

import numpy as np

from devplace.bridge import error_text, frames, wire
from devplace.bridge.callbacks import CallbackDepthError, JuliaError, JuliaFunction
from devplace.bridge.handles import HandleTable
from devplace.bridge.requests import BY_HANDLE, FLAGS, IN_PLACE, OPERATIONS, ByHandle, opcode_name
from devplace.core.errors import Error

__all__ = ["STACK_HEADROOM", "Peer", "ProtocolError", "StreamClosed"]

#: Python frames a callback into Julia leaves free below the recursion limit: every level below
#: must still be able to catch an error, format it and send it back, or Julia's replies would
#: be abandoned mid-wait (the cause of "reply to N while waiting for M").
STACK_HEADROOM = 120


def _descend(n: int) -> int:
    return n and _descend(n - 1)


def headroom_left(n: int) -> bool:
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
    """The transport to Julia ended or broke; serving must stop. Not an `Exception`, so library
    code that catches `Exception` while a callback runs cannot swallow it."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


class Peer:
    """Julia's counterpart: handle table, codec context, answers, callbacks into Julia."""

    def __init__(self) -> None:
        self.handles = HandleTable()
        self.julia_functions = 0  # live JuliaFunction proxies
        self._dropped: list[int] = []
        self._thread = threading.get_ident()
        self._depth = 0  # callbacks into Julia now waiting for their reply
        self.interruptible = False  # True while a request's own code runs (not the bridge's)
        self.interrupt_pending = False  # Ctrl-C came while the bridge's own code ran
        self.in_place = False  # decoding a request sent with IN_PLACE

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
        """Where the transport puts a large array for Julia, or None: by value."""
        return None

    def shared_array(
        self, dtype: np.dtype[Any], shape: tuple[int, ...], path: str, offset: int, stamp: int
    ) -> Any:
        raise wire.DecodeError("this transport does not take shared arrays")

    def discard_shared(self) -> None:
        """A message that failed to encode: forget the arrays `share` placed for it."""

    # --- answers ----------------------------------------------------------------------------
    def drop_julia(self, id: int) -> None:
        """Called when a JuliaFunction proxy dies (maybe inside GC): queue the release."""
        self.julia_functions -= 1
        self._dropped.append(id)

    def take_dropped(self) -> list[int]:
        """The Julia functions released since the last call (for Julia to forget)."""
        dropped, self._dropped = self._dropped, []
        return dropped

    def encode(self, value: Any) -> wire.Encoder:
        """`value` encoded; nothing the transport placed for it stays behind if it cannot be."""
        enc = wire.Encoder(self)
        try:
            wire.encode(value, enc)
        except BaseException:
            self.discard_shared()
            raise
        return enc

    def error_buffers(self, exc: BaseException) -> list[Any]:
        """ERROR `(type, message, traceback, julia_id)`: `julia_id` numbers the Julia exception
        a `JuliaError` carries (else None), so Julia can throw that exception again."""
        julia_id = exc.julia_id if isinstance(exc, JuliaError) else None
        return [wire.encode_bytes((*error_text.describe(exc), julia_id))]

    def value_buffers(self, value: Any) -> tuple[int, list[Any]]:
        """REPLY with `value`; one that cannot be encoded becomes an ERROR instead."""
        try:
            return frames.REPLY, self.encode(value).buffers()
        except Exception as exc:  # e.g. nesting too deep: report instead of a half message
            return frames.ERROR, self.error_buffers(exc)

    def stats(self) -> dict[str, int]:
        return {
            "handles": len(self.handles),
            "julia_functions": self.julia_functions,
            "pid": os.getpid(),
        }

    def release(self, body: memoryview) -> None:
        """A RELEASE body: handle ids Julia no longer uses."""
        self.handles.release(wire.decode(body))

    def answer(self, body: memoryview) -> tuple[int, list[Any]]:
        """The answer to one REQUEST body (opcode + argument tuple): REPLY or ERROR, and its
        buffers. Every failure of the request becomes an ERROR."""
        try:
            if len(body) < 1:
                raise ProtocolError("request without an opcode")
            op = body[0]
            entry = OPERATIONS.get(op & ~FLAGS)
            if entry is None:
                raise ProtocolError(f"unknown opcode {op}")
            name, fn = entry
            self.in_place = bool(op & IN_PLACE)
            try:
                args = wire.decode(body[1:], self)
            finally:
                self.in_place = False
            if type(args) is not tuple:
                raise ProtocolError(f"{name}: arguments must be a tuple, got {type(args).__name__}")
            result = self.stats() if fn is None else self._run(fn, args)
            if op & BY_HANDLE:
                result = ByHandle(result)
        except StreamClosed:
            raise
        except BaseException as exc:  # noqa: BLE001 - every failure goes back to Julia
            if isinstance(exc, TypeError) and len(body) and exc.__traceback__ is not None:
                if exc.__traceback__.tb_next is None:  # the operation itself was misused
                    exc = TypeError(f"{opcode_name(body[0])}: {exc}")
            return frames.ERROR, self.error_buffers(exc)
        return self.value_buffers(result)

    def _run(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> Any:
        """Run a request's operation; Ctrl-C forwarded by Julia may interrupt it (only it)."""
        outer, self.interruptible = self.interruptible, True
        try:
            if self.interrupt_pending:  # one came while the request was read
                self.raise_pending_interrupt()
            return fn(*args)
        finally:
            self.interruptible = outer
            self.after_run()

    def after_run(self) -> None:
        """A request's operation has returned or raised (the transport's hook; no frame of its
        own while the operation runs, so callbacks nest as deep as before)."""

    def interrupt(self, signum: int, frame: FrameType | None) -> None:
        """SIGINT handler: interrupt the running request, never the bridge's own IO (there
        the interrupt waits for the request's code: `raise_pending_interrupt`)."""
        if self.interruptible:
            raise KeyboardInterrupt
        self.interrupt_pending = True

    def raise_pending_interrupt(self) -> None:
        """Raise the Ctrl-C that came while the bridge's own code ran, if one did."""
        if self.interrupt_pending:
            self.interrupt_pending = False
            raise KeyboardInterrupt

    # --- callbacks into Julia -----------------------------------------------------------------
    def call_julia(
        self,
        fn: JuliaFunction,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        op_info: tuple[str, str, str] | None = None,
    ) -> Any:
        """Call a Julia function and return its result (requests it makes meanwhile are
        served); a Julia exception raises `JuliaError`. A callback made inside another that
        would leave less than `STACK_HEADROOM` frames for that is refused before it is sent."""
        if threading.get_ident() != self._thread:
            return self.call_from_thread(fn, args, kwargs)
        if self._depth and not headroom_left(STACK_HEADROOM):  # 1 µs: only where callbacks nest
            limit = sys.getrecursionlimit()
            raise CallbackDepthError(
                f"Julia function {fn.name}: callbacks between Julia and Python are nested "
                f"{self._depth} deep, as deep as Python's recursion limit ({limit} frames) "
                "allows. Hint: recurse in Julia or in Python instead of through the bridge, or "
                "raise the limit (sys.setrecursionlimit)"
            )
        call = (fn.id, args, kwargs) if op_info is None else (fn.id, args, kwargs, op_info)
        outer, self.interruptible = self.interruptible, False
        self._depth += 1
        try:
            kind, value = self.exchange_callback(call)
        finally:
            self._depth -= 1
            self.interruptible = outer
        if kind == frames.REPLY:
            return value
        raise JuliaError(*value)

    def call_on_op(self, fn: JuliaFunction, op: Any) -> Any:
        """A Julia device function called for `op` (a `tf.Operation`), its name, type and
        device sent along."""
        return self.call_julia(fn, (op,), {}, (op.name, op.type, op.device))

    def call_from_thread(
        self, fn: JuliaFunction, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        """A Julia function called on a thread other than Julia's (TensorFlow's, at run time)."""
        raise RuntimeError(
            f"Julia function {fn.name} was called from a Python thread other than the "
            "host's main thread; Julia callbacks only work on the main thread"
        )

    def exchange_callback(self, call: tuple[Any, ...]) -> tuple[int, Any]:
        """Send CALLBACK `call` to Julia and wait: (REPLY or ERROR, the decoded value)."""
        raise NotImplementedError
