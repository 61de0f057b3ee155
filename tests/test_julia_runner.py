"""Julia's first start in a test session (julia_runner.first_start): DevPlace is loaded once,
with a bound of its own, before any test's deadline runs; a DevPlace that does not load fails
the Julia tests with Julia's message. A stand-in `julia` script logs how it is called."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import julia_runner
import pytest
from julia_runner import PROJECT, require_julia

pytestmark = pytest.mark.slow  # the stand-in is a process


@pytest.fixture
def fake_julia(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A `julia` that logs each command line to calls.log; `using DevPlace` fails when the file
    `broken` exists."""
    julia = tmp_path / "julia"
    julia.write_text(
        "#!/bin/sh\n"
        f'echo "$*" >> {tmp_path / "calls.log"}\n'
        f'case "$*" in *"using DevPlace"*) [ -e {tmp_path / "broken"} ] && '
        'echo "ERROR: LoadError: boom" >&2 && exit 1;; esac\n'
        "exit 0\n"
    )
    julia.chmod(0o755)
    monkeypatch.setenv("DEVPLACE_JULIA", str(julia))
    julia_runner.first_start.cache_clear()
    yield tmp_path
    julia_runner.first_start.cache_clear()


def loads(folder: Path) -> list[str]:
    return [c for c in (folder / "calls.log").read_text().splitlines() if "using DevPlace" in c]


def test_devplace_is_loaded_once_per_session_before_the_first_julia_test(fake_julia: Path):
    for _ in range(3):
        assert require_julia() == str(fake_julia / "julia")
    assert loads(fake_julia) == [f"--project={PROJECT} -e using DevPlace"]


def test_a_devplace_that_does_not_load_fails_the_julia_tests_with_julias_message(
    fake_julia: Path,
):
    (fake_julia / "broken").touch()
    for _ in range(2):
        with pytest.raises(pytest.fail.Exception, match="(?s)`using DevPlace` failed.*boom"):
            require_julia()
    assert len(loads(fake_julia)) == 1
