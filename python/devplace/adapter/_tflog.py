"""TensorFlow's C++ log while sessions are made and run: held off the console.

A GPU kernel logs as it fails (`check_numerics`: `E0000 ... abnormal_detected_host ...`), and a
failed step logs `Local rendezvous is aborting`, besides the error the run raises, which keeps
TensorFlow's words. While at least one session call is in flight, fd 2 points at a pipe whose
reader thread forwards everything but TF's log lines to where fd 2 pointed before, as it comes;
the lines held back go to the `devplace.tensorflow` logger at DEBUG. Calls in several threads
share one redirection, so none waits for another. Fatal lines (`F...`) still print, and
`DEVPLACE_TF_LOG=1` leaves fd 2 alone.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import logging
import os
import re
import select
import struct
import sys
import termios
import threading

from devplace.adapter._tf import LOG_PREFIX_AFTER_LEVEL, RAW_LOG

__all__ = ["quiet_tf_log"]

log = logging.getLogger("devplace.tensorflow")

# "E0000 00:00:1795743070.794491   26422 check_numerics_op.cc:292] ": absl's prefix; fatal
# lines ("F...") are not held back.
_LOG_LINE = re.compile(rb"^[IWE]" + LOG_PREFIX_AFTER_LEVEL.encode())
_DRAINED = b"\0devplace: drained\0\n"  # written by this module only, after all else
_DRAIN_WAIT_S = 2.0


class _Redirect:
    """fd 2 into a pipe while any call is in flight; one reader forwards what is not TF's log."""

    def __init__(self) -> None:
        # Reentrant: the reader holds it from taking a chunk out of the pipe until it has
        # written it on (`_write` takes it too), so `leave` sees each byte either still in the
        # pipe (and drains) or already forwarded, never in between (out of order after it).
        self.lock = threading.RLock()
        self.active = 0
        self.saved = -1  # where fd 2 pointed before the redirection (a copy)
        self.pipe: tuple[int, int] | None = None
        self.drained = threading.Event()

    def enter(self) -> None:
        with self.lock:
            self.active += 1
            if self.active > 1:
                return
            if self.pipe is None:
                self.pipe = os.pipe()
                threading.Thread(target=self._forward, name="devplace-tf-log", daemon=True).start()
                atexit.register(self.drain)
            _flush_stderr()
            try:
                self.saved = os.dup(2)
            except OSError:  # no fd 2 (a daemon): nothing reaches a console anyway
                return
            os.dup2(self.pipe[1], 2)

    def leave(self) -> None:
        with self.lock:
            self.active -= 1
            if self.active or self.saved < 0:
                return
            _flush_stderr()
            os.dup2(self.saved, 2)
            os.close(self.saved)
            self.saved = -1
            assert self.pipe is not None
            pending = _unread(self.pipe[0])
        if pending:
            self.drain()  # what the run wrote comes out before what follows it

    def drain(self) -> None:
        """Wait (boundedly) until everything written into the pipe so far is forwarded."""
        if self.pipe is None:
            return
        self.drained.clear()
        os.write(self.pipe[1], _DRAINED)
        self.drained.wait(_DRAIN_WAIT_S)

    def _forward(self) -> None:
        assert self.pipe is not None
        rest = b""
        ready = select.poll()
        ready.register(self.pipe[0], select.POLLIN)
        while True:
            ready.poll()  # data (or the end) to read, none taken yet
            with self.lock:
                chunk = os.read(self.pipe[0], 65536)
                if not chunk:
                    return
                rest = self._pass_on(rest + chunk)

    def _pass_on(self, text: bytes) -> bytes:
        """Forward the complete lines of `text` but TF's log lines; what is left to complete."""
        *lines, rest = text.split(b"\n")
        kept, held = [], False
        for line in lines:
            if line + b"\n" == _DRAINED:
                self.drained.set()
            elif _LOG_LINE.match(line) or (held and line[:1] in (b"\t", b" ")):
                held = True  # a log line, or an indented line continuing one
                log.debug("%s", line.decode("utf-8", "replace"))
            else:
                held = False
                kept.append(line + b"\n")
        if rest[:1] not in (b"I", b"W", b"E", b"\0"):
            kept.append(rest)  # no log line starts so: forwarded now (a progress bar)
            rest = b""
        self._write(b"".join(kept))
        return rest

    def _write(self, data: bytes) -> None:
        with self.lock:
            target = self.saved if self.active else 2
            if not self.active and _same_file(2, self.pipe[1]):  # type: ignore[index]
                return  # fd 2 left pointing here by someone: never feed the pipe itself
            while data:
                try:
                    data = data[os.write(target, data) :]
                except OSError:
                    return


def _flush_stderr() -> None:
    """Python's buffered stderr out first, so its text lands before what follows."""
    with contextlib.suppress(AttributeError, ValueError):  # none, or closed
        sys.stderr.flush()


def _same_file(a: int, b: int) -> bool:
    try:
        return os.path.sameopenfile(a, b)
    except OSError:
        return False


def _unread(fd: int) -> int:
    """Bytes waiting in a pipe."""
    size = fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0")
    return int(struct.unpack("i", size)[0])


_REDIRECT = _Redirect()


class _Quiet:
    """`quiet_tf_log`'s context: a class, not a generator, since every session call enters it
    (a generator-based one cost a microsecond more per call)."""

    __slots__ = ()

    def __enter__(self) -> None:
        _REDIRECT.enter()

    def __exit__(self, *exc: object) -> None:
        _REDIRECT.leave()


_QUIET = contextlib.nullcontext() if RAW_LOG else _Quiet()


def quiet_tf_log() -> contextlib.AbstractContextManager[None]:
    """Hold TensorFlow's C++ log lines off the console for the block (see the module doc)."""
    return _QUIET
