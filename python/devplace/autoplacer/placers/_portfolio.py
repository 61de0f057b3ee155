"""The portfolio `search` starts from: the registered placers declared with `portfolio=True`,
filled by the registry (`placers/__init__.py`) once every placer module is loaded, so
`search` reads the registry without importing it (which imports `search`)."""

from __future__ import annotations

from devplace.autoplacer.placers._common import Placer

__all__ = ["PORTFOLIO"]

#: Portfolio placers by name, in registration order (filled by `placers/__init__.py`).
PORTFOLIO: dict[str, Placer] = {}
