"""Errors from a cluster, explained: which task, at which address, and what to do about it.

TF reports a dead peer as `UnavailableError` (with the address buried in gRPC text) and a hung
one as a bare "Deadline Exceeded". `explain` probes the cluster's tasks (about a second at
most) and raises a subclass of the same TF error whose message names every task that is gone
or silent, with its address, and a hint. `except tf.errors.UnavailableError` still works.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from devplace._tf import tf
from devplace.cluster import spec as specs
from devplace.cluster.probe import ALIVE, GONE, SILENT, probe_all

__all__ = [
    "PeerAbortedError",
    "PeerDeadlineError",
    "PeerUnavailableError",
    "TaskStatus",
    "explain",
]

_TASK = re.compile(r"/job:(?P<job>\w+)/replica:\d+/task:(?P<task>\d+)")
_ADDRESS = re.compile(r"(?:ipv4:|ipv6:|\b)(?P<address>\d{1,3}(?:\.\d{1,3}){3}:\d{1,5})\b")


@dataclass(frozen=True)
class TaskStatus:
    """A task of the cluster as a probe found it."""

    job: str | None
    task: int | None
    address: str
    state: str
    detail: str

    @property
    def name(self) -> str:
        """`/job:ps/task:0 at 127.0.0.1:2222`, or just the address for an unknown task."""
        if self.job is None or self.task is None:
            return f"the task at {self.address}"
        return f"task {specs.task_name(self.job, self.task)} at {self.address}"


class _PeerError:
    statuses: list[TaskStatus]
    original: Any

    def _keep(self, statuses: list[TaskStatus], original: Any) -> None:
        self.statuses = statuses
        self.original = original

    @property
    def tasks(self) -> list[str]:
        """The names (`/job:ps/task:0`) of the tasks found gone or silent."""
        return [
            specs.task_name(s.job, s.task)
            for s in self.statuses
            if s.state != ALIVE and s.job is not None and s.task is not None
        ]


class PeerUnavailableError(tf.errors.UnavailableError, _PeerError):
    """A task of the cluster is gone (its process died or never started)."""

    def __init__(self, original: Any, message: str, statuses: list[TaskStatus]):
        super().__init__(original.node_def, original.op, message)
        self._keep(statuses, original)


class PeerDeadlineError(tf.errors.DeadlineExceededError, _PeerError):
    """An operation outlived the session's timeout, usually because a task stopped answering."""

    def __init__(self, original: Any, message: str, statuses: list[TaskStatus]):
        super().__init__(original.node_def, original.op, message)
        self._keep(statuses, original)


class PeerAbortedError(tf.errors.AbortedError, _PeerError):
    """A task restarted under a running session: its state (variables, graphs) is gone."""

    def __init__(self, original: Any, message: str, statuses: list[TaskStatus]):
        super().__init__(original.node_def, original.op, message)
        self._keep(statuses, original)


def _known_tasks(spec: Any, target: str | None) -> list[tuple[str | None, int | None, str]]:
    found: list[tuple[str | None, int | None, str]] = []
    if spec is not None:
        cluster = specs.as_spec(spec)
        for job in sorted(cluster.jobs):
            for task in cluster.task_indices(job):
                found.append((job, task, cluster.task_address(job, task)))
    address = (target or "").removeprefix("grpc://")
    if address and all(a != address for _, _, a in found):
        found.append((None, None, address))
    return found


def _mentioned(message: str, known: list[tuple[str | None, int | None, str]]) -> list[str]:
    """Addresses of the tasks TF's message names, by task or by address."""
    addresses = {m.group("address") for m in _ADDRESS.finditer(message)}
    for m in _TASK.finditer(message):
        for job, task, address in known:
            if job == m.group("job") and task == int(m.group("task")):
                addresses.add(address)
    return sorted(addresses)


def _first_line(message: str) -> str:
    lines = [ln.strip() for ln in message.splitlines() if ln.strip()]
    lines = [ln for ln in lines if ln != "Graph execution error:"]
    return lines[0] if lines else message.strip()


def _statuses(known: list[tuple[str | None, int | None, str]], wait: float) -> list[TaskStatus]:
    probes = probe_all([a for _, _, a in known], wait)
    return [
        TaskStatus(job, task, address, p.state, p.detail)
        for (job, task, address), p in zip(known, probes)
    ]


def _describe(statuses: list[TaskStatus]) -> str:
    return "; ".join(f"{s.name} is {s.state} ({s.detail})" for s in statuses)


def explain(
    err: Exception,
    spec: Any = None,
    target: str | None = None,
    timeout: float | None = None,
    probe_timeout: float = 1.0,
) -> Exception:
    """The error to raise instead of `err`: names the tasks at fault, their addresses, a hint.

    spec: the cluster (any form `as_spec` takes); target: the session's `grpc://` target;
    timeout: the session's operation timeout in seconds, quoted in the message. Errors other
    than Unavailable, DeadlineExceeded and Aborted come back unchanged.
    """
    if not isinstance(
        err,
        (tf.errors.UnavailableError, tf.errors.DeadlineExceededError, tf.errors.AbortedError),
    ) or isinstance(err, _PeerError):
        return err
    known = _known_tasks(spec, target)
    statuses = _statuses(known, probe_timeout)
    said = _first_line(err.message)
    if isinstance(err, tf.errors.DeadlineExceededError):
        silent = [s for s in statuses if s.state == SILENT]
        limit = f"the timeout of {timeout:g} s" if timeout else "the session's timeout"
        if silent:
            message = (
                f"no answer within {limit}: {_describe(silent)}. Hint: a stopped process "
                "resumes with `kill -CONT <pid>`; a hung one must be restarted (then restore "
                "from the last checkpoint)"
            )
        else:
            message = (
                f"the operation took longer than {limit}, yet every task answered a liveness "
                f"probe ({', '.join(s.name for s in statuses) or 'no tasks known'}). Hint: if "
                "the step is just slow, pass a larger timeout to the Session"
            )
        return PeerDeadlineError(err, f"{message}. TensorFlow said: {said}", statuses)
    if isinstance(err, tf.errors.AbortedError):
        message = (
            f"a task lost the session's state, most likely because it restarted "
            f"({_describe(statuses) or 'no tasks known'}). Hint: make a new session and "
            "restore the variables from the last checkpoint (devplace.cluster.Checkpointer)"
        )
        return PeerAbortedError(err, f"{message}. TensorFlow said: {said}", statuses)
    named = set(_mentioned(err.message, known))
    at_fault = [s for s in statuses if s.state == GONE or (s.address in named and s.state != ALIVE)]
    if not at_fault:
        at_fault = [s for s in statuses if s.address in named] or statuses
    message = (
        f"cannot reach {_describe(at_fault) or 'the cluster'}. Hint: the server process has "
        "died or was never started: start it again on the same address (LocalCluster.restart "
        "or `devplace cluster up`), make a new session and restore the variables from the last "
        "checkpoint"
    )
    return PeerUnavailableError(err, f"{message}. TensorFlow said: {said}", at_fault)
