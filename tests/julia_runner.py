"""Finding and running Julia for the tests: DevPlace.jl's suite and the Julia examples.

Julia is `$DEVPLACE_JULIA` (what `make test` sets, from `tools/setup-julia.sh`), else `julia` on
PATH, else the project-local runtime that `tools/setup-julia.sh` unpacks into `.julia-runtime/`.
Without one the tests skip when pytest is run by hand, but fail under `make test` (which sets
`DEVPLACE_JULIA`) and under `CI=true`: CI must never pass without Julia.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PROJECT = REPO / "julia" / "DevPlace"

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


def require_julia() -> str:
    """Julia, or skip the test (fail it under CI=true)."""
    julia = find_julia()
    if julia is None:
        message = (
            "no Julia >= 1.5 found: run `make setup` (tools/setup-julia.sh) or set DEVPLACE_JULIA"
        )
        if os.environ.get("DEVPLACE_JULIA") or os.environ.get("CI", "").lower() == "true":
            pytest.fail(message + " (make test and CI=true: the Julia tests must run)")
        pytest.skip(message)
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
