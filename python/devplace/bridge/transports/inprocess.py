"""The in-process transport: DevPlace.jl calls Python through libpython's C API in Julia's own
process (DevPlace.jl's `cpython.jl` and `inprocess.jl` are the other end).

Messages are the pipe transport's frame bodies (docs/protocol.md), handed over as byte
strings: Julia calls `InProcess.request` with a REQUEST body and gets the answer back; a
callback calls the Julia function that `start` was given. Large arrays go by address (a shared
array with an empty path; `offset` is the address, `stamp` 1 for row-major data): Julia's feeds
are read where Julia wrote them during an `IN_PLACE` request and copied otherwise, and what
Python sends Julia stays alive until Julia has copied it out.

TensorFlow's libraries are loaded with `RTLD_DEEPBIND`, so that their LLVM symbols bind to their
own copies rather than to the LLVM Julia links (the clash hangs the import); GCC's unwinder must
come first in the process (DevPlace.jl checks). A Julia function that TensorFlow calls on one
of its own threads (a `py_func`) runs on Julia's thread: a run of a graph that holds such ops
goes to a worker thread, and Julia's thread serves the calls until the run ends.
"""

from __future__ import annotations

import ctypes
import math
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from devplace.bridge import frames, wire
from devplace.bridge.callbacks import JuliaError, JuliaFunction
from devplace.bridge.peer import STACK_HEADROOM, Peer, StreamClosed, headroom_left
from devplace.bridge.transports import numpy_memory

__all__ = ["InProcess", "start"]

#: What `request` returns: the answer, the arrays it points into, the Julia functions released,
#: the arrays lent.
Answer = tuple[bytes, list[Any] | None, bytes | None, bytes | None]

#: The op types through which TensorFlow calls Python (and so maybe Julia) on its own threads.
_PY_FUNC_OPS = frozenset({"PyFunc", "PyFuncStateless", "EagerPyFunc"})


