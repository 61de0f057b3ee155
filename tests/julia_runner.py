"""Finding and running Julia for the tests: DevPlace.jl's suite and the Julia examples.

Julia is `$DEVPLACE_JULIA` (what `make test` sets, from `tools/setup-julia.sh`), else `julia` on
PATH, else the project-local runtime that `tools/setup-julia.sh` unpacks into `.julia-runtime/`.
Without one the tests skip when pytest is run by hand, but fail under `make test` (which sets
`DEVPLACE_JULIA`) and under `CI=true`: CI must never pass without Julia.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PROJECT = REPO / "julia" / "DevPlace"

#: Julia's first start in a test session may compile DevPlace into a cold depot (minutes on a
#: busy machine): it gets this bound of its own, apart from every test's deadline.
FIRST_START_S = 900

#: DevPlace.jl's transports (`ENV["DEVPLACE_TRANSPORT"]`): Python in Julia's own process (the
#: default), and the isolating host process. Tests of what both must do run under each.
TRANSPORTS = ("inprocess", "process")


def julia_env(transport: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment a DevPlace.jl test process runs in: the project-local depot unless one
    is set, the project's Python, and `transport`."""
    env = {**os.environ, **(extra or {})}
    env.setdefault("JULIA_DEPOT_PATH", str(REPO / ".julia-depot"))
    env.setdefault("DEVPLACE_PYTHON", str(REPO / ".venv" / "bin" / "python"))
    env["DEVPLACE_TRANSPORT"] = transport
    return env


def _works(julia: str) -> bool:
    try:
        done = subprocess.run(
            [julia, "-e", 'VERSION >= v"1.5" || exit(1)'], capture_output=True, timeout=120
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def find_julia() -> str | None:
    """A Julia >= 1.5 to use, or None."""
    explicit = os.environ.get("DEVPLACE_JULIA")
    if explicit:
        return explicit if _works(explicit) else None
    for candidate in (shutil.which("julia"), str(REPO / ".julia-runtime" / "julia")):
        if candidate and os.access(candidate, os.X_OK) and _works(candidate):
            return candidate
    return None


@functools.cache
def first_start(julia: str) -> str | None:
    """Load DevPlace once in this session (compiling it where the depot is cold), so that no
    test's deadline pays for that; why it did not load, or None."""
    try:
        done = subprocess.run(
            [julia, f"--project={PROJECT}", "-e", "using DevPlace"],
            env=julia_env("process"),
            capture_output=True,
            text=True,
            timeout=FIRST_START_S,
        )
    except subprocess.TimeoutExpired:
        return f"`using DevPlace` took over {FIRST_START_S} s (compiling into a cold depot?)"
    if done.returncode != 0:
        return f"`using DevPlace` failed (exit {done.returncode}):\n{done.stderr[-3000:]}"
    return None


def require_julia() -> str:
    """Julia with DevPlace loaded once in this session (`first_start`), or skip the test (fail
    it under CI=true)."""
    julia = find_julia()
    if julia is None:
        message = (
            "the Julia tests (the DevPlace.jl package) need Julia >= 1.5, none found: to run them "
            "too, `make setup` installs it (tools/setup-julia.sh), or set DEVPLACE_JULIA"
        )
        if os.environ.get("DEVPLACE_JULIA") or os.environ.get("CI", "").lower() == "true":
            pytest.fail(message + " (make test and CI=true: the Julia tests must run)")
        pytest.skip(message)
    failed = first_start(julia)
    if failed is not None:
        pytest.fail(failed)
    return julia


def run_julia(
    args: list[str], cwd: Path, timeout: float, transport: str = "inprocess"
) -> subprocess.CompletedProcess[str]:
    """Run Julia with DevPlace's project and `transport` (see `julia_env`)."""
    return subprocess.run(
        [require_julia(), f"--project={PROJECT}", *args],
        cwd=cwd,
        env=julia_env(transport),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
