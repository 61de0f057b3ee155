"""Serve this host's task of a cluster in the foreground until SIGTERM or Ctrl-C (SIGINT).

    devplace.cluster.serve("cluster.json", "worker", 1)       # or from TF_CONFIG, or Slurm

The task comes from a spec (`task_config`); before anything starts, its address must be one of
this host's and its port free (`host_checks`). The TF server runs in a child process
(`python -m devplace.cluster.server`), pinned to `cores` if asked, so a TF server, which can
never be stopped inside a process, goes away with it and the caller (a Python or Julia
session) is left as it was. Once the server accepts connections, one line says the task, its
address and "serving".
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from devplace.cluster import cores as core_sets
from devplace.cluster import host_checks, procs, task_config
from devplace.cluster.probe import ready_words, wait_ready
from devplace.core import atomic
from devplace.core.errors import DevplaceWarning, Error

__all__ = ["ServeError", "UnauthenticatedServerWarning", "serve"]


class ServeError(Error, RuntimeError):
    """The task's server could not start, or stopped on its own; the message says why."""


class UnauthenticatedServerWarning(DevplaceWarning):
    """The server is reachable on a public address, and TF servers have no authentication."""


def resolve_task(
    spec: Any = None,
    job: str | None = None,
    task: int | None = None,
    *,
    from_slurm: bool = False,
    slurm_jobs: Mapping[str, int] | None = None,
    port_base: int = 8888,
) -> task_config.TaskConfig:
    """This process's task: from `spec` with `job` and `task`, from Slurm, else from TF_CONFIG."""
    if from_slurm:
        if spec is not None or job is not None:
            raise task_config.TaskConfigError(
                "--from-slurm takes the spec from Slurm: leave out --spec, --job and --task"
            )
        return task_config.from_slurm(slurm_jobs, port_base)
    if spec is None:
        if job is not None or task is not None:
            raise task_config.TaskConfigError(
                "--job and --task need --spec FILE (or leave all three out to use TF_CONFIG)"
            )
        return task_config.from_tf_config()
    if job is None:
        raise task_config.TaskConfigError(
            f"--spec {spec} needs --job NAME (and --task I, default 0): which task is this?"
        )
    return task_config.from_spec(spec, job, 0 if task is None else task)


def _check_host(config: task_config.TaskConfig) -> None:
    host_checks.check_address(config.address)
    host_checks.check_port(host_checks.split_address(config.address)[1])
    public = host_checks.public_addresses()
    if public:
        warnings.warn(
            f"devplace: {config.name}'s TF server listens on every interface of this host, "
            f"also on the public address(es) {', '.join(public)}, port "
            f"{host_checks.split_address(config.address)[1]}, with no authentication: anyone "
            "who reaches it can run code as this user. Firewall the port to the cluster's "
            "hosts, or put the hosts on a private network (docs/cluster.md, Across machines)",
            UnauthenticatedServerWarning,
            stacklevel=3,
        )


def serve(
    spec: Any = None,
    job: str | None = None,
    task: int | None = None,
    *,
    from_slurm: bool = False,
    slurm_jobs: Mapping[str, int] | None = None,
    port_base: int = 8888,
    cores: str | int | Sequence[int] | None = None,
    cpus: int = 1,
    wait: float | None = None,
    write_spec: str | os.PathLike[str] | None = None,
    start_timeout: float = 120.0,
    out: TextIO | None = None,
) -> None:
    """Serve this host's task until SIGTERM or Ctrl-C (KeyboardInterrupt), then stop it.

    The task: `spec` (file, JSON text or dict) with `job` and `task` (default 0); or
    `from_slurm=True` (TensorFlow's `SlurmClusterResolver`: `slurm_jobs` such as
    `{"ps": 1, "worker": 3}`, default all workers, ports from `port_base`); or, with neither,
    the `TF_CONFIG` environment variable. `cores`: pin the server to a count K (the first K
    cores this process may use) or a core list (`"0-3"`, `[4, 5]`), with as many threads per
    pool. `cpus`: logical CPU devices. `wait`: after serving, also wait up to this many
    seconds until every task of the spec answers (`ClusterNotReadyError` otherwise).
    `write_spec`: write the whole spec there as JSON (for the chief). Lines go to `out`
    (default stdout). Raises `TaskConfigError`, `HostCheckError`, `CoresError` before
    starting anything, and `ServeError` if the server fails to start or dies.
    """
    out = out or sys.stdout
    config = resolve_task(
        spec, job, task, from_slurm=from_slurm, slurm_jobs=slurm_jobs, port_base=port_base
    )
    _check_host(config)
    pinned = core_sets.resolve(cores) if cores is not None else None
    if write_spec is not None:
        atomic.write_text(write_spec, config.spec_json() + "\n")
    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="devplace-serve-") as folder:
        ready, log = Path(folder) / "ready", Path(folder) / "server.log"
        proc = _start_server(config, int(cpus), pinned, ready, log)
        try:
            with procs.interrupted_by_signals():
                try:
                    procs.wait_ready({config.name: (proc, ready, log)}, start_timeout)
                except procs.ProcessStartError as err:
                    raise ServeError(f"{config.name} did not start: {err}") from None
                where = f"; cores {core_sets.describe(pinned)}" if pinned else ""
                print(
                    f"devplace: {config.name} at {config.address} serving (pid {proc.pid}; "
                    f"from {config.source}{where}; started in {time.monotonic() - began:.1f} s)",
                    file=out,
                    flush=True,
                )
                _hold(config, proc, log, wait, out)
        except KeyboardInterrupt:
            pass
        finally:
            procs.stop(proc.pid, proc=proc, grace=5.0)
    print(f"devplace: {config.name} stopped", file=out, flush=True)


def _start_server(
    config: task_config.TaskConfig,
    cpus: int,
    pinned: list[int] | None,
    ready: Path,
    log: Path,
) -> subprocess.Popen[bytes]:
    """The task's TF server in a child process, logging to `log`, `ready` once it listens."""
    command = [sys.executable, "-m", "devplace.cluster.server", "--spec", config.spec_json()]
    command += ["--job", config.job, "--task", str(config.task), "--cpus", str(cpus)]
    command += ["--ready-file", str(ready), "--exit-with-parent"]
    if pinned:
        command += ["--cores", core_sets.describe(pinned)]
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", PYTHONUNBUFFERED="1")
    with open(log, "wb") as sink:
        return subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,  # Ctrl-C reaches this process, which stops the server
        )


def _hold(
    config: task_config.TaskConfig,
    proc: subprocess.Popen[bytes],
    log: Path,
    wait: float | None,
    out: TextIO,
) -> None:
    """Wait (for every task to answer first, with `wait`) until interrupted; a server that
    exits on its own raises `ServeError` with its last log lines."""
    if wait is not None:
        took = wait_ready(config.spec, wait)
        count = sum(len(tasks) for tasks in config.spec.values())
        print(
            f"devplace: cluster ready, {ready_words(count)} ({took:.1f} s)",
            file=out,
            flush=True,
        )
    while proc.poll() is None:
        time.sleep(0.2)
    raise ServeError(
        f"{config.name}'s server exited on its own with status {proc.returncode}. "
        f"Its last log lines:\n{procs.log_tail(log, 12)}"
    )