class _ThreadCall:
    """A Julia call made on another thread, waiting for Julia's thread to make it."""

    __slots__ = ("fn", "args", "kwargs", "done", "value", "error")

    def __init__(self, fn: JuliaFunction, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self.fn, self.args, self.kwargs = fn, args, kwargs
        self.done = threading.Event()
        self.value: Any = None
        self.error: BaseException | None = None


class _NotDirect:
    """The direct type of a fetch whose value never goes to Julia as itself (no value has it)."""


class InProcess(Peer):
    """Julia's counterpart in Julia's own process."""

    def __init__(
        self,
        julia: Callable[[bytes], bytearray],
        min_bytes: int,
        julia_on_op: Callable[[int, int, Any], str | bytearray] | None = None,
        julia_call: Callable[..., Any] | None = None,
    ) -> None:
        super().__init__()
        self._julia = julia
        self._julia_on_op = julia_on_op
        self._julia_call = julia_call
        self.min_bytes = min_bytes
        self._keep: list[Any] = []  # arrays of the message being encoded, by address
        self._thread_calls: queue.SimpleQueue[_ThreadCall | None] = queue.SimpleQueue()
        self._serving_runs = 0  # runs whose Julia calls from other threads Julia's thread makes
        self._thread_errors: list[JuliaError] = []
        self.ctrl_c: _CtrlC | None = None
        self._lent: set[int] = set()  # handles of the arrays Julia uses where they are
        self._orphans: list[Any] = []  # arrays lent to Julia before a `reset`
        # TensorFlow is imported only now (after `load`: this module is imported before it)
        from devplace.bridge import julia_semantics

        self._semantics = julia_semantics
        self._dp_run = julia_semantics.dp.run
        tf = julia_semantics.tf
        # The scalars `run_fetch` hands Julia as themselves, by their tensor's dtype: Julia
        # reads a float as Float64, an int as Int64, a bool as Bool (`run`'s rule).
        self._direct_scalars = {tf.float64: float, tf.int64: int, tf.bool: bool}
        self._direct: dict[int, type] = {}  # by fetch handle: its direct type, or _NotDirect

    # --- arrays by address --------------------------------------------------------------
    def share(self, a: np.ndarray[Any, Any], dtype: np.dtype[Any]) -> tuple[str, int, int] | None:
        if self.min_bytes <= 0 or a.nbytes < self.min_bytes or a.size == 0:
            return None
        if a.dtype == dtype and a.flags.f_contiguous:
            data, order = a, 0
        elif a.dtype == dtype and a.flags.c_contiguous:
            data, order = a, 1  # Julia copies it out transposed: one copy, not two
        else:
            data, order = np.asfortranarray(a, dtype=dtype), 0
        self._keep.append(data)
        return "", data.ctypes.data, order

    def shared_array(
        self, dtype: np.dtype[Any], shape: tuple[int, ...], path: str, offset: int, stamp: int
    ) -> Any:
        if path or stamp:
            raise wire.DecodeError(f"in process, arrays come by address, not from {path!r}")
        view = _julia_array(dtype, shape, offset)
        return view if self.in_place else view.copy(order="F")

    # --- Julia's calls ------------------------------------------------------------------
    def after_run(self) -> None:
        if self.ctrl_c is not None:
            self.ctrl_c.done()

    def request(self, body: bytearray) -> Answer:
        """Answer a REQUEST body: the answer (kind byte, then its body), the arrays it points
        into (Julia holds them until it has copied them out), the Julia functions Python
        released meanwhile (encoded ids, or None), and which of those arrays Julia may keep
        without a copy (`lend`; encoded handle ids, or None)."""
        outer, self._keep = self._keep, []  # inline, not `_answered`: a frame less per nesting
        try:
            kind, buffers = self.answer(memoryview(body))
            return self._answer(kind, buffers, self._keep)
        finally:
            self._keep = outer

    def run_fetch(
        self, sess_id: int, fetch_id: int | list[int] | tuple[int, ...], feeds: Any = None
    ) -> Answer | tuple[int, int, tuple[int, ...]] | list[Any] | float | int | bool | None:
        """Julia's `run(sess, fetches, feeds...)` made without messages. `fetch_id`: one tensor's
        or op's handle id, or a list or tuple of them (fetched as that list or tuple). The
        answer: for one, the value itself where it is None or a float64, int64 or bool scalar
        (what most steps of a training loop fetch), an array's memory given to Julia
        (`numpy_memory.give`); for several, the list of their values where each is such a
        scalar or None; else the answer `request` would give. `feeds`: placeholders' handle ids
        and their values one after another, each value a float, int or bool, or a Julia array
        as its (dtype code, address, shape), read where Julia keeps it during the run."""
        try:
            one = type(fetch_id) is int
            get = self.handles.get
            fetch = get(fetch_id) if one else type(fetch_id)(map(get, fetch_id))
            feed = None if feeds is None else self._feed_dict(feeds)
            value = self._run(self._dp_run, (get(sess_id), fetch, feed))
        except StreamClosed:
            raise
        except BaseException as exc:  # noqa: BLE001 - every failure goes back to Julia
            error = self.error_buffers(exc)
            return self._answered(lambda: (frames.ERROR, error))
        direct = self._direct
        if one:
            if value is None or type(value) is (
                direct.get(fetch_id) or self._direct_type(fetch_id, fetch)
            ):
                return value
            if type(value) is np.ndarray:
                given = numpy_memory.give(value)
                if given is not None:
                    return given
        else:
            for i, f, v in zip(fetch_id, fetch, value, strict=True):
                if v is not None and type(v) is not (direct.get(i) or self._direct_type(i, f)):
                    break
            else:  # a list, never a tuple: Julia reads a tuple as an array's memory
                return value if type(value) is list else list(value)
        box = [self._semantics.typed(fetch, value)]
        del value  # an answer's arrays are lent only where nothing else refers to them (`lend`)
        return self._answered(lambda: self.value_buffers(box.pop()))

    def _direct_type(self, fetch_id: int, fetch: Any) -> type:
        """The Python type in which `run_fetch` hands Julia the value of `fetch` as itself
        (`_NotDirect`: none), remembered by handle id in `_direct`."""
        dtype = getattr(getattr(fetch, "dtype", None), "base_dtype", None)
        direct = self._direct[fetch_id] = self._direct_scalars.get(dtype, _NotDirect)
        return direct

    def _feed_dict(self, feeds: tuple[Any, ...]) -> dict[Any, Any]:
        """`run_fetch`'s feeds as `dp.run` takes them: Julia's arrays seen where they are."""
        feed = {}
        for i in range(0, len(feeds), 2):
            value = feeds[i + 1]
            if type(value) is tuple:
                code, address, shape = value
                value = _julia_array(wire.DTYPE_CODES[code], shape, address)
            feed[self.handles.get(feeds[i])] = value
        return feed

    def _answered(self, make: Callable[[], tuple[int, list[Any]]]) -> Answer:
        """`make()`'s answer (kind, buffers) as `request` returns it."""
        outer, self._keep = self._keep, []
        try:
            kind, buffers = make()
            return self._answer(kind, buffers, self._keep)
        finally:
            self._keep = outer

    def _answer(self, kind: int, buffers: list[Any], keep: list[Any]) -> Answer:
        """The answer tuple of `kind` and `buffers`, which point into the arrays `keep`."""
        answer = b"".join([bytes((kind,)), *buffers])
        dropped = self.take_dropped()
        lent = self.lend(keep) if keep else None
        return answer, keep or None, wire.encode_bytes(dropped) if dropped else None, lent

    def lend(self, arrays: list[Any]) -> bytes | None:
        """The arrays of an answer that nothing in Python refers to, owning their memory and
        column-major (a fetch's result): Julia uses each where it is, holding it by a handle it
        releases when its array is collected. Encoded ids, 0 for an array Julia copies."""
        ids = []
        for a in arrays:
            alone = sys.getrefcount(a) == 3  # `arrays`, `a` and the argument: nothing else
            mine = a.base is None and a.flags.owndata and a.flags.writeable
            ids.append(self.handles.put(a) if alone and mine and a.flags.f_contiguous else 0)
        self._lent.update(ids)
        self._lent.discard(0)
        return wire.encode_bytes(ids) if any(ids) else None

    def release(self, body: memoryview) -> None:
        ids = wire.decode(body)
        self._lent.difference_update(ids)
        for id in ids:
            self._direct.pop(id, None)
        self.handles.release(ids)

    def reset(self) -> None:
        """Julia's `stop_host`: forget every object held for Julia (a fresh start's state), but
        for the arrays lent to Julia, whose memory Julia's arrays still use."""
        # freed with the process: Julia's releases of them name the peer before the reset
        self._orphans.extend(self.handles.get(id) for id in self._lent)
        self._lent.clear()
        self._direct.clear()
        self.handles = type(self.handles)()

    # --- callbacks into Julia -------------------------------------------------------------
    def call_on_op(self, fn: JuliaFunction, op: Any) -> Any:
        """One call of Julia's `julia_on_op` builtin, without `call_julia`'s general steps (a
        device function is called for every op built under it); those steps where this thread
        is not Julia's or callbacks nest (where the stack's headroom is worth its 1 µs check)."""
        if (
            self._julia_on_op is None
            or threading.get_ident() != self._thread
            or (self._depth and not headroom_left(STACK_HEADROOM))
        ):
            return super().call_on_op(fn, op)
        outer, self.interruptible = self.interruptible, False
        self._depth += 1
        try:
            answer = self._julia_on_op(fn.id, self.handles.put(op), op)
        finally:
            self._depth -= 1
            self.interruptible = outer
        if type(answer) is str:
            return answer
        kind, value = self._decoded(answer)
        if kind == frames.REPLY:
            return value
        raise JuliaError(*value)

    def _decoded(self, answer: bytearray) -> tuple[int, Any]:
        """Julia's answer (kind byte, then its body) decoded."""
        return answer[0], wire.decode(memoryview(answer)[1:], self)

    def exchange_callback(self, call: tuple[Any, ...]) -> tuple[int, Any]:
        if len(call) == 3 and not call[2] and self._julia_call is not None:
            plain = _plain_args(call[1])
            if plain is not None:  # no messages: a loss or step callback of an optimizer
                answer = self._julia_call(call[0], *plain)
                if type(answer) is not bytearray:
                    return frames.REPLY, answer
                return self._decoded(answer)
        outer, self._keep = self._keep, []
        try:
            buffers = self.encode(call).buffers()
            keep = self._keep  # noqa: F841 - alive until Julia has copied the arrays out
        finally:
            self._keep = outer
        answer = self._julia(b"".join(buffers))
        return self._decoded(answer)

    def call_from_thread(
        self, fn: JuliaFunction, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        """Hand the call to Julia's thread, which serves such calls while a run is in flight
        (`serve_run`), and wait for its result."""
        if not self._serving_runs:
            raise RuntimeError(
                f"Julia function {fn.name} was called on a Python thread other than Julia's, "
                "outside a session run: Julia can only run it on its own thread. Hint: call it "
                "from a py_func op of a graph that a session runs, or from Julia's thread"
            )
        call = _ThreadCall(fn, args, kwargs)
        self._thread_calls.put(call)
        call.done.wait()
        if call.error is not None:
            raise call.error
        return call.value

    def serve_run(self, run: Callable[[], Any]) -> Any:
        """Run `run()` (a session's run) on a worker thread while this thread, Julia's, makes the
        Julia calls that TensorFlow's threads hand over. A Julia exception in one of them is
        raised here as itself, not as TensorFlow's error that wraps its text."""
        outcome: dict[str, Any] = {}

        def work() -> None:
            try:
                outcome["value"] = run()
            except BaseException as exc:  # noqa: BLE001 - raised on Julia's thread below
                outcome["error"] = exc
            finally:
                self._thread_calls.put(None)

        self._serving_runs += 1
        errors_before = len(self._thread_errors)
        worker = threading.Thread(target=work, name="devplace-run", daemon=True)
        worker.start()
        try:
            while (call := self._thread_calls.get()) is not None:
                try:
                    call.value = self.call_julia(call.fn, call.args, call.kwargs)
                except BaseException as exc:  # noqa: BLE001 - raised in TensorFlow's thread
                    call.error = exc
                    if isinstance(exc, JuliaError):
                        self._thread_errors.append(exc)
                finally:
                    call.done.set()
        finally:
            self._serving_runs -= 1
            worker.join()
        raised = self._thread_errors[errors_before:]
        del self._thread_errors[errors_before:]
        if "error" in outcome:
            if raised:
                raise raised[0] from outcome["error"]
            raise outcome["error"]
        return outcome["value"]


_set_async_exc = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_ulong, ctypes.py_object)(
    ("PyThreadState_SetAsyncExc", ctypes.pythonapi)
)
#: The same function given NULL: clears the thread's pending asynchronous exception.
_clear_async_exc = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p)(
    ("PyThreadState_SetAsyncExc", ctypes.pythonapi)
)


