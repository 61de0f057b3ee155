"""`profile_devices`: profile a graph once per device kind, for the measured cost model."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from devplace.autoplacer.cost import DeviceProfiles
from devplace.devices import parse_device

__all__ = ["profile_devices"]


def _cpus_needed(names: list[str]) -> int:
    """Logical CPU devices a session needs so that every named CPU device exists."""
    cpus = [
        parse_device(x).device_index or 0 for x in names if parse_device(x).device_type == "CPU"
    ]
    return max(cpus, default=0) + 1


def profile_devices(
    sess_or_graph: Any,
    fetches: Any,
    devices: Sequence[str] = ("/device:CPU:0", "/device:GPU:0"),
    feed: Any = None,
    repeat: int = 7,
) -> DeviceProfiles:
    """Per-op median times of `fetches` with the whole graph on each of `devices` in turn.

    `sess_or_graph`: a session (its graph is profiled) or a `tf.Graph`. Each device gets a
    fresh session (soft placement, so ops without a kernel there fall back and the profile
    records where they ran; graph rewriting off, so the ops timed are the graph's own) with
    every global variable initialised, and `dp.run_profile(repeat=repeat)`. The graph's
    devices are restored afterwards. Pass the result to `CostModel.from_profiles`; `save` it
    and `DeviceProfiles.load` it to reuse it.
    """
    import devplace as dp
    from devplace._tf import tf
    from devplace.autoplacer.tf_graph import device_names

    graph = sess_or_graph if isinstance(sess_or_graph, tf.Graph) else sess_or_graph.graph
    names = device_names(devices)
    ops = graph.get_operations()
    before = [op.device for op in ops]
    profiles: dict[str, dict[str, dict[str, Any]]] = {}
    try:
        for name in names:
            for op in ops:
                op._set_device(name)
            with graph.as_default():
                inits = [v.initializer for v in tf.global_variables()]
            with dp.Session(
                graph=graph, cpus=_cpus_needed(names), soft=True, optimize=False
            ) as sess:
                if inits:
                    sess.run(inits)
                prof = dp.run_profile(sess, fetches, feed, repeat=repeat, progress=False)
            profiles[name] = {
                k: {
                    "type": v.op_type,
                    "device": v.device,
                    "us": v.duration_us,
                    "bytes": v.output_bytes,
                }
                for k, v in prof.op_stats.items()
            }
    finally:
        for op, dev in zip(ops, before, strict=True):
            op._set_device(dev)
    return DeviceProfiles(profiles)
