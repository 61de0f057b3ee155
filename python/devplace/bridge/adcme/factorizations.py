"""The LU factors of sparse matrices, kept in the host between the factorize op that makes them
and the solve ops that use them (`factorize` and `A \\ b` of `devplace.bridge.adcme.sparse`).

scipy's SuperLU factors the matrix; duplicate entries are added, as in ADCME.
"""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict
from typing import Any

import numpy as np
import scipy.sparse
import scipy.sparse.linalg

from devplace.core.errors import Error

__all__ = ["DEFAULT_CACHE", "FACTORIZATIONS", "FactorizationError", "Factorizations", "lu", "solve"]

#: ADCME's default `max_cache_size` of `factorize` (DevPlace.jl's too: it sends `nothing`).
DEFAULT_CACHE = 999999


class FactorizationError(Error, ValueError):
    """A matrix that has no LU factors (singular), or factors dropped before their solve ran."""


def lu(indices: np.ndarray, values: np.ndarray, shape: np.ndarray) -> Any:
    """scipy's LU factors of the sparse matrix with entries `values` at `indices` (0-based)."""
    a = scipy.sparse.csc_matrix((values, (indices[:, 0], indices[:, 1])), shape=tuple(shape))
    try:
        return scipy.sparse.linalg.splu(a)
    except RuntimeError as err:  # SuperLU: "Factor is exactly singular"
        raise FactorizationError(
            f"sparse solve: the {shape[0]}×{shape[1]} matrix is singular ({err}); "
            "a square system needs a regular matrix"
        ) from err


def solve(factors: Any, rhs: np.ndarray, trans: bool) -> np.ndarray:
    """`A \\ rhs` (`A' \\ rhs` with `trans`) for a vector or rows of right-hand sides."""
    how = "T" if trans else "N"
    if rhs.ndim == 1:
        return factors.solve(rhs, trans=how)
    return np.ascontiguousarray(factors.solve(np.ascontiguousarray(rhs.T), trans=how).T)


class Factorizations:
    """LU factors by key. Each factorize op keeps those of its latest few runs (one per run in
    flight; a run's solves find its own by the key it made), and at most `limit` factorize ops
    keep theirs (the least recently run one drops)."""

    # A while_loop runs up to 10 iterations at once (TF's parallel_iterations), and a loop may
    # factorize in every step before a later loop solves with each: keep well beyond that.
    KEPT_PER_OP = 32

    def __init__(self) -> None:
        self._ops: OrderedDict[int, OrderedDict[int, Any]] = OrderedDict()
        self._lock = threading.Lock()
        self._numbers = itertools.count(1)

    def number(self) -> int:
        """A new number, for an op or a run (never the same twice)."""
        return next(self._numbers)

    def put(self, op: int, factors: Any, limit: int) -> int:
        """Keep `factors` made by factorize op `op`; the key its solves find them by."""
        key = self.number()
        with self._lock:
            runs = self._ops.setdefault(op, OrderedDict())
            self._ops.move_to_end(op)
            runs[key] = factors
            while len(runs) > self.KEPT_PER_OP:
                runs.popitem(last=False)
            while len(self._ops) > max(1, limit):
                self._ops.popitem(last=False)
        return key

    def get(self, key: int) -> Any:
        """The factors kept under `key`."""
        with self._lock:
            for runs in self._ops.values():
                if key in runs:
                    return runs[key]
        raise FactorizationError(
            f"solve: factorization {key} was dropped (more factorize ops than "
            "max_cache_size, or more runs of one at once than it keeps); raise max_cache_size"
        )


#: The factors of this host's factorize ops.
FACTORIZATIONS = Factorizations()
