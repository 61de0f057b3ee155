"""The Chrome-trace vocabulary devplace reads (`trace`) and writes (`traced`), as TensorFlow's
timeline writes it: event phases, the processes that are devices' lanes, and thread-name events.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "FLOW_END",
    "FLOW_START",
    "META",
    "OP",
    "PROCESS_NAME",
    "compute_lane",
    "thread_name_event",
]

#: Event phases: an op's span, metadata (process and thread names), a flow's two ends.
OP, META, FLOW_START, FLOW_END = "X", "M", "s", "t"
#: The metadata event naming a process.
PROCESS_NAME = "process_name"
_THREAD_NAME = "thread_name"
#: The end of a process name that is a device's lane (`"<lane> Compute"`).
_COMPUTE = " Compute"


def compute_lane(label: str) -> str | None:
    """The lane (`/job:localhost/.../device:GPU:0/stream:13`) of a process named
    `"<lane> Compute"`; None for TensorFlow's other processes (allocators, tensors)."""
    return label[: -len(_COMPUTE)] if label.endswith(_COMPUTE) else None


def thread_name_event(pid: Any, tid: Any, name: str) -> dict[str, Any]:
    """The metadata event that names thread `tid` of process `pid`."""
    return {"name": _THREAD_NAME, "ph": META, "pid": pid, "tid": tid, "args": {"name": name}}
