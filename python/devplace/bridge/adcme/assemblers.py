"""ADCME's `SparseAssembler` state: the rows of sparse matrices being assembled in the host while
the graph runs (the ops are `assembler`, `assembler_add` and `assembler_take` of
`devplace.bridge.adcme.sparse`)."""

from __future__ import annotations

import threading

import numpy as np

from devplace.core.errors import Error

__all__ = ["ASSEMBLERS", "AssemblerError", "Assemblers"]


class AssemblerError(Error, ValueError):
    """A row outside an assembler's rows, or an assembler used before it is opened."""


class Assemblers:
    """Sparse matrices being assembled, by handle: per row, its columns and values."""

    def __init__(self) -> None:
        self._open: dict[int, tuple[float, list[list[tuple[int, float]]]]] = {}
        self._lock = threading.Lock()

    def create(self, handle: int, nrows: int, tol: float) -> int:
        """Open assembler `handle` for `nrows` rows (an open one is kept); returns `handle`."""
        with self._lock:
            self._open.setdefault(handle, (tol, [[] for _ in range(nrows)]))
        return handle

    def add(self, handle: int, row: int, cols: np.ndarray, vals: np.ndarray) -> int:
        """Add `vals` at `cols` of `row` (from 1), those of magnitude above the tolerance."""
        with self._lock:
            tol, rows = self._entries(handle)
            if not 1 <= row <= len(rows):
                raise AssemblerError(
                    f"accumulate: row {row} is outside 1..{len(rows)} (the assembler's rows)"
                )
            kept = [(int(c), float(v)) for c, v in zip(cols, vals, strict=True) if abs(v) > tol]
            rows[row - 1].extend(kept)
        return handle

    def take(self, handle: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The entries row by row (rows and columns from 1); the assembler is then closed."""
        with self._lock:
            _, rows = self._entries(handle)
            del self._open[handle]
        entries = [(i + 1, c, v) for i, row in enumerate(rows) for c, v in row]
        ii, jj, vv = zip(*entries, strict=True) if entries else ((), (), ())
        return (np.array(ii, np.int64), np.array(jj, np.int64), np.array(vv, np.float64))

    def _entries(self, handle: int) -> tuple[float, list[list[tuple[int, float]]]]:
        if handle not in self._open:
            raise AssemblerError(
                f"sparse assembler {handle} is not open: run SparseAssembler({handle}, n) "
                "first (assemble closes it)"
            )
        return self._open[handle]


#: The assemblers open in this host.
ASSEMBLERS = Assemblers()
