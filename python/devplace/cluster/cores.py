"""CPU cores for cluster tasks: `K` or a core list, each task its own cores, a process pinned.

A task pinned to K cores is a device of its own: its server process may run only there (CPU
affinity), its thread pools have K threads each (the inter-op pool one more, for RPCs), and its
compute threads run below its RPC threads. The server pins itself before it imports
TensorFlow, so every thread TF starts inherits the mask. Standard library only (Linux's
`sched_setaffinity`), so the server process can use it before anything else.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from devplace.core.errors import Error

__all__ = [
    "CoresError",
    "assign",
    "available",
    "describe",
    "parse",
    "parse_list",
    "pin",
    "resolve",
    "yield_to_messages",
]

_RANGE = re.compile(r"(?P<first>\d+)(?:-(?P<last>\d+))?\Z")


class CoresError(Error, ValueError):
    """Cores that cannot be given: more than the machine has, or not this process's to use."""


def available() -> list[int]:
    """The cores this process may run on (its affinity: a container or `taskset` may limit it)."""
    if not hasattr(os, "sched_getaffinity"):
        raise CoresError(
            f"pinning tasks to cores needs Linux (CPU affinity); this is {sys.platform}"
        )
    return sorted(os.sched_getaffinity(0))


def describe(cores: Sequence[int]) -> str:
    """Cores in short list form, as `taskset -c` writes them: `0-3,6`."""
    parts: list[str] = []
    ordered = sorted(set(cores))
    start = 0
    for i in range(1, len(ordered) + 1):
        if i == len(ordered) or ordered[i] != ordered[i - 1] + 1:
            first, last = ordered[start], ordered[i - 1]
            parts.append(str(first) if first == last else f"{first}-{last}")
            start = i
    return ",".join(parts)


def parse(text: str | int | Sequence[int]) -> int | list[int]:
    """`"4"` (or 4) is a count of cores; `"0,2"`, `"4-7"`, `"6-6"` (core 6 alone) are core lists.

    Raises `CoresError` naming the text for anything else.
    """
    if isinstance(text, bool):
        raise CoresError(f"cores: expected a count like 4 or a list like 0-3,6, got {text!r}")
    if isinstance(text, int):
        count = text
    elif isinstance(text, str) and text.strip().isdigit():
        count = int(text)
    elif isinstance(text, str):
        return parse_list(text)
    else:
        return parse_list(",".join(map(str, text)))
    if count < 1:
        raise CoresError(f"cores: a count of cores must be >= 1, got {text!r}")
    return count


def parse_list(text: str) -> list[int]:
    """A core list only: `"3"` is core 3 here, not a count."""
    cores: set[int] = set()
    for part in text.replace(" ", "").split(","):
        found = _RANGE.match(part)
        if not found or (found["last"] and int(found["last"]) < int(found["first"])):
            raise CoresError(
                f"cores: {text!r} is not a count (4) or a core list (0-3,6; 6-6 for core 6 alone)"
            )
        cores.update(range(int(found["first"]), int(found["last"] or found["first"]) + 1))
    return sorted(cores)


def resolve(cores: str | int | Sequence[int]) -> list[int]:
    """The cores one task gets: a count K is the first K cores this process may use."""
    usable = available()
    wanted = parse(cores)
    if isinstance(wanted, int):
        if wanted > len(usable):
            raise CoresError(
                f"cores: {wanted} cores asked for, but this machine has {len(usable)} this "
                f"process may use (cores {describe(usable)}). Hint: ask for at most {len(usable)}"
            )
        return usable[:wanted]
    missing = [core for core in wanted if core not in usable]
    if missing:
        raise CoresError(
            f"cores: core(s) {describe(missing)} asked for, but this process may use only cores "
            f"{describe(usable)}. Hint: pick cores from that list (see `taskset -pc $$`)"
        )
    return wanted


def assign(roles: Sequence[str], per_task: int) -> dict[str, list[int]]:
    """Give each role its own `per_task` cores, in order; refuse more than there are."""
    usable = available()
    needed = len(roles) * per_task
    if needed > len(usable):
        most = len(usable) // max(1, len(roles))
        hint = (
            f"fewer tasks, or cores_per_task <= {most}"
            if most
            else (f"at most {len(usable)} tasks of one core each")
        )
        raise CoresError(
            f"cores: {len(roles)} tasks x {per_task} cores each = {needed} cores, but this "
            f"machine has {len(usable)} this process may use (cores {describe(usable)}). "
            f"Hint: {hint}"
        )
    return {role: usable[i * per_task : (i + 1) * per_task] for i, role in enumerate(roles)}


def pin(cores: Sequence[int]) -> None:
    """Pin this process (its calling thread and every thread it starts later) to `cores`."""
    available()  # the clear error where there is no affinity
    os.sched_setaffinity(0, cores)


#: Niceness of a pinned task's compute threads: low enough that a thread woken for an RPC
#: preempts them at once instead of after a scheduler slice.
COMPUTE_NICENESS = 19


def yield_to_messages(niceness: int = COMPUTE_NICENESS) -> None:
    """Lower this process's TF compute threads (`tf_Compute`) to `niceness`.

    On a pinned core busy with ops, the gRPC threads that answer another task's RecvTensor wait
    a whole scheduler slice per wake-up, which measured 4-5 ms per transfer on a one-core task
    (two towers on two tasks ran slower than on one). Behind the compute threads they run at once.
    """
    for thread in Path("/proc/self/task").iterdir():
        try:
            if (thread / "comm").read_text().strip() == "tf_Compute":
                os.setpriority(os.PRIO_PROCESS, int(thread.name), niceness)
        except (FileNotFoundError, ProcessLookupError):
            pass  # a thread that ended meanwhile
