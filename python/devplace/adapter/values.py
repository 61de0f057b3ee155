"""Fetched values in plain Python form, for callers in other languages (the Julia bridge)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["to_python"]


def to_python(value: Any) -> Any:
    """Fetched values made friendly to other languages: numpy scalars become Python numbers."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return value.item()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, list):
        return [to_python(v) for v in value]
    if isinstance(value, tuple):
        return tuple(to_python(v) for v in value)
    if isinstance(value, Mapping):
        return {k: to_python(v) for k, v in value.items()}
    return value
