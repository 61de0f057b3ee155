"""Profiles: traced runs, per-op statistics, and Chrome-trace files.

Traced runs are serialised across threads (TensorFlow traces one run at a time per process):
`run_profile` from two threads at once runs them one after the other, each waiting at most
`devplace.facts.traced.TRACE_WAIT_S` seconds for the other's traced run.
"""

from __future__ import annotations

import json
import os
import statistics
from collections import defaultdict
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from devplace.adapter.feeds import accepts_feed_dict
from devplace.adapter.session import check_session
from devplace.adapter.values import to_python
from devplace.core.atomic import replace_file
from devplace.core.errors import ArgumentValueError, Error
from devplace.core.formatting import format_time, plural
from devplace.core.printed import Printed, short, trace_table
from devplace.facts.trace import TraceOp
from devplace.facts.traced import TracedRun

#: One op's timing in a profile: the op as its trace shows it (medians over profiled runs).
OpStat = TraceOp

__all__ = ["NoProfileError", "OpStat", "Profile", "last_profile", "run_profile", "save_profile"]


class NoProfileError(Error, RuntimeError):
    """`save_profile` was called before any `run_profile`."""


@dataclass(repr=False)
class Profile(Printed):
    """The result of `run_profile`: the traced run with the median step time (`run`), per-op
    statistics (medians over all traced runs) and the step times."""

    run: TracedRun
    op_stats: dict[str, OpStat]
    step_time_us: float
    runs: int
    step_times_us: list[float] = field(default_factory=list)

    @cached_property
    def values(self) -> Any:
        """The fetched values, numpy scalars as Python numbers."""
        return to_python(self.run.values)

    @property
    def run_metadata(self) -> Any:
        """The kept run's `RunMetadata` (step stats, partition graphs)."""
        return self.run.run_metadata

    @cached_property
    def trace(self) -> dict[str, Any]:
        """The kept run as Chrome-trace JSON (what `save` writes)."""
        return self.run.chrome_trace()

    def save(self, path: str | os.PathLike[str]) -> str:
        """Write the Chrome trace to `path` (atomically: a failure leaves an old file whole);
        returns the path."""
        path = os.fspath(path)
        with replace_file(path) as f:
            json.dump(self.trace, f)
        return path

    def __repr__(self) -> str:
        return (
            f"Profile({plural(len(self.op_stats), 'op')}, step {format_time(self.step_time_us)}, "
            f"{plural(self.runs, 'run')}, values {short(self.values)})"
        )

    def __str__(self) -> str:
        return f"run_profile: median of {plural(self.runs, 'traced run')}, " + trace_table(
            self.run.trace, "op_stats"
        )

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        from devplace.views.notebook import picture_bundle

        return picture_bundle(self, include, exclude)


_last: Profile | None = None


def _median_stats(runs: list[dict[str, OpStat]]) -> dict[str, OpStat]:
    by_name: dict[str, list[OpStat]] = defaultdict(list)
    for run in runs:
        for name, stat in run.items():
            by_name[name].append(stat)
    return {
        name: replace(
            stats[-1],
            duration_us=statistics.median(s.duration_us for s in stats),
            start_us=statistics.median(s.start_us for s in stats),
        )
        for name, stats in by_name.items()
    }


@accepts_feed_dict
def run_profile(
    sess: Any,
    fetches: Any,
    feed: Any = None,
    repeat: int = 1,
    progress: bool | None = None,
) -> Profile:
    """Run `fetches` with full tracing and keep the profile for `save_profile`.

    `repeat=1` traces a single run (as ADCME does). `repeat=N > 1` runs once untraced to warm
    up, then N traced runs; per-op times are medians, and the trace kept is that of the run
    with the median step time. A progress bar shows for long runs on a terminal
    (`progress=None`), always (`True`) or never (`False`). Safe from several threads: traced
    runs take turns.
    """
    check_session("run_profile", sess)
    if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
        raise ArgumentValueError(
            "run_profile",
            "repeat",
            repeat,
            "a positive integer",
            "repeat=1 traces one run; repeat=5 warms up once, then traces five",
        )
    if repeat > 1:
        sess.run(fetches, feed_dict=feed)
    iterations: Any = range(repeat)
    if progress or (progress is None and repeat >= 20):
        from tqdm.auto import tqdm

        iterations = tqdm(
            iterations, desc="run_profile", unit="run", disable=None if progress is None else False
        )
    traced = [TracedRun.of(sess, fetches, feed) for _ in iterations]
    steps = [run.step_time_us for run in traced]
    global _last
    _last = Profile(
        run=sorted(traced, key=lambda r: r.step_time_us)[(len(traced) - 1) // 2],
        op_stats=_median_stats([run.op_stats() for run in traced]),
        step_time_us=statistics.median(steps),
        runs=repeat,
        step_times_us=steps,
    )
    return _last


def last_profile() -> Profile:
    """The profile taken by the latest `run_profile`; an error if there is none."""
    if _last is None:
        raise NoProfileError("no profile yet: call run_profile(sess, fetches) before save_profile")
    return _last


def save_profile(
    path: str | os.PathLike[str] = "timeline.json", profile: Profile | None = None
) -> str:
    """Write the latest profile (or `profile`) as Chrome-trace JSON to `path`; returns the path.

    Open it in chrome://tracing or Perfetto, or draw it with `devplace profile show`.
    """
    return (profile or last_profile()).save(path)