class _CtrlC:
    """Ctrl-C for Python code that never calls Julia back. Julia holds a Ctrl-C that arrives
    during a call into Python until the call returns (its `jl_signal_pending`); while a request's
    own code runs, this thread looks at that flag and raises `KeyboardInterrupt` in it, once per
    Ctrl-C, at its next Python instruction (a C call such as one TensorFlow step finishes
    first). Where Julia has no such flag, nothing is watched."""

    INTERVAL_S = 0.05

    def __init__(self, peer: InProcess) -> None:
        self.lock = threading.Lock()
        self.raised = False  # for the request running now
        self.peer = peer
        self.main = threading.get_ident()
        try:
            self.pending = ctypes.c_int.in_dll(ctypes.CDLL(None), "jl_signal_pending")
        except (OSError, ValueError):
            return
        threading.Thread(target=self._watch, name="devplace-ctrl-c", daemon=True).start()

    def _watch(self) -> None:
        while True:
            time.sleep(self.INTERVAL_S)
            with self.lock:
                running = self.peer.interruptible
                if running and not self.raised and self.pending.value == signal.SIGINT:
                    _set_async_exc(self.main, KeyboardInterrupt)
                    self.raised = True

    def done(self) -> None:
        """A request's code has returned: a Ctrl-C raised too late for it is dropped (Julia
        throws `InterruptException` for it anyway), never raised in the bridge's own code."""
        with self.lock:
            if self.raised:
                self.raised = False
                _clear_async_exc(self.main, None)


