"""Files replaced whole: a reader sees the old content or the new, never a half-written file.

Standard library only (the forwarder imports it without importing devplace). Used for the
spec and state JSON files and the ready files that processes write once they serve.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["write_text"]


def write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write `text` to `path` through a temporary file renamed over it; returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    tmp.replace(path)
    return path
