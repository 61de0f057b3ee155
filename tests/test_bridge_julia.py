"""DevPlace.jl's own test suite (julia/DevPlace/test/runtests.jl), as part of `make test`."""

from __future__ import annotations

from pathlib import Path

import pytest
from julia_runner import PROJECT, run_julia

pytestmark = pytest.mark.timeout(1200)


def test_devplace_jl_suite(tmp_path: Path) -> None:
    done = run_julia([str(PROJECT / "test" / "runtests.jl")], cwd=tmp_path, timeout=1100)
    output = done.stdout + done.stderr
    marks = [i for i in (output.find("Test Failed"), output.find("Error During Test")) if i >= 0]
    where = min(marks) if marks else max(len(output) - 6000, 0)
    assert done.returncode == 0, output[where : where + 6000]  # the first failure, in full
    assert "DevPlace.jl" in done.stdout and "Fail" not in done.stdout.split("Test Summary:")[-1]
