"""Capture what C++ code writes to file descriptors 1 and 2.

TensorFlow's placement log is printed by C++ straight to the process's fds, which Python's
`redirect_stdout` never sees; pointing the fds at a temporary file with `os.dup2` does.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import threading
from collections.abc import Iterator

__all__ = ["capture_fds"]

_lock = threading.Lock()


class Captured:
    """The text written to the captured fds, available after the `with` block."""

    text: str = ""


@contextlib.contextmanager
def capture_fds(fds: tuple[int, ...] = (1, 2)) -> Iterator[Captured]:
    """Redirect `fds` to one temporary file for the duration of the block.

    Only one capture runs at a time (fds are process-wide). Python's own buffered streams are
    flushed on both sides so their output lands where it belongs.
    """
    captured = Captured()
    with _lock, tempfile.TemporaryFile(mode="w+b") as sink:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        saved = [os.dup(fd) for fd in fds]
        try:
            for fd in fds:
                os.dup2(sink.fileno(), fd)
            yield captured
        finally:
            for stream in (sys.stdout, sys.stderr):
                with contextlib.suppress(ValueError):
                    stream.flush()
            for fd, copy in zip(fds, saved, strict=True):
                os.dup2(copy, fd)
                os.close(copy)
            sink.seek(0)
            captured.text = sink.read().decode("utf-8", "replace")
