"""Profiles: traced runs, per-op statistics, and Chrome-trace files."""

from __future__ import annotations

import json
import os
import re
import statistics
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any

from tensorflow.python.client import timeline

from devplace._tf import tf
from devplace.report import transfers
from devplace.devices import short_device
from devplace.values import to_python

__all__ = ["OpStat", "Profile", "last_profile", "run_profile", "save_profile", "step_devices"]

_STATS_DEVICE = re.compile(r"^(.*?/device:[A-Za-z_]+:\d+)")


@dataclass(frozen=True)
class OpStat:
    """One op's timing in a profile: median over the profiled runs."""

    name: str
    op_type: str
    device: str
    duration_us: float
    output_bytes: int
    start_us: float = 0.0


@dataclass
class Profile:
    """The result of `run_profile`: fetched values, a Chrome trace, and per-op statistics."""

    values: Any
    trace: dict[str, Any]
    run_metadata: Any
    op_stats: dict[str, OpStat]
    step_time_us: float
    runs: int
    step_times_us: list[float] = field(default_factory=list)

    def save(self, path: str | os.PathLike[str]) -> str:
        """Write the Chrome trace (`traceEvents`) to `path`; returns the path."""
        path = os.fspath(path)
        with open(path, "w") as f:
            json.dump(self.trace, f)
        return path


_last: Profile | None = None


def step_devices(step_stats: Any) -> dict[str, Any]:
    """Map short device name to its `DeviceStepStats`, merging GPU streams into their device."""
    merged: dict[str, list[Any]] = defaultdict(list)
    for dev in step_stats.dev_stats:
        found = _STATS_DEVICE.match(dev.device)
        name = short_device(found.group(1)) if found else dev.device
        merged[name].extend(dev.node_stats)
    return merged


def _op_type(node: Any) -> str:
    label = node.timeline_label
    if " = " in label:
        return label.split(" = ", 1)[1].split("(", 1)[0]
    return label or node.node_name


def _stats_of(run_metadata: Any) -> tuple[dict[str, OpStat], float]:
    ops: dict[str, OpStat] = {}
    starts, ends = [], []
    for device, nodes in step_devices(run_metadata.step_stats).items():
        for node in nodes:
            if node.node_name == "_SOURCE":
                continue
            start = node.all_start_micros
            duration = max(node.all_end_rel_micros, node.op_end_rel_micros)
            out_bytes = sum(
                o.tensor_description.allocation_description.requested_bytes for o in node.output
            )
            ops[node.node_name] = OpStat(
                node.node_name, _op_type(node), device, float(duration), int(out_bytes), start
            )
            starts.append(start)
            ends.append(start + duration)
    if not starts:
        return ops, 0.0
    origin = min(starts)
    ops = {k: _with_start(v, v.start_us - origin) for k, v in ops.items()}
    return ops, float(max(ends) - origin)


def _with_start(stat: OpStat, start: float) -> OpStat:
    return OpStat(stat.name, stat.op_type, stat.device, stat.duration_us, stat.output_bytes, start)


def _median_stats(runs: list[dict[str, OpStat]]) -> dict[str, OpStat]:
    by_name: dict[str, list[OpStat]] = defaultdict(list)
    for run in runs:
        for name, stat in run.items():
            by_name[name].append(stat)
    return {
        name: OpStat(
            name,
            stats[-1].op_type,
            stats[-1].device,
            statistics.median(s.duration_us for s in stats),
            stats[-1].output_bytes,
            statistics.median(s.start_us for s in stats),
        )
        for name, stats in by_name.items()
    }


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
    (`progress=None`), always (`True`) or never (`False`).
    """
    if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
        raise ValueError(f"run_profile: repeat must be a positive integer, got {repeat!r}")
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE, output_partition_graphs=True)
    if repeat > 1:
        sess.run(fetches, feed_dict=feed)
    iterations: Any = range(repeat)
    if progress or (progress is None and repeat >= 20):
        from tqdm import tqdm

        iterations = tqdm(
            iterations, desc="run_profile", unit="run", disable=None if progress is None else False
        )
    traced = []
    for _ in iterations:
        metadata = tf.RunMetadata()
        values = sess.run(fetches, feed_dict=feed, options=options, run_metadata=metadata)
        stats, step = _stats_of(metadata)
        traced.append((step, values, metadata, stats))
    steps = [t[0] for t in traced]
    median_run = sorted(traced, key=lambda t: t[0])[(len(traced) - 1) // 2]
    _, values, metadata, _ = median_run
    trace = json.loads(
        timeline.Timeline(metadata.step_stats, graph=sess.graph).generate_chrome_trace_format(
            show_dataflow=True
        )
    )
    # Chrome and Perfetto ignore unknown top-level keys; `devplace.trace` reads the exact
    # transfers (with bytes) from here instead of guessing them from flow events.
    trace["devplace"] = {"transfers": [asdict(t) for t in transfers(sess.graph, metadata)]}
    global _last
    _last = Profile(
        values=to_python(values),
        trace=trace,
        run_metadata=metadata,
        op_stats=_median_stats([t[3] for t in traced]),
        step_time_us=statistics.median(steps),
        runs=repeat,
        step_times_us=steps,
    )
    return _last


def last_profile() -> Profile:
    """The profile taken by the latest `run_profile`; an error if there is none."""
    if _last is None:
        raise RuntimeError("no profile yet: call run_profile(sess, fetches) before save_profile")
    return _last


def save_profile(
    path: str | os.PathLike[str] = "timeline.json", profile: Profile | None = None
) -> str:
    """Write the latest profile (or `profile`) as Chrome-trace JSON to `path`; returns the path.

    Open it in chrome://tracing or Perfetto, or draw it with `devplace profile show`.
    """
    return (profile or last_profile()).save(path)
