"""Cluster specs: jobs, their tasks and addresses, validated, as plain values and JSON.

A spec is TF's `tf.train.ClusterSpec`; every function here also takes the plain forms a user
(or the Julia side) has at hand: a dict `{"ps": ["127.0.0.1:2222"], "worker": [...]}`, its
JSON text, or a path to a JSON file. Malformed specs raise `ClusterSpecError` naming the job,
task and address at fault. Only `as_spec` loads TensorFlow: a process that just reads a spec
(`devplace cluster serve` before it starts its server, `wait_ready`) does not pay for it.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from devplace.adapter.devices import Device, canonical_device
from devplace.core import atomic
from devplace.core.errors import Error
from devplace.core.formatting import article

__all__ = [
    "ClusterSpecError",
    "SpecLike",
    "address",
    "as_spec",
    "device",
    "devices",
    "jobs",
    "read_spec",
    "spec_dict",
    "target",
    "task_table",
    "task_at",
    "task_name",
    "tasks",
    "write_spec",
]

SpecLike = (
    Any  # tf.train.ClusterSpec | Mapping[str, Sequence[str] | Mapping[int, str]] | str | Path
)

_JOB = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_ADDRESS = re.compile(r"(?P<host>[A-Za-z0-9_.\-]+|\[[0-9A-Fa-f:.]+\]):(?P<port>[0-9]{1,5})\Z")
_HINT = 'a spec looks like {"ps": ["127.0.0.1:2222"], "worker": ["127.0.0.1:2223"]}'


class ClusterSpecError(Error, ValueError):
    """A cluster spec that cannot be used; the message names the part at fault."""


def _check_address(job: str, task: int, addr: object) -> str:
    if not isinstance(addr, str) or not (found := _ADDRESS.match(addr.strip())):
        raise ClusterSpecError(
            f"cluster spec: task /job:{job}/task:{task} has address {addr!r}; "
            f"expected 'host:port', e.g. '127.0.0.1:2222'"
        )
    port = int(found.group("port"))
    if not 0 < port < 65536:
        raise ClusterSpecError(
            f"cluster spec: task /job:{job}/task:{task} at {addr!r} has port {port}, "
            "which is not in 1..65535"
        )
    return addr.strip()


def _job_tasks(job: str, tasks_: object) -> dict[int, str]:
    if isinstance(tasks_, str) or not isinstance(tasks_, (Sequence, Mapping)):
        raise ClusterSpecError(
            f"cluster spec: job {job!r} must list its task addresses, got {tasks_!r}; {_HINT}"
        )
    if isinstance(tasks_, Mapping):
        items = []
        for key, addr in tasks_.items():
            try:
                index = int(key)
            except (TypeError, ValueError):
                index = -1
            if index < 0 or isinstance(key, bool):
                raise ClusterSpecError(
                    f"cluster spec: job {job!r} has task index {key!r}; "
                    "task indices are non-negative integers"
                )
            items.append((index, addr))
    else:
        items = list(enumerate(tasks_))
    if not items:
        raise ClusterSpecError(f"cluster spec: job {job!r} has no tasks; {_HINT}")
    return {index: _check_address(job, index, addr) for index, addr in sorted(items)}


def _from_mapping(jobs_: Mapping[Any, Any]) -> dict[str, dict[int, str]]:
    if not jobs_:
        raise ClusterSpecError(f"cluster spec is empty; {_HINT}")
    checked: dict[str, dict[int, str]] = {}
    for job, tasks_ in jobs_.items():
        if not isinstance(job, str) or not _JOB.match(job):
            raise ClusterSpecError(
                f"cluster spec: job name {job!r} is not an identifier like 'ps' or 'worker'"
            )
        checked[job] = _job_tasks(job, tasks_)
    seen: dict[str, str] = {}
    for job, by_index in checked.items():
        for index, addr in by_index.items():
            name = f"/job:{job}/task:{index}"
            if addr in seen:
                raise ClusterSpecError(
                    f"cluster spec: tasks {seen[addr]} and {name} share the address {addr}; "
                    "every task needs its own port"
                )
            seen[addr] = name
    return checked


def _load_text(text: str, origin: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise ClusterSpecError(f"cluster spec {origin}: not valid JSON ({err}); {_HINT}") from None


def task_table(spec: SpecLike) -> dict[str, dict[int, str]]:
    """The validated spec as `{job: {task index: address}}`, without loading TensorFlow.

    Takes a ClusterSpec, dict, JSON text, or JSON file path; a JSON file may hold the spec
    itself or an object with a `"cluster"` key (TF_CONFIG style).
    """
    if hasattr(spec, "as_dict") and hasattr(spec, "task_address"):  # a tf.train.ClusterSpec
        raw: Any = spec.as_dict()
    elif isinstance(spec, Mapping):
        raw = spec
    elif isinstance(spec, (str, os.PathLike)):
        text = str(spec).strip()
        if text.startswith("{"):
            raw = _load_text(text, "text")
        else:
            path = Path(spec)
            if not path.is_file():
                raise ClusterSpecError(
                    f"cluster spec {str(spec)!r} is neither JSON text nor a file that exists; "
                    f"{_HINT}"
                )
            raw = _load_text(path.read_text(), f"file {str(path)!r}")
    else:
        raise ClusterSpecError(
            f"cluster spec: {article(type(spec).__name__)} is not a spec; give a dict, JSON text, "
            f"a JSON file path or a tf.train.ClusterSpec; {_HINT}"
        )
    if isinstance(raw, Mapping) and isinstance(raw.get("cluster"), Mapping):
        raw = raw["cluster"]
    if not isinstance(raw, Mapping):
        raise ClusterSpecError(f"cluster spec must be a JSON object of jobs, got {raw!r}; {_HINT}")
    return _from_mapping(raw)


def as_spec(spec: SpecLike) -> Any:
    """A validated `tf.train.ClusterSpec` from any form `task_table` takes."""
    from devplace.adapter._tf import tf

    checked = task_table(spec)
    dense = {
        job: [by_index[i] for i in range(len(by_index))]
        for job, by_index in checked.items()
        if sorted(by_index) == list(range(len(by_index)))
    }
    return tf.train.ClusterSpec(dense if len(dense) == len(checked) else checked)


def spec_dict(spec: SpecLike) -> dict[str, list[str]]:
    """The spec as a plain dict of job name to task addresses, in task order.

    Sparse jobs (tasks 0 and 2 only) cannot be lists: use `tasks` and `address` for those.
    """
    out: dict[str, list[str]] = {}
    for job, by_index in task_table(spec).items():
        indices = sorted(by_index)
        if indices != list(range(len(indices))):
            raise ClusterSpecError(
                f"cluster spec: job {job!r} has tasks {indices}, not 0..n-1; it has no list form"
            )
        out[job] = [by_index[i] for i in indices]
    return out


def jobs(spec: SpecLike) -> list[str]:
    """The job names, sorted."""
    return sorted(task_table(spec))


def _job(table: dict[str, dict[int, str]], job: str) -> dict[int, str]:
    if job not in table:
        raise ClusterSpecError(
            f"cluster spec has no job {job!r}; its jobs are {', '.join(sorted(table))}"
        )
    return table[job]


def tasks(spec: SpecLike, job: str) -> list[int]:
    """The task indices of `job`."""
    return sorted(_job(task_table(spec), job))


def address(spec: SpecLike, job: str, task: int = 0) -> str:
    """The `host:port` of one task."""
    by_index = _job(task_table(spec), job)
    if int(task) not in by_index:
        raise ClusterSpecError(
            f"cluster spec: job {job!r} has no task {task}; its tasks are {sorted(by_index)}"
        )
    return by_index[int(task)]


def target(spec: SpecLike, job: str = "worker", task: int = 0) -> str:
    """The session target of one task, e.g. `grpc://127.0.0.1:2222`."""
    return f"grpc://{address(spec, job, task)}"


def task_name(job: str, task: int) -> str:
    """The short name of a task, `/job:ps/task:0`."""
    return f"/job:{job}/task:{int(task)}"


def task_at(spec: SpecLike, addr: str) -> tuple[str, int] | None:
    """The `(job, task)` listening at `addr` (`host:port` or `grpc://host:port`), if any."""
    addr = addr.removeprefix("grpc://")
    for job, by_index in task_table(spec).items():
        for index, task_address in sorted(by_index.items()):
            if task_address == addr:
                return job, index
    return None


def device(job: str, task: int = 0, kind: str | None = None, index: int = 0) -> str:
    """A remote device string: `device("ps", 0) == "/job:ps/task:0"`, the device type left to
    TensorFlow as `replica_device_setter` leaves it (the task's GPU:0 where it has a GPU, else
    its CPU:0); `device("ps", 0, "CPU") == "/job:ps/task:0/device:CPU:0"`."""
    if not isinstance(job, str) or not _JOB.match(job):
        raise ClusterSpecError(f"device: job name {job!r} is not an identifier like 'ps'")
    if kind is None:
        return canonical_device(Device(job=job, task=int(task)))
    return canonical_device(
        Device(job=job, task=int(task), device_type=str(kind).upper(), device_index=int(index))
    )


def devices(spec: SpecLike, job: str, kind: str | None = None, index: int = 0) -> list[str]:
    """One device string per task of `job`, e.g. the ps devices for `round_robin`, which then
    places as `replica_device_setter` does (see `device` for `kind`)."""
    return [device(job, task, kind, index) for task in tasks(spec, job)]


def read_spec(path: str | os.PathLike[str]) -> Any:
    """Read and validate a spec JSON file."""
    path = Path(path)
    if not path.is_file():
        raise ClusterSpecError(f"cluster spec file {str(path)!r} does not exist")
    return as_spec(path)


def write_spec(spec: SpecLike, path: str | os.PathLike[str]) -> Path:
    """Write the spec as JSON with the jobs at the top level; returns the path."""
    return atomic.write_text(path, json.dumps(spec_dict(spec), indent=2) + "\n")
