"""Processes by PID: start and wait for readiness, tell them apart from reused PIDs, stop them.

Standard library and psutil only: the forwarder and the reaper, run as scripts, import it
without importing devplace (and TensorFlow). Every wait here has a deadline.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psutil

from devplace.core.errors import Error

__all__ = [
    "ProcessStartError",
    "alive",
    "exit_with_parent",
    "interrupted_by_signals",
    "kill_group",
    "log_tail",
    "start_time",
    "stop",
    "wait_ready",
]


class ProcessStartError(Error, RuntimeError):
    """A process did not become ready: it exited, or the deadline passed."""


def start_time(pid: int) -> float | None:
    """The start time of process `pid` (seconds since the epoch), or None if there is none.

    A PID together with its start time names one process, even after the PID is reused.
    """
    try:
        return psutil.Process(int(pid)).create_time()
    except psutil.Error:
        return None


def alive(pid: int, started: float | None = None) -> bool:
    """Whether `pid` runs (and, given `started`, is still the process that started then)."""
    try:
        process = psutil.Process(int(pid))
        if process.status() == psutil.STATUS_ZOMBIE:
            return False
        return started is None or process.create_time() == started
    except psutil.Error:
        return False


def kill_group(pid: int, started: float | None = None) -> bool:
    """SIGKILL the process group led by `pid` (a session leader); True if it was running.

    SIGKILL ends a stopped (SIGSTOP) process too; with `started`, a reused PID is left alone.
    """
    if not alive(pid, started):
        return False
    try:
        os.killpg(int(pid), signal.SIGKILL)
    except ProcessLookupError:
        return False
    except PermissionError:  # not a group leader we may signal: the process alone
        psutil.Process(int(pid)).kill()
    return True


def exit_with_parent() -> None:
    """Exit this process (at once, status 0) when the process that started it is gone."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


@contextlib.contextmanager
def interrupted_by_signals() -> Iterator[None]:
    """Inside, SIGINT and SIGTERM raise KeyboardInterrupt, however the process was started: a
    shell's background job (`nohup make test &`) starts it with SIGINT ignored, which Python
    keeps. The previous handlers come back after. Main thread only; elsewhere a no-op."""

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, interrupt) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def log_tail(log: Path | None, lines: int = 15) -> str:
    """The last `lines` lines of a log file (empty if there is none)."""
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
                    f"was ready. Its log ({log}):\n{log_tail(log)}"
                )
        if len(took) < len(procs):
            if time.monotonic() > deadline:
                late = ", ".join(n for n in procs if n not in took)
                raise ProcessStartError(
                    f"{late} not ready after {timeout:g} s (the machine may be busy: pass a "
                    "larger start_timeout). Last log lines:\n"
                    + "\n".join(log_tail(procs[n][2], 5) for n in procs if n not in took)
                )
            time.sleep(0.05)
    return took


def _wait(process: psutil.Process, proc: subprocess.Popen[bytes] | None, seconds: float) -> None:
    """Until the process has exited; a child is reaped by its Popen (so returncode is set)."""
    if proc is not None:
        proc.wait(seconds)
        return
    deadline = time.monotonic() + seconds
    # not psutil's wait: a zombie has exited (its parent reaps it, not us) but still "exists"
    while alive(process.pid):
        if time.monotonic() > deadline:
            raise psutil.TimeoutExpired(seconds, process.pid)
        time.sleep(0.02)


def stop(
    pid: int,
    *,
    proc: subprocess.Popen[bytes] | None = None,
    started: float | None = None,
    grace: float = 5.0,
    sig: int = signal.SIGTERM,
) -> bool:
    """Stop process `pid`: `sig`, then SIGKILL after `grace` seconds. True if it was running.

    A stopped (SIGSTOP) process is continued so it can act on the signal. With `started`,
    a PID now used by some other process is left alone. `proc`, for a child, reaps it.
    """
    if proc is not None and proc.poll() is not None:
        return False
    if not alive(pid, started):
        if proc is not None:
            proc.wait(5.0)
        return False
    try:
        process = psutil.Process(int(pid))
        process.send_signal(sig)
        if sig not in (signal.SIGKILL, signal.SIGSTOP):
            process.resume()
        try:
            _wait(process, proc, grace)
        except (subprocess.TimeoutExpired, psutil.TimeoutExpired):
            process.kill()
            with contextlib.suppress(subprocess.TimeoutExpired, psutil.TimeoutExpired):
                _wait(process, proc, 5.0)
    except psutil.NoSuchProcess:
        if proc is not None:
            proc.wait(5.0)
    return True
