"""A session's step time is the trimmed mean of its steps: a rare stall does not move it."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from devplace.autoplacer import timing

#: The timed steps' wall times (µs): 1000 + 10 i² for i = 0..18, and one stall 100× slower.
STEPS_US = [1000.0 + 10 * i * i for i in range(19)]
STEPS_US.insert(5, 100_000.0)


class FakeSession:
    """A session whose steps advance a fake clock: two slow warm-up steps, then STEPS_US."""

    def __init__(self) -> None:
        self.now = 0.0
        self.steps = [50_000.0, 50_000.0, *STEPS_US]
        self.calls: list[tuple[Any, Any]] = []

    def run(self, fetches: Any, feed_dict: Any = None) -> None:
        self.calls.append((fetches, feed_dict))
        self.now += self.steps[len(self.calls) - 1] * 1e-6

    def clock(self) -> float:
        return self.now


def test_step_time_is_the_mean_without_the_fastest_and_slowest_tenth(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sess = FakeSession()
    monkeypatch.setattr(timing, "time", SimpleNamespace(perf_counter=sess.clock))
    got = timing.step_time_us(sess, "y:0", {"x:0": 1.0}, runs=len(STEPS_US))
    # 20 steps: i = 0, 1, i = 18 and the stall left out: 1000 + 10 (Σ_{i=2}^{17} i²) / 16
    # (the max is 100000, the plain mean 7004.5, the median 1905)
    assert got == pytest.approx(2115.0)
    assert sess.calls == [("y:0", {"x:0": 1.0})] * (2 + len(STEPS_US))
