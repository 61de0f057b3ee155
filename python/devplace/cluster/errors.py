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

from devplace.adapter._tf import tf
from devplace.cluster import spec as specs
from devplace.cluster.probe import ALIVE, GONE, SILENT, probe_all
from devplace.core.errors import Error

__all__ = [
    "PEER_FAILURES",
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


class _PeerError(Error):
    """What the peer errors add to TF's: the probed tasks, the tasks at fault, TF's error."""

    def __init__(self, original: Any, message: str, statuses: list[TaskStatus]):
        super().__init__(original.node_def, original.op, message)  # type: ignore[call-arg]
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


class PeerUnavailableError(_PeerError, tf.errors.UnavailableError):
    """A task of the cluster is gone (its process died or never started)."""


class PeerDeadlineError(_PeerError, tf.errors.DeadlineExceededError):
    """An operation outlived the session's timeout, usually because a task stopped answering."""


class PeerAbortedError(_PeerError, tf.errors.AbortedError):
    """A task restarted under a running session: its state (variables, graphs) is gone."""


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
    """Addresses of the tasks TF's message names: by address (the one it could not reach),
    else by task name (which may be the task reporting the failure)."""
    addresses = {m.group("address") for m in _ADDRESS.finditer(message)}
    if addresses:
        return sorted(addresses)
    for m in _TASK.finditer(message):
        for job, task, address in known:
            if job == m.group("job") and task == int(m.group("task")):
                addresses.add(address)
    return sorted(addresses)


_CODES = {
    "UNAVAILABLE": tf.errors.UnavailableError,
    "DEADLINE_EXCEEDED": tf.errors.DeadlineExceededError,
    "ABORTED": tf.errors.AbortedError,
}

#: The TF errors a failing peer causes: retry them (after a restart) or explain them.
PEER_FAILURES: tuple[type[Exception], ...] = tuple(_CODES.values())

_SECTION = re.compile(r"^(?P<code>[A-Z_]+): (?P<text>.*)$", re.MULTILINE)


def _cause(err: Any) -> tuple[type | None, str]:
    """The peer error behind `err` and TF's words for it.

    When several tasks fail at once TF raises the first status (often a CANCELLED receive)
    and lists all of them as `CODE: text` sections; the peer failure is among those.
    """
    for kind in _CODES.values():
        if isinstance(err, kind):
            return kind, _first_line(err.message)
    lines = err.message.splitlines()
    for found in _SECTION.finditer(err.message):
        if found.group("code") in _CODES:
            index = err.message[: found.start()].count("\n")
            text = " ".join([found.group("text"), *lines[index + 1 : index + 2]]).strip()
            return _CODES[found.group("code")], text[:300]
    return None, ""


def _first_line(message: str) -> str:
    """TF's first meaningful line, with the next one when it only says where (`From ...:`)."""
    lines = [ln.strip() for ln in message.splitlines()]
    lines = [ln for ln in lines if re.search("[A-Za-z]", ln) and ln != "Graph execution error:"]
    if not lines:
        return message.strip()[:300]
    said = " ".join(lines[:2]) if lines[0].endswith(":") else lines[0]
    return said[:300]


def _statuses(known: list[tuple[str | None, int | None, str]], wait: float) -> list[TaskStatus]:
    probes = probe_all([a for _, _, a in known], wait)
    return [
        TaskStatus(job, task, address, p.state, p.detail)
        for (job, task, address), p in zip(known, probes, strict=True)
    ]


def _describe(statuses: list[TaskStatus]) -> str:
    return "; ".join(f"{s.name} is {s.state} ({s.detail})" for s in statuses)


_RESTART = (
    "Hint: the server process has died or was never started: start it again on the same "
    "address (`devplace cluster serve` on its host, LocalCluster.restart, or `devplace "
    "cluster up`), then make a new session and restore the variables from the last "
    "checkpoint (Checkpointer.reconnect)"
)
_RESTORE = (
    ", and a restarted task has lost its variables and graphs. Hint: make a new session and "
    "restore the variables from the last checkpoint (Checkpointer.reconnect)"
)


def _verdict(
    kind: type,
    statuses: list[TaskStatus],
    err: Any,
    known: list[tuple[str | None, int | None, str]],
    spec: Any,
    timeout: float | None,
) -> tuple[str, list[TaskStatus]]:
    """What happened, with a hint, and the tasks at fault, from what the probes found."""
    gone = [s for s in statuses if s.state == GONE]
    silent = [s for s in statuses if s.state == SILENT]
    if kind is tf.errors.AbortedError:
        return (
            f"a task lost the session's state, most likely because it restarted{_RESTORE}",
            statuses,
        )
    if gone:
        return f"{_describe(gone)}. {_RESTART}", gone
    if silent:
        limit = f"within the timeout of {timeout:g} s" if timeout else "in time"
        return (
            f"no answer {limit}: {_describe(silent)}. Hint: a stopped process resumes with "
            "`kill -CONT <pid>`; a hung one must be restarted (then restore from the last "
            "checkpoint)",
            silent,
        )
    if kind is tf.errors.DeadlineExceededError:
        return _slow(statuses, spec, timeout), []
    named = set(_mentioned(err.message, known))
    at_fault = [s for s in statuses if s.address in named] or statuses
    return (
        f"TensorFlow could not reach {', '.join(s.name for s in at_fault)}, which "
        f"answers now: it has probably just restarted{_RESTORE}",
        at_fault,
    )


def _slow(statuses: list[TaskStatus], spec: Any, timeout: float | None) -> str:
    """A deadline passed though every task answers."""
    limit = f"the timeout of {timeout:g} s" if timeout else "the session's timeout"
    answering = ", ".join(s.name for s in statuses) or "no tasks known"
    message = f"the operation took longer than {limit}, yet every task answers ({answering})"
    if spec is None:  # a plain session knows its master only
        return message + (
            ". Another task of the master's cluster may be dead or hung (TF retries it "
            "until the deadline). Hint: make the session with devplace.cluster."
            "ClusterSession(spec, job, task) to have that task named, or run `devplace "
            "cluster wait SPEC`; if the step is just slow, pass a larger timeout"
        )
    return message + ". Hint: if the step is just slow, pass a larger timeout to the Session"


_PEER_ERRORS = {
    tf.errors.AbortedError: PeerAbortedError,
    tf.errors.DeadlineExceededError: PeerDeadlineError,
    tf.errors.UnavailableError: PeerUnavailableError,
}


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
    than Unavailable, DeadlineExceeded and Aborted (alone, or among the statuses of a
    multi-task failure) come back unchanged.
    """
    if not isinstance(err, tf.errors.OpError) or isinstance(err, _PeerError):
        return err
    kind, said = _cause(err)
    if kind is None:
        return err
    known = _known_tasks(spec, target)
    # without a spec, the peers TF's message names by address are the tasks we know of
    for found in _ADDRESS.finditer(err.message):
        if all(found["address"] != a for _, _, a in known):
            known.append((None, None, found["address"]))
    statuses = _statuses(known, probe_timeout)
    message, at_fault = _verdict(kind, statuses, err, known, spec, timeout)
    tail = f". TensorFlow said: {said}" if said else ""
    return _PEER_ERRORS[kind](err, message + tail, at_fault)
