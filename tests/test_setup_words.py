"""What set-up and the test tiers say agrees with what devplace then says."""

from __future__ import annotations

import re

import julia_runner
import pytest
from julia_runner import REPO

from devplace.adapter.no_gpu import why_no_gpu


def test_setup_without_a_driver_and_devplace_devices_say_the_same() -> None:
    makefile = (REPO / "Makefile").read_text()
    (setup,) = re.findall(r'echo "(setup: no NVIDIA driver[^"]*)"', makefile)
    devices = why_no_gpu(None, built_with_cuda=True, driver=False, visible=None, messages=[])
    for said in (setup, devices):
        assert "no NVIDIA driver" in said and "TensorFlow runs on the CPU" in said, said
        assert "CPU only" not in said and "CUDA build" not in said, said


def test_the_julia_tests_skipped_without_julia_say_what_they_are_and_how_to_run_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(julia_runner, "find_julia", lambda: None)
    monkeypatch.delenv("DEVPLACE_JULIA", raising=False)
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception) as skipped:
        julia_runner.require_julia()
    message = str(skipped.value)
    assert message.startswith("the Julia tests (the DevPlace.jl package) need Julia >= 1.5")
    assert "to run them too, `make setup` installs it" in message and "DEVPLACE_JULIA" in message
