"""A local cluster of real TF server processes on loopback ports, as a context manager.

    with LocalCluster(ps=1, workers=2) as cluster:
        sess = cluster.session()          # a ClusterSession on /job:worker/task:0
        cluster.spec                      # {"ps": ["127.0.0.1:41234"], "worker": [...]}

Where the OS allows it (root: `unshare -n`), the servers run in a loopback-only network
namespace and a forwarder joins each spec address on this machine's `127.0.0.1` to the same
port inside, so nothing beyond this machine can reach them. Otherwise the servers listen on
every interface (TF cannot bind loopback only) and `InsecureClusterWarning` says so, once.
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

from devplace.cluster import cores as core_sets
from devplace.cluster import netns, procs
from devplace.cluster import spec as specs
from devplace.cluster.ready import wait_usable
from devplace.cluster.state import ClusterState, ProcessEntry
from devplace.cluster.task_logs import TASK_LOGS
from devplace.core.errors import DevplaceWarning, Error

__all__ = ["ClusterStartError", "InsecureClusterWarning", "LocalCluster"]

_FORWARDER = "forwarder"
_warned = False


class ClusterStartError(Error, RuntimeError):
    """The local cluster could not be started; the message says which process and why."""


class InsecureClusterWarning(DevplaceWarning):
    """TF servers are listening on every interface without authentication."""


def _warn_exposed(reason: str, ports: list[int]) -> None:
    global _warned
    if _warned:
        return
    _warned = True
    warnings.warn(
        "devplace: cannot run the cluster in a loopback-only network namespace "
        f"({reason}). Its TF servers listen on EVERY network interface of this machine, "
        f"ports {', '.join(map(str, ports))}, with no authentication: anyone who can reach "
        "them can run code in them. Run as root with util-linux installed (so `unshare -n` "
        "and `nsenter` work), or firewall these ports, or stop the cluster as soon as you are "
        "done. (Shown once per process.)",
        InsecureClusterWarning,
        stacklevel=3,
    )


def _count(name: str, value: Any, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ValueError(f"LocalCluster: {name} must be an integer >= {least}, got {value!r}")
    return value


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LocalCluster:
    """Real TF server processes for jobs `ps` (`ps` tasks) and `worker` (`workers` tasks).

    cpus: logical CPU devices per server (`/job:worker/task:1/device:CPU:1` needs 2).
    cores_per_task: pin each server to its own K cores (CPU affinity; ps tasks first, then
        workers, in the order of this process's usable cores), give its intra-op pool K threads
        and its inter-op pool K + 1 (the spare one answers RPCs), and run its compute threads
        below its RPC threads (`cores.yield_to_messages`); more cores than this process may use
        in all is refused (`CoresError`). None (default): no pinning, TF's own pool sizes.
    isolate: None (a loopback-only namespace if possible, else warn once), True (required:
        fail if impossible), False (never; warns).
    spec_file: where to write the spec JSON (default: `cluster.json` in `workdir`).
    state_file: where to record the PIDs for `devplace cluster down` (default: nowhere).
    workdir: logs, ready files and the spec (default: a temporary folder removed at stop).
    start_timeout: seconds the servers may take to start (each imports TF: ~3 s on its own).
    stop_owner: let `devplace cluster down` stop this process too (what `cluster up` wants).
    """

    def __init__(
        self,
        ps: int = 1,
        workers: int = 2,
        *,
        cpus: int = 1,
        cores_per_task: int | None = None,
        isolate: bool | None = None,
        spec_file: str | os.PathLike[str] | None = None,
        state_file: str | os.PathLike[str] | None = None,
        workdir: str | os.PathLike[str] | None = None,
        start_timeout: float = 60.0,
        stop_owner: bool = False,
    ):
        self.tasks = {"ps": _count("ps", ps, 0), "worker": _count("workers", workers, 1)}
        self.cpus = _count("cpus", cpus, 1)
        roles = [f"{job}/{task}" for job, count in self.tasks.items() for task in range(count)]
        #: The cores each server is pinned to, by role (`{"ps/0": [0], "worker/0": [1]}`);
        #: empty without `cores_per_task`.
        self.cores: dict[str, list[int]] = (
            core_sets.assign(roles, _count("cores_per_task", cores_per_task, 1))
            if cores_per_task is not None
            else {}
        )
        self.isolate = isolate
        self.start_timeout = float(start_timeout)
        self._spec_file = Path(spec_file) if spec_file is not None else None
        self.state_file = Path(state_file) if state_file is not None else None
        self._workdir = Path(workdir) if workdir is not None else None
        self._own_workdir = workdir is None
        self._stop_owner = stop_owner
        self._procs: dict[str, subprocess.Popen[bytes]] = {}
        self._reaper: subprocess.Popen[bytes] | None = None
        self._spec: dict[str, list[str]] = {}
        self.isolated = False
        self.start_seconds: dict[str, float] = {}

    # -- plain-value views (usable from Julia) ---------------------------------------------

    @property
    def spec(self) -> dict[str, list[str]]:
        """The cluster spec as a dict of job to `127.0.0.1:port` addresses."""
        self._check_started()
        return {job: list(addrs) for job, addrs in self._spec.items()}

    @property
    def cluster_spec(self) -> Any:
        """The cluster spec as a `tf.train.ClusterSpec`."""
        return specs.as_spec(self.spec)

    @property
    def spec_file(self) -> Path:
        """The JSON file the spec was written to."""
        self._check_started()
        assert self._spec_file is not None
        return self._spec_file

    @property
    def workdir(self) -> Path:
        """The folder with the servers' logs (`ps-0.log`, ...)."""
        self._check_started()
        assert self._workdir is not None
        return self._workdir

    def address(self, job: str = "worker", task: int = 0) -> str:
        """The `127.0.0.1:port` of a task."""
        return specs.address(self.spec, job, task)

    def target(self, job: str = "worker", task: int = 0) -> str:
        """The session target of a task, `grpc://127.0.0.1:port`."""
        return specs.target(self.spec, job, task)

    def pid(self, job: str, task: int = 0) -> int:
        """The PID of a task's server process."""
        self.address(job, task)
        return self._procs[f"{job}/{int(task)}"].pid

    @property
    def pids(self) -> dict[str, int]:
        """PIDs by role: `{"ps/0": ..., "worker/0": ..., "forwarder": ...}`."""
        return {role: proc.pid for role, proc in self._procs.items()}

    def exited(self) -> dict[str, int]:
        """The processes that have exited on their own (or been killed), with their status."""
        return {
            role: code for role, proc in self._procs.items() if (code := proc.poll()) is not None
        }

    def session(self, job: str = "worker", task: int = 0, **kwargs: Any) -> Any:
        """A `ClusterSession` on a task (keywords go to `devplace.Session`)."""
        from devplace.cluster.session import ClusterSession

        return ClusterSession(self.spec, job, task, **kwargs)

    # -- life cycle ------------------------------------------------------------------------

    def __enter__(self) -> LocalCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> LocalCluster:
        """Start every server and wait until all listen; returns self."""
        if self._procs:
            raise ClusterStartError("LocalCluster: already started; stop() it first")
        began = time.monotonic()
        if self._workdir is None:
            self._workdir = Path(tempfile.mkdtemp(prefix="devplace-cluster-"))
        self._workdir.mkdir(parents=True, exist_ok=True)
        if self._spec_file is None:
            self._spec_file = self._workdir / "cluster.json"
        atexit.register(self.stop)
        try:
            self._start_reaper()
            ports = self._open_ports()
            self._spec = {
                job: [f"127.0.0.1:{ports.pop(0)}" for _ in range(count)]
                for job, count in self.tasks.items()
                if count
            }
            specs.write_spec(self._spec, self._spec_file)
            roles = [
                f"{job}/{task}" for job, addrs in self._spec.items() for task in range(len(addrs))
            ]
            self._launch(roles)
        except BaseException:
            self.stop()
            raise
        self.start_seconds["total"] = time.monotonic() - began
        self._write_state()
        return self

    def _start_reaper(self) -> None:
        """The process that cleans up if this one dies without stop() (even by SIGKILL)."""
        leftovers = [self._workdir] if self._own_workdir else []
        if self.state_file is not None:
            leftovers.append(self.state_file)
        self._reaper = subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("reaper.py"))]
            + [f"--remove={path}" for path in leftovers],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            start_new_session=True,
        )

    def _open_ports(self) -> list[int]:
        count = sum(self.tasks.values())
        if self.isolate is not False:
            ok, reason = netns.supported()
            if ok:
                self.isolated = True
                return self._start_forwarder(count)
            if self.isolate:
                raise ClusterStartError(
                    f"LocalCluster(isolate=True): no loopback-only network namespace here: "
                    f"{reason}. Hint: run as root, or pass isolate=None to run unisolated"
                )
        else:
            reason = "isolate=False was asked for"
        ports = []
        while len(ports) < count:
            port = _free_port()
            if port not in ports:
                ports.append(port)
        _warn_exposed(reason, ports)
        return ports

    def _start_forwarder(self, count: int) -> list[int]:
        assert self._workdir is not None
        listeners = [socket.create_server(("127.0.0.1", 0), backlog=64) for _ in range(count)]
        try:
            fds = [s.fileno() for s in listeners]
            script = Path(__file__).with_name("forward.py")
            command = [sys.executable, str(script), "--fds", ",".join(map(str, fds))]
            self._spawn(_FORWARDER, command, pass_fds=fds)
            return [int(s.getsockname()[1]) for s in listeners]
        finally:
            for sock in listeners:
                sock.close()

    def _server_command(self, role: str) -> list[str]:
        job, task = role.split("/")
        prefix = netns.join_command(self._procs[_FORWARDER].pid) if self.isolated else []
        return (
            prefix
            + [
                sys.executable,
                "-m",
                "devplace.cluster.server",
                "--spec",
                str(self.spec_file),
                "--job",
                job,
                "--task",
                task,
                "--cpus",
                str(self.cpus),
                "--exit-with-parent",
            ]
            + (["--cores", core_sets.describe(self.cores[role])] if role in self.cores else [])
        )

    def _ready_file(self, role: str) -> Path:
        assert self._workdir is not None
        return self._workdir / (role.replace("/", "-") + ".ready")

    def _log_file(self, role: str) -> Path:
        assert self._workdir is not None
        return self._workdir / (role.replace("/", "-") + ".log")

    def _spawn(self, role: str, command: list[str], pass_fds: list[int] | None = None) -> None:
        ready = self._ready_file(role)
        ready.unlink(missing_ok=True)
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", PYTHONUNBUFFERED="1")
        with open(self._log_file(role), "ab") as log:
            self._procs[role] = subprocess.Popen(
                [*command, "--ready-file", str(ready)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                pass_fds=pass_fds or (),
                start_new_session=True,  # Ctrl-C in a terminal reaches the launcher only
            )
        if self._reaper is not None:
            assert self._reaper.stdin is not None
            pid = self._procs[role].pid
            self._reaper.stdin.write(f"{pid} {procs.start_time(pid)!r}\n".encode())
            self._reaper.stdin.flush()
        if role == _FORWARDER:
            self._wait([role], 20.0)

    def _launch(self, roles: list[str]) -> None:
        for role in roles:
            self._spawn(role, self._server_command(role))
            job, task = role.split("/")
            TASK_LOGS[self.target(job, int(task))] = self._log_file(role)
        self._wait(roles, self.start_timeout)

    def _wait(self, roles: list[str], timeout: float) -> None:
        waiting = {
            role: (self._procs[role], self._ready_file(role), self._log_file(role))
            for role in roles
        }
        try:
            self.start_seconds.update(procs.wait_ready(waiting, timeout))
        except procs.ProcessStartError as err:
            raise ClusterStartError(f"LocalCluster: {err}") from None

    def _write_state(self) -> None:
        if self.state_file is None:
            return
        entries = [
            ProcessEntry(role, proc.pid, procs.start_time(proc.pid))
            for role, proc in self._procs.items()
        ]
        ClusterState(
            owner=ProcessEntry(
                "devplace cluster up" if self._stop_owner else "python (LocalCluster)",
                os.getpid(),
                procs.start_time(os.getpid()),
            ),
            processes=entries,
            spec=self._spec,
            spec_file=str(self._spec_file),
            isolated=self.isolated,
            stop_owner=self._stop_owner,
        ).write(self.state_file)

    def stop(self) -> None:
        """Stop every process (SIGTERM, then SIGKILL after 5 s) and clean up. Idempotent."""
        atexit.unregister(self.stop)
        targets = [
            specs.target(self._spec, job, task)
            for job, addresses in self._spec.items()
            for task in range(len(addresses))
        ]
        if "devplace.adapter.session" in sys.modules:  # else this process has no sessions
            from devplace.adapter.session import close_sessions

            close_sessions(targets)  # while their masters answer: at once
        for role in sorted(self._procs, key=lambda r: r == _FORWARDER):
            proc = self._procs[role]
            procs.stop(proc.pid, proc=proc, grace=5.0)
        self._procs.clear()
        for target in targets:
            TASK_LOGS.pop(target, None)
        self._spec = {}
        if self._reaper is not None:
            assert self._reaper.stdin is not None
            self._reaper.stdin.close()  # end of input: it finds nothing left and exits
            try:
                self._reaper.wait(5.0)
            except subprocess.TimeoutExpired:
                procs.stop(self._reaper.pid, proc=self._reaper, grace=1.0)
            self._reaper = None
        if self.state_file is not None:
            self.state_file.unlink(missing_ok=True)
        if self._own_workdir and self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None
            self._spec_file = None

    # -- failures on purpose (tests, demonstrations) ---------------------------------------

    def _proc(self, job: str, task: int) -> subprocess.Popen[bytes]:
        self.address(job, task)
        return self._procs[f"{job}/{int(task)}"]

    def kill(self, job: str, task: int = 0) -> None:
        """Kill a task's server at once (SIGKILL), as a crash would; waits until it is gone."""
        proc = self._proc(job, task)
        procs.stop(proc.pid, proc=proc, sig=signal.SIGKILL, grace=5.0)

    def pause(self, job: str, task: int = 0) -> None:
        """Stop a task's server (SIGSTOP): it keeps its connections but answers nothing."""
        os.kill(self._proc(job, task).pid, signal.SIGSTOP)

    def resume(self, job: str, task: int = 0) -> None:
        """Continue a paused task's server (SIGCONT)."""
        os.kill(self._proc(job, task).pid, signal.SIGCONT)

    def restart(self, job: str, task: int = 0) -> None:
        """Start a task's server again on the same address (stopping it first if it runs).

        Returns once every task reaches it again. It starts empty: its variables must be
        restored from a checkpoint, in a new session (the old one fails with `AbortedError`).
        """
        proc = self._proc(job, task)
        procs.stop(proc.pid, proc=proc, grace=5.0)
        role = f"{job}/{int(task)}"
        self._launch([role])
        self._write_state()
        self.start_seconds[f"{role} usable"] = wait_usable(self.spec, self.start_timeout)

    def _check_started(self) -> None:
        if not self._spec:
            raise ClusterStartError("LocalCluster: not started; use `with LocalCluster(...)`")

    def __repr__(self) -> str:
        state = "isolated" if self.isolated else "not isolated"
        return f"<LocalCluster {self._spec or self.tasks} ({state})>"

    def _repr_html_(self) -> str:
        from devplace.views.notebook import cluster_html

        return cluster_html(self)
