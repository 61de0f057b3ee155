"""The log files of this process's `LocalCluster` tasks, by `grpc://` target.

A master task logs there what it prints, e.g. the placement of a session made with
`log_placement=True`, which `devplace.placement_log` reads. The launcher adds a task's file as
it starts the task and drops it when the cluster stops. Nothing here loads TensorFlow.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["TASK_LOGS", "task_log"]

#: `grpc://127.0.0.1:port` -> the log file of the task listening there.
TASK_LOGS: dict[str, Path] = {}


def task_log(target: str) -> Path | None:
    """The log file of the server at `target` (`grpc://127.0.0.1:port`) when it is a task of
    a running `LocalCluster` of this process; else None."""
    return TASK_LOGS.get(target)
