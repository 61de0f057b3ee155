"""One traced run: built once per traced `Session.run`, viewed as report, stats and trace.

A `TracedRun` holds what one run with full tracing returned and recorded: the values, the
`RunMetadata` (step stats and partition graphs), the graph and the fetches. Everything devplace
says about a run is a view of it: the placement report (`placement()`), the cross-device
`transfers`, the per-op statistics (`op_stats()`), the Chrome trace (`chrome_trace()`) and the
device-normalised `trace`. Device lanes are folded into devices by `devplace.trace.lane_kind`
here too, so a GPU's streams never count as devices.

TensorFlow allows one traced run at a time per process (a second one at once fails with
`AlreadyExistsError: Another profiling session active`), so traced runs are serialised by a
lock: a traced run waits for one in another thread, at most `TRACE_WAIT_S` seconds.
"""

from __future__ import annotations

import json
import threading
from dataclasses import asdict, dataclass
from functools import cached_property
from typing import Any

from tensorflow.python.client import timeline

from devplace._tf import tf
from devplace.devices import split_lane
from devplace.errors import Error
from devplace.report import OpPlacement, PlacementReport
from devplace.trace import Trace, Transfer, lane_kind, read_trace

__all__ = ["TRACE_WAIT_S", "OpStat", "TraceBusyError", "TracedRun", "placement"]

#: How long a traced run waits for another thread's traced run to finish, in seconds.
TRACE_WAIT_S = 300.0
_TRACE_LOCK = threading.Lock()
_PLURAL = {"kernel": "kernels", "copy": "copies"}
_RUNTIME_OPS = frozenset({"_Send", "_Recv", "_HostSend", "_HostRecv", "_Retval", "_Arg"})


class TraceBusyError(Error, RuntimeError):
    """Another thread's traced run (run_profile, placement) did not finish in time."""


@dataclass(frozen=True)
class OpStat:
    """One op's timing in a profile (a median over the profiled runs)."""

    name: str
    op_type: str
    device: str
    duration_us: float
    output_bytes: int
    start_us: float = 0.0


def _op_type(node: Any) -> str:
    label = node.timeline_label
    if " = " in label:
        return label.split(" = ", 1)[1].split("(", 1)[0]
    return label or node.node_name


@dataclass
class TracedRun:
    """What one traced run returned (`values`) and recorded (`run_metadata`), with the
    `graph` and `fetches` it ran; the report, stats, transfers and traces are views."""

    values: Any
    run_metadata: Any
    graph: Any
    fetches: Any

    @classmethod
    def of(cls, sess: Any, fetches: Any, feed: Any = None) -> TracedRun:
        """Run `fetches` once with full tracing and partition graphs."""
        options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE, output_partition_graphs=True)
        metadata = tf.RunMetadata()
        if not _TRACE_LOCK.acquire(timeout=TRACE_WAIT_S):
            raise TraceBusyError(
                f"a traced run in another thread has not finished after {TRACE_WAIT_S:g} s "
                "(TensorFlow traces one run at a time per process); wait for it, or profile "
                "from one thread"
            )
        try:
            values = sess.run(fetches, feed_dict=feed, options=options, run_metadata=metadata)
        finally:
            _TRACE_LOCK.release()
        return cls(values, metadata, sess.graph, fetches)

    def _nodes(self, kind: str) -> list[tuple[str, Any]]:
        """(device, node stats) of every entry of lanes of `kind`, `_SOURCE` left out."""
        return [
            (device, node)
            for dev in self.run_metadata.step_stats.dev_stats
            for device, lane in [split_lane(dev.device)]
            if lane_kind(lane)[0] == kind
            for node in dev.node_stats
            if node.node_name != "_SOURCE"
        ]

    @cached_property
    def step_time_us(self) -> float:
        """From the first entry's start to the last one's end, all lanes, in µs (the trace's
        makespan: entries end where TF's timeline draws them, at `all_end_rel_micros`)."""
        spans = [
            (node.all_start_micros, node.all_start_micros + node.all_end_rel_micros)
            for dev in self.run_metadata.step_stats.dev_stats
            for node in dev.node_stats
            if node.node_name != "_SOURCE"
        ]
        if not spans:
            return 0.0
        return float(max(end for _, end in spans) - min(start for start, _ in spans))

    def op_stats(self) -> dict[str, OpStat]:
        """Per op (each once, from its device's own lane): type, device, time, output bytes."""
        nodes = self._nodes("op")
        origin = min((node.all_start_micros for _, node in nodes), default=0)
        return {
            node.node_name: OpStat(
                node.node_name,
                _op_type(node),
                device,
                float(_duration(node)),
                sum(
                    o.tensor_description.allocation_description.requested_bytes for o in node.output
                ),
                float(node.all_start_micros - origin),
            )
            for device, node in nodes
        }

    @cached_property
    def transfers(self) -> list[Transfer]:
        """The cross-device transfers, from the partition graphs' `_Send` nodes."""
        sizes = {
            node.node_name: [
                o.tensor_description.allocation_description.requested_bytes for o in node.output
            ]
            for dev in self.run_metadata.step_stats.dev_stats
            for node in dev.node_stats
        }
        found = []
        for partition in self.run_metadata.partition_graphs:
            nodes = {n.name: n for n in partition.node}
            found.extend(
                _send_transfer(n, nodes, self.graph, sizes)
                for n in partition.node
                if n.op == "_Send"
            )
        return found

    def placement(self) -> PlacementReport:
        """Where every op ran (from the partition graphs) and what crossed devices."""
        ops: list[OpPlacement] = []
        ran: set[str] = set()
        for partition in self.run_metadata.partition_graphs:
            for node in partition.node:
                if node.op in _RUNTIME_OPS:
                    continue
                try:
                    requested = self.graph.get_operation_by_name(node.name).device
                except KeyError:
                    continue  # made by the runtime (e.g. the constant behind a control edge)
                ran.add(node.name)
                ops.append(OpPlacement(node.name, node.op, requested, split_lane(node.device)[0]))
        wanted = _closure(_fetch_ops(self.graph, self.fetches))
        ops.sort(key=lambda op: op.name)
        return PlacementReport(ops, self.transfers, sorted(wanted - ran))

    def chrome_trace(self) -> dict[str, Any]:
        """The run as Chrome-trace JSON: TF's timeline without empty processes, with thread
        names, and a `devplace` section holding the exact transfers."""
        trace = json.loads(
            timeline.Timeline(
                self.run_metadata.step_stats, graph=self.graph
            ).generate_chrome_trace_format(show_dataflow=True)
        )
        events = trace["traceEvents"]
        used = {(e.get("pid"), e.get("tid")) for e in events if e.get("ph") != "M"}
        lanes = {
            e["pid"]: split_lane(e["args"]["name"].rsplit(" ", 1)[0])[1]
            for e in events
            if e.get("ph") == "M" and e["args"]["name"].endswith(" Compute")
        }
        pids = {pid for pid, _ in used}
        threads = [
            {
                "name": "thread_name",
                "ph": "M",
                "pid": pid,
                "tid": tid,
                "args": {"name": _thread_name(lanes.get(pid), tid)},
            }
            for pid, tid in sorted(used, key=str)
        ]
        trace["traceEvents"] = [
            e for e in events if e.get("ph") != "M" or e.get("pid") in pids
        ] + threads
        # Chrome and Perfetto ignore unknown top-level keys; `devplace.trace` reads the exact
        # transfers (with bytes) from here instead of guessing them from flow events.
        trace["devplace"] = {"transfers": [asdict(t) for t in self.transfers]}
        return trace

    @cached_property
    def trace(self) -> Trace:
        """The run's device-normalised `Trace` (the same reading as of a saved trace file)."""
        return read_trace(self.chrome_trace())


