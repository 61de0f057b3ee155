"""Python's cyclic garbage collector paused while bulk data is built."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["cycle_collector_paused"]


@contextlib.contextmanager
def cycle_collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused (restored after): reading a million-op
    workload or a 200k-event trace makes millions of lists and dicts, no reference cycles,
    and each of the collector's full passes scans them all again (a fifth to a third of the
    time); drawing such a trace makes few objects, but each pass still scans the trace's."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
