"""Which task of a cluster this process serves: from a spec, from TF_CONFIG, or from Slurm.

Three ways to say it, each giving the whole spec, this task's job and index:

- a spec (file, JSON text or dict) with a job name and task index;
- the `TF_CONFIG` environment variable, `{"cluster": {...}, "task": {"type": ..., "index": ...}}`,
  as TensorFlow's own distribution strategies read it;
- a Slurm job step's environment (`srun`), resolved by TensorFlow's `SlurmClusterResolver`:
  one task per Slurm task, on port `port_base` (+1, +2 for further tasks on the same node).

Every refusal (`TaskConfigError`) names what is wrong and how to fix it.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from devplace.cluster import spec as specs
from devplace.core.errors import Error

__all__ = ["TaskConfig", "TaskConfigError", "from_slurm", "from_spec", "from_tf_config"]

_WAYS = (
    "name the task with --spec FILE --job NAME --task I, with the TF_CONFIG environment "
    "variable, or with --from-slurm inside `srun`"
)
# SlurmClusterResolver hands GPUs out in steps of `gpus_per_task` and fails on a step of 0, so
# a node without GPUs is described as one with more "GPUs" than tasks, and none are assigned.
_NO_GPUS = {"gpus_per_node": 1 << 16, "gpus_per_task": 1, "auto_set_gpu": False}


class TaskConfigError(Error, ValueError):
    """This process's task cannot be found; the message says why and how to name it."""


@dataclass(frozen=True)
class TaskConfig:
    """One task of a cluster: the whole spec, this task's job and index, where they came from."""

    spec: dict[str, dict[int, str]]
    job: str
    task: int
    source: str

    @property
    def name(self) -> str:
        """`/job:worker/task:1`."""
        return specs.task_name(self.job, self.task)

    @property
    def address(self) -> str:
        """This task's `host:port`."""
        return self.spec[self.job][self.task]

    def spec_json(self) -> str:
        """The spec as JSON text (what the server process and a spec file take)."""
        return json.dumps(
            {job: {str(i): a for i, a in sorted(tasks.items())} for job, tasks in self.spec.items()}
        )


def from_spec(spec: Any, job: str, task: int, source: str | None = None) -> TaskConfig:
    """The task `/job:<job>/task:<task>` of `spec` (any form `as_spec` takes)."""
    if source is None:
        is_text = isinstance(spec, str) and spec.strip().startswith("{")
        is_path = isinstance(spec, (str, os.PathLike)) and not is_text
        source = f"spec file {spec}" if is_path else "spec"
    try:
        table = specs.task_table(spec)
    except specs.ClusterSpecError as err:
        raise TaskConfigError(f"{err}. Hint: fix the spec, or {_WAYS}") from None
    if not isinstance(job, str) or isinstance(task, bool) or not isinstance(task, int):
        raise TaskConfigError(
            f"{source}: a task is a job name and an integer index, got job {job!r}, task "
            f"{task!r}. Hint: --job worker --task 0"
        )
    if task not in table.get(job, {}):
        raise TaskConfigError(
            f"{source} has no task {specs.task_name(job, task)}; its tasks are "
            f"{_listing(table)}. Hint: name one of those, or add this task to the spec"
        )
    return TaskConfig(table, job, task, source)


def _listing(table: dict[str, dict[int, str]]) -> str:
    return ", ".join(
        f"{specs.task_name(job, i)} at {a}"
        for job, tasks in table.items()
        for i, a in tasks.items()
    )


def from_tf_config(environ: Mapping[str, str] | None = None) -> TaskConfig:
    """The task named by `TF_CONFIG` (`{"cluster": ..., "task": {"type": ..., "index": ...}}`)."""
    text = (os.environ if environ is None else environ).get("TF_CONFIG", "").strip()
    example = (
        '{"cluster": {"worker": ["10.0.0.1:2222", ...]}, "task": {"type": "worker", "index": 0}}'
    )
    if not text:
        raise TaskConfigError(f"TF_CONFIG is not set (or empty). Hint: {_WAYS}")
    try:
        config = json.loads(text)
    except json.JSONDecodeError as err:
        raise TaskConfigError(
            f"TF_CONFIG is not valid JSON ({err}). Hint: it looks like {example}"
        ) from None
    task = config.get("task") if isinstance(config, dict) else None
    if not isinstance(config, dict) or "cluster" not in config or not isinstance(task, dict):
        raise TaskConfigError(
            f'TF_CONFIG needs a "cluster" and a "task" object, got {text[:200]!r}. '
            f"Hint: it looks like {example}"
        )
    job, index = task.get("type"), task.get("index", 0)
    if not isinstance(job, str) or isinstance(index, bool) or not isinstance(index, int):
        raise TaskConfigError(
            f'TF_CONFIG\'s task must have a "type" (a job name) and an integer "index", got '
            f"{json.dumps(task)}. Hint: it looks like {example}"
        )
    return from_spec(config["cluster"], job, index, source="TF_CONFIG")


def from_slurm(jobs: Mapping[str, int] | None = None, port_base: int = 8888) -> TaskConfig:
    """This Slurm task's task, by TensorFlow's `SlurmClusterResolver`.

    jobs: job name to number of tasks, filled in Slurm's task order (sorted by job name, as the
    resolver does); default: every Slurm task a `worker`. It reads `SLURM_PROCID`,
    `SLURM_STEP_NUM_TASKS`, `SLURM_STEP_NODELIST` and `SLURM_STEP_TASKS_PER_NODE`, which
    `srun` sets. On a node with at least one GPU per task the resolver gives each task its
    share (`CUDA_VISIBLE_DEVICES`); with fewer, the node's tasks share its GPUs.
    """
    from devplace.adapter._tf import tf

    gpus = "CUDA_VISIBLE_DEVICES" in os.environ or shutil.which("nvidia-smi") is not None
    # With GPUs, the resolver's own split first; it fails with fewer GPUs than tasks on a node.
    for extra in [{}, _NO_GPUS] if gpus else [_NO_GPUS]:
        try:
            resolver = tf.distribute.cluster_resolver.SlurmClusterResolver(
                jobs=dict(jobs) if jobs else None, port_base=int(port_base), **extra
            )
            cluster = resolver.cluster_spec()
            break
        except (RuntimeError, ValueError) as err:
            if extra is not _NO_GPUS:
                continue
            said = str(err).strip()
            said += "" if said.endswith((".", "?")) else "."
            raise TaskConfigError(
                f"the Slurm step's environment does not describe a cluster: {said} Hint: run "
                f"`devplace cluster serve --from-slurm` under `srun` (one task per server); "
                f"otherwise {_WAYS}"
            ) from None
    rank = os.environ.get("SLURM_PROCID")
    return from_spec(
        cluster.as_dict(), resolver.task_type, resolver.task_id, f"Slurm step (SLURM_PROCID={rank})"
    )
