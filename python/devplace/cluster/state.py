"""The state file of a running local cluster: who owns it and its processes, by PID.

`devplace cluster up` writes it; `devplace cluster down` reads it to stop that cluster. Each
PID is stored with its start time, so a PID the system has since given to another process is
never signalled.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from devplace.cluster import procs
from devplace.core import atomic

__all__ = ["ClusterState", "ProcessEntry", "default_state_file", "read_state", "stop_cluster"]


def default_state_file() -> Path:
    """`$DEVPLACE_CLUSTER_STATE`, else `~/.cache/devplace/cluster-state.json`."""
    if env := os.environ.get("DEVPLACE_CLUSTER_STATE"):
        return Path(env)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "devplace" / "cluster-state.json"


@dataclass
class ProcessEntry:
    """One process of the cluster: its role (`ps/0`, `forwarder`), PID and start time."""

    role: str
    pid: int
    started: int | None


@dataclass
class ClusterState:
    """What `cluster down` needs: the owner process, the cluster's processes, the spec.

    stop_owner: `cluster down` signals the owner first (true for `devplace cluster up`, whose
    job is to hold the cluster; false for a Python process that started a `LocalCluster`).
    """

    owner: ProcessEntry
    processes: list[ProcessEntry] = field(default_factory=list)
    spec: dict[str, list[str]] = field(default_factory=dict)
    spec_file: str = ""
    isolated: bool = False
    stop_owner: bool = False

    def write(self, path: str | os.PathLike[str]) -> Path:
        """Write the state as JSON (atomically) and return the path."""
        return atomic.write_text(path, json.dumps(asdict(self), indent=2) + "\n")

    def running(self) -> bool:
        """Whether the owner or any of the processes still runs."""
        entries = [self.owner, *self.processes]
        return any(procs.alive(e.pid, e.started) for e in entries)


def _entry(raw: Any, path: Path) -> ProcessEntry:
    try:
        return ProcessEntry(str(raw["role"]), int(raw["pid"]), raw.get("started"))
    except (KeyError, TypeError, ValueError):
        raise ValueError(f"cluster state file {path}: unreadable process entry {raw!r}") from None


def read_state(path: str | os.PathLike[str]) -> ClusterState | None:
    """The state in `path`, or None if there is no such file."""
    path = Path(path)
    if not path.exists():
        return None
    try:
        raw = json.loads(path.read_text())
        return ClusterState(
            owner=_entry(raw["owner"], path),
            processes=[_entry(p, path) for p in raw.get("processes", [])],
            spec=dict(raw.get("spec", {})),
            spec_file=str(raw.get("spec_file", "")),
            isolated=bool(raw.get("isolated", False)),
            stop_owner=bool(raw.get("stop_owner", False)),
        )
    except (json.JSONDecodeError, KeyError, TypeError) as err:
        raise ValueError(
            f"cluster state file {path} is damaged ({err}); stop the processes by hand and "
            "delete the file"
        ) from None


def stop_cluster(path: str | os.PathLike[str], grace: float = 10.0) -> list[str]:
    """Stop the cluster recorded in `path` by PID and remove the file; the roles that ran.

    An owner that is `devplace cluster up` is asked first, so it stops its servers itself;
    whatever still runs after `grace` seconds is stopped directly.
    """
    path = Path(path)
    state = read_state(path)
    if state is None:
        return []
    entries = ([state.owner] if state.stop_owner else []) + state.processes
    running = [e.role for e in entries if procs.alive(e.pid, e.started)]
    for entry in entries:
        procs.stop(entry.pid, started=entry.started, grace=grace if entry is state.owner else 5.0)
    path.unlink(missing_ok=True)
    return running
