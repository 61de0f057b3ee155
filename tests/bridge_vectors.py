"""Reading tests/vectors/*.tsv, the wire-format vectors shared with the Julia test suite."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from devplace.bridge.wire import Handle, JuliaRef, SharedArray

VECTORS = Path(__file__).parent / "vectors"


def rows(name: str) -> list[list[str]]:
    """The tab-separated rows of `vectors/<name>`, comments skipped."""
    lines = (VECTORS / name).read_text(encoding="utf-8").splitlines()
    return [line.split("\t") for line in lines if line and not line.startswith("#")]


def python_value(expr: str) -> Any:
    """Evaluate a vector's Python expression."""
    return eval(
        expr, {"np": np, "Handle": Handle, "JuliaRef": JuliaRef, "SharedArray": SharedArray}
    )


def same(a: Any, b: Any) -> bool:
    """Equal values of equal types; arrays and numpy scalars compared bit for bit."""
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, np.generic):
        return a.dtype == b.dtype and a.tobytes() == b.tobytes()
    return bool(a == b)
