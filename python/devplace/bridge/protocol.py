"""The bridge's constants, read from `protocol.tsv` beside this module, the one table DevPlace.jl
reads too (`protocol.jl`): value tags, frame kinds, opcode flags, limits, the shared-memory
layout and Julia's elementwise functions."""

from __future__ import annotations

from pathlib import Path

__all__ = ["FLAGS", "FRAMES", "LIMITS", "SHM", "TAGS", "UNARY", "segment_name"]


def _rows() -> list[list[str]]:
    text = (Path(__file__).parent / "protocol.tsv").read_text(encoding="utf-8")
    return [line.split("\t") for line in text.splitlines() if line and not line.startswith("#")]


def _numbers(group: str) -> dict[str, int]:
    return {row[1]: int(row[2], 0) for row in _ROWS if row[0] == group}


_ROWS = _rows()

#: Value tag by name (`NONE`, `INT`, ...).
TAGS = _numbers("tag")
#: Frame kind by name, and the protocol version and header size.
FRAMES = _numbers("frame")
#: Opcode flag bits by name (`BY_HANDLE`, `IN_PLACE`).
FLAGS = _numbers("flag")
#: Limits on values (`MAX_DEPTH`, `MAX_DIMS`).
LIMITS = _numbers("limit")
#: The shared-memory layout: sizes by name, and the segment name's `PREFIX` and an `EXAMPLE`.
SHM: dict[str, int | str] = {
    row[1]: row[2] if row[1] in ("PREFIX", "EXAMPLE") else int(row[2], 0)
    for row in _ROWS
    if row[0] == "shm"
}
#: Julia's elementwise functions by their `elementwise` name: (the op it makes, the dtype kind
#: for which TensorFlow's public function makes another op: "complex", "integer" or "").
UNARY: dict[str, tuple[str, str]] = {
    row[2]: (row[3], row[4] if len(row) > 4 else "") for row in _ROWS if row[0] == "unary"
}


def segment_name(pid: int, number: int) -> str:
    """The name of shared-memory segment `number` of process `pid` (`devplace-<pid>-<n>`)."""
    return f"{SHM['PREFIX']}{pid}-{number}"
