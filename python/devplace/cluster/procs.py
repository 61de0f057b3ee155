"""Processes by PID: start and wait for readiness, tell them apart from reused PIDs, stop them.

Standard library only (the forwarder imports it without importing devplace). Every wait here
has a deadline.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from pathlib import Path

__all__ = [
    "ProcessStartError",
    "alive",
    "exit_with_parent",
    "start_time",
    "stop",
    "wait_ready",
]


class ProcessStartError(RuntimeError):
    """A process did not become ready: it exited, or the deadline passed."""


def start_time(pid: int) -> int | None:
    """The start time of process `pid` (clock ticks since boot), or None if there is none.

    A PID together with its start time names one process, even after the PID is reused.
    """
    try:
        stat = Path(f"/proc/{int(pid)}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[19])


def _zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{int(pid)}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


def alive(pid: int, started: int | None = None) -> bool:
    """Whether `pid` runs (and, given `started`, is still the process that started then)."""
    now = start_time(pid)
    if now is None or _zombie(pid):
        return False
    return started is None or now == started


def exit_with_parent() -> None:
    """Exit this process (at once, status 0) when the process that started it is gone."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def _log_tail(log: Path | None, lines: int = 15) -> str:
    if log is None or not log.exists():
        return ""
    text = log.read_text(errors="replace").strip().splitlines()
    return "\n".join(text[-lines:])


def wait_ready(
    procs: dict[str, tuple[subprocess.Popen[bytes], Path, Path | None]], timeout: float
) -> dict[str, float]:
    """Wait until every process has written its ready file; seconds each took, by name.

    procs maps a name to (process, ready file, log file). Raises `ProcessStartError` naming
    the process and quoting its log if one exits first or the deadline passes.
    """
    start = time.monotonic()
    deadline = start + timeout
    took: dict[str, float] = {}
    while len(took) < len(procs):
        for name, (proc, ready, log) in procs.items():
            if name in took:
                continue
            if ready.exists():
                took[name] = time.monotonic() - start
            elif proc.poll() is not None:
                raise ProcessStartError(
                    f"{name} (pid {proc.pid}) exited with status {proc.returncode} before it "
                    f"was ready. Its log ({log}):\n{_log_tail(log)}"
                )
        if len(took) < len(procs):
            if time.monotonic() > deadline:
                late = ", ".join(n for n in procs if n not in took)
                raise ProcessStartError(
                    f"{late} not ready after {timeout:g} s (the machine may be busy: pass a "
                    "larger start_timeout). Last log lines:\n"
                    + "\n".join(_log_tail(procs[n][2], 5) for n in procs if n not in took)
                )
            time.sleep(0.05)
    return took


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def _gone_within(pid: int, proc: subprocess.Popen[bytes] | None, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            return True
        if proc is None and not alive(pid):
            return True
        time.sleep(0.02)
    return False


def stop(
    pid: int,
    *,
    proc: subprocess.Popen[bytes] | None = None,
    started: int | None = None,
    grace: float = 5.0,
    sig: int = signal.SIGTERM,
) -> bool:
    """Stop process `pid`: `sig`, then SIGKILL after `grace` seconds. True if it was running.

    A stopped (SIGSTOP) process is continued so it can act on the signal. With `started`,
    a PID now used by some other process is left alone. `proc`, for a child, reaps it.
    """
    if proc is not None and proc.poll() is not None:
        return False
    if proc is None and not alive(pid, started):
        return False
    _signal(pid, sig)
    if sig not in (signal.SIGKILL, signal.SIGSTOP):
        _signal(pid, signal.SIGCONT)
    if not _gone_within(pid, proc, grace):
        _signal(pid, signal.SIGKILL)
        _gone_within(pid, proc, 5.0)
    return True