def _thread_name(lane: str | None, tid: Any) -> str:
    if lane is None:
        return f"thread {tid}"
    kind = lane_kind(lane)[0]
    return f"ops, thread {tid}" if kind == "op" else f"{_PLURAL[kind]} ({lane})"


def _duration(node: Any) -> int:
    return max(node.all_end_rel_micros, node.op_end_rel_micros)


def _fetch_ops(graph: Any, fetches: Any) -> list[Any]:
    ops = []
    for fetch in tf.nest.flatten(fetches):
        element = graph.as_graph_element(fetch, allow_tensor=True, allow_operation=True)
        ops.append(element if isinstance(element, tf.Operation) else element.op)
    return ops


def _closure(ops: list[Any]) -> set[str]:
    seen: set[str] = set()
    stack = list(ops)
    while stack:
        op = stack.pop()
        if op.name in seen:
            continue
        seen.add(op.name)
        stack.extend(t.op for t in op.inputs)
        stack.extend(op.control_inputs)
    return seen


def _tensor_bytes(graph: Any, tensor: str, sizes: dict[str, list[int]]) -> int:
    name, _, index = tensor.partition(":")
    slot = int(index or 0)
    measured = sizes.get(name, [])
    if slot < len(measured) and measured[slot]:
        return int(measured[slot])
    try:
        t = graph.get_tensor_by_name(f"{name}:{slot}")
    except (KeyError, ValueError):
        return 0
    if not t.shape.is_fully_defined() or t.dtype == tf.string:
        return 0
    return int(t.shape.num_elements()) * t.dtype.size


def _send_transfer(
    node: Any, nodes: dict[str, Any], graph: Any, sizes: dict[str, list[int]]
) -> Transfer:
    source = node.input[0]
    source_node = nodes.get(source.split(":")[0])
    control = source_node is not None and "/ctrl/" in source_node.name
    return Transfer(
        tensor=source if ":" in source else f"{source}:0",
        source=split_lane(node.attr["send_device"].s.decode())[0],
        destination=split_lane(node.attr["recv_device"].s.decode())[0],
        bytes=0 if control else _tensor_bytes(graph, source, sizes),
        control=control,
    )


def placement(sess: Any, fetches: Any, feed: Any = None) -> PlacementReport:
    """Run `fetches` once and report where every op ran and what crossed devices."""
    return TracedRun.of(sess, fetches, feed).placement()