def _julia_array(dtype: np.dtype[Any], shape: tuple[int, ...], address: int) -> Any:
    """The column-major array of `dtype` and `shape` that Julia keeps at `address`, seen
    where it is (alive while Julia keeps it)."""
    count = math.prod(shape)
    if count == 0:
        return np.zeros(shape, dtype, order="F")
    memory = (ctypes.c_char * (count * dtype.itemsize)).from_address(address)
    return np.frombuffer(memory, dtype, count).reshape(shape, order="F")


def _plain_args(args: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """`args` as Julia's `julia_call` reads them without messages (a numpy float64 scalar as a
    float: Julia gets a Float64 either way), or None where one is not plain: None, bool, an
    int that fits Int64, float, str, or a one-dimensional C-contiguous float64 array."""
    plain = []
    for a in args:
        t = type(a)
        if t is float or t is np.float64:
            plain.append(float(a))
        elif a is None or t is bool or t is str or (t is int and -(2**63) <= a < 2**63):
            plain.append(a)
        elif t is np.ndarray and a.dtype == np.float64 and a.ndim == 1 and a.flags.c_contiguous:
            plain.append(a)
        else:
            return None
    return tuple(plain)


def _runs_julia_on_tf_threads(graph: Any, versions: dict[int, tuple[int, bool]]) -> bool:
    """Does `graph` hold ops through which TensorFlow calls Python on its own threads?"""
    version = graph.version
    seen = versions.get(id(graph))
    if seen is None or seen[0] != version:
        found = any(op.type in _PY_FUNC_OPS for op in graph.get_operations())
        seen = versions[id(graph)] = (version, found)
    return seen[1]


def _serve_py_funcs(peer: InProcess) -> None:
    """Route session runs of graphs with py_func ops through `peer.serve_run` while Julia
    functions live in Python (else a run costs nothing more)."""
    from devplace.adapter._tf import wrap_session_runs

    versions: dict[int, tuple[int, bool]] = {}

    def serving(plain: Callable[..., Any]) -> Callable[..., Any]:
        def call_tf_sessionrun(self: Any, *args: Any) -> Any:
            if (
                peer.julia_functions
                and threading.get_ident() == peer._thread
                and _runs_julia_on_tf_threads(self.graph, versions)
            ):
                return peer.serve_run(lambda: plain(self, *args))
            return plain(self, *args)

        return call_tf_sessionrun

    wrap_session_runs(serving)


_PEER: InProcess | None = None


def start(
    julia: Callable[[bytes], bytearray],
    julia_on_op: Callable[[int, int, Any], str | bytearray],
    julia_call: Callable[..., Any],
    min_bytes: int,
) -> InProcess:
    """The peer for Julia (after `ready`): `julia` calls Julia back, `julia_on_op` calls a
    Julia device function and `julia_call` a Julia function with plain arguments (both without
    messages), arrays of at least `min_bytes` go by address. Julia's next start (after
    `stop_host`) gets the same peer with nothing held for Julia any more."""
    global _PEER
    if _PEER is not None:
        _PEER.reset()
        _PEER.min_bytes = min_bytes
        return _PEER
    _PEER = InProcess(julia, min_bytes, julia_on_op, julia_call)
    if "tensorflow" in sys.modules:
        _serve_py_funcs(_PEER)
    _PEER.ctrl_c = _CtrlC(_PEER)
    return _PEER
