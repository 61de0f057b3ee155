"""Python's start and exit in Julia's process (DevPlace.jl's `inprocess.jl` is the other end):
the modules Julia needs imported on a thread of their own while Julia goes on, TensorFlow's
libraries bound to themselves first (`RTLD_DEEPBIND`: see `inprocess`), and Python's exit
functions run while Julia's IO still works.

Standard library only: Julia imports this module, starts the import and gives the GIL back at
once, so TensorFlow's import begins before anything else of devplace (numpy included) loads.
"""

from __future__ import annotations

import array
import atexit
import importlib
import os
import sys
import threading
import time
from collections.abc import Sequence

__all__ = ["finish", "load", "loading_flag", "ready"]


class _Loader:
    """Imports the modules Julia will need on a thread of its own, while Julia goes on."""

    def __init__(self, names: Sequence[str]) -> None:
        self.error: BaseException | None = None
        self.started = time.monotonic()
        self.loading = array.array("b", [1])  # 0 once done: Julia reads it without the GIL
        self.thread = threading.Thread(target=self._load, args=(names,), name="devplace-load")
        self.thread.daemon = True
        self.thread.start()

    def _load(self, names: Sequence[str]) -> None:
        try:
            for name in names:
                importlib.import_module(name)
        except BaseException as exc:  # noqa: BLE001 - reported by `ready`
            self.error = exc
        finally:
            self.loading[0] = 0


_LOADER: _Loader | None = None


def load(names: Sequence[str]) -> None:
    """Start importing `names` (devplace's in-process transport, TensorFlow and devplace) with
    TensorFlow's libraries bound to themselves first (`RTLD_DEEPBIND`), on a thread of its own."""
    global _LOADER
    sys.setdlopenflags(os.RTLD_NOW | os.RTLD_DEEPBIND)
    _LOADER = _Loader(names)


def loading_flag() -> int:
    """The address of a byte that stays 1 while `load` imports and becomes 0 when it is done:
    Julia waits for it so, reading it without the GIL (which the import holds for up to 0.1 s
    at a time, and a thread asking for it makes the import give it up)."""
    assert _LOADER is not None, "load() first"
    return _LOADER.loading.buffer_info()[0]


def ready(timeout: float) -> str | None:
    """Wait for `load` until `timeout` seconds after it began (however long Julia waited for
    it before, without blocking its other tasks): None once loaded, else why not (one line)."""
    assert _LOADER is not None, "load() first"
    _LOADER.thread.join(max(0.0, _LOADER.started + timeout - time.monotonic()))
    if _LOADER.thread.is_alive():
        return f"loading TensorFlow took longer than {timeout:g} s"
    if _LOADER.error is not None:
        err = _LOADER.error
        first = str(err).strip().splitlines()[0] if str(err).strip() else ""
        return f"{type(err).__name__}: {first}" if first else type(err).__name__
    return None


def finish() -> None:
    """Julia exits: run Python's exit functions now, while Julia's IO still works, and flush."""
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
