"""A DevPlace.jl process driven line by line, for the bridge tests that signal or kill Julia."""

from __future__ import annotations

import select
import subprocess
import time
from pathlib import Path

from julia_runner import PROJECT, julia_env, require_julia


class JuliaScript:
    """A Julia process running `code` (DevPlace loaded), read line by line with deadlines.

    `env` adds to the environment; `wrap` is a command the Julia command line is appended to
    (e.g. one that mounts a small /dev/shm in a private mount namespace first); `transport` is
    DevPlace.jl's (the host process unless said: these tests signal and kill it)."""

    def __init__(
        self,
        code: str,
        tmp: Path,
        *args: str,
        env: dict[str, str] | None = None,
        wrap: tuple[str, ...] = (),
        transport: str = "process",
    ) -> None:
        tmp.mkdir(parents=True, exist_ok=True)
        script = tmp / "script.jl"
        script.write_text("Base.exit_on_sigint(false)\nusing DevPlace\n" + code, encoding="utf-8")
        full_env = julia_env(transport, env)
        self.proc = subprocess.Popen(
            [*wrap, require_julia(), f"--project={PROJECT}", str(script), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=full_env,
        )
        self.seen: list[str] = []

    def expect(self, prefix: str, timeout: float = 120) -> str:
        """The next line starting with `prefix` (other lines are kept for the failure message)."""
        assert self.proc.stdout is not None
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            ready, _, _ = select.select([self.proc.stdout], [], [], end - time.monotonic())
            line = self.proc.stdout.readline() if ready else ""
            if not line and (not ready or self.proc.poll() is not None):
                break
            self.seen.append(line)
            if line.startswith(prefix):
                return line[len(prefix) :].strip()
        raise AssertionError(
            f"no line {prefix!r} within {timeout} s; output:\n{''.join(self.seen)}"
        )

    def finish(self) -> int:
        """Wait (bounded) for the exit code; the rest of the output joins `seen`."""
        try:
            code = self.proc.wait(120)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
        assert self.proc.stdout is not None
        self.seen.extend(self.proc.stdout.readlines())
        return code

    def output(self) -> str:
        """Everything read so far."""
        return "".join(self.seen)


def gone(pid: int) -> bool:
    """Has process `pid` exited (a zombie nobody reaped counts as exited)?"""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True
