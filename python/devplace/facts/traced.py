"""One traced run: built once per traced `Session.run`; its facts are one `Trace`.

A `TracedRun` holds what one run with full tracing returned and recorded: the values, the
`RunMetadata` (step stats and partition graphs), the graph and the fetches. Its facts are one
`trace.Trace` (`trace`): TF's timeline of the run read by `trace.read_trace` (the one reader,
which folds lanes into devices), with the cross-device transfers found here in the partition
graphs. The placement report (`placement()`), the per-op statistics
(`op_stats()`), the step time and the Chrome trace (`chrome_trace()`) are views of it and of the
partition graphs; a saved trace reads back to the same `Trace`.

TensorFlow allows one traced run at a time per process (a second one at once fails with
`AlreadyExistsError: Another profiling session active`), so traced runs are serialised by a
lock: a traced run waits for one in another thread, at most `TRACE_WAIT_S` seconds.
"""

from __future__ import annotations

import json
import re
import threading
from collections import defaultdict
from dataclasses import asdict, dataclass
from functools import cached_property
from typing import Any

from devplace.adapter._tf import chrome_trace, tf
from devplace.adapter.devices import split_lane
from devplace.adapter.feeds import accepts_feed_dict
from devplace.adapter.session import check_session, fetch_ops, needed_ops
from devplace.core.errors import Error
from devplace.core.printed import Printed, trace_line, trace_table
from devplace.facts.report import OpPlacement, PlacementReport
from devplace.facts.trace import Fetch, Trace, TraceOp, Transfer, lane_kind, read_trace
from devplace.facts.trace_format import META, OP, compute_lane, thread_name_event

__all__ = ["TRACE_WAIT_S", "TraceBusyError", "TracedRun", "placement"]

#: How long a traced run waits for another thread's traced run to finish, in seconds.
TRACE_WAIT_S = 300.0
_TRACE_LOCK = threading.Lock()
_PLURAL = {"kernel": "kernels", "copy": "copies"}
_RUNTIME_OPS = frozenset({"_Send", "_Recv", "_HostSend", "_HostRecv", "_Retval", "_Arg"})
#: The node the runtime makes for a fed tensor: `_arg_<op>_<output>_<place among the feeds>`.
_FED_ARG = re.compile(r"_arg_(?P<op>.+)_(?P<output>\d+)_\d+")


class TraceBusyError(Error, RuntimeError):
    """Another thread's traced run (run_profile, placement) did not finish in time."""


@dataclass(repr=False)
class TracedRun(Printed):
    """What one traced run returned (`values`) and recorded (`run_metadata`), with the
    `graph` and `fetches` it ran and the names of the tensors it was `fed`; its facts are
    `trace`, everything else a view."""

    values: Any
    run_metadata: Any
    graph: Any
    fetches: Any
    fed: frozenset[str] = frozenset()

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
        fed = frozenset(getattr(key, "name", str(key)) for key in feed or ())
        return cls(values, metadata, sess.graph, fetches, fed)

    @cached_property
    def _fed_args(self) -> dict[str, str]:
        """Each node the runtime made for a fed tensor -> that tensor, as the user names it."""
        return {
            node.name: f"{found['op']}:{found['output']}"
            for partition in self.run_metadata.partition_graphs
            for node in partition.node
            if node.op == "_Arg" and (found := _FED_ARG.fullmatch(node.name))
        }

    @cached_property
    def trace(self) -> Trace:
        """The run's facts: devices, ops, kernels, copies, transfers (see `devplace.facts.trace`);
        fed tensors by the user's names (`x:0`), not the runtime's (`_arg_x_0_1:0`)."""
        transfers, fetched = self._crossings
        return read_trace(self._timeline, transfers=transfers, fetched=fetched)

    @cached_property
    def _crossings(self) -> tuple[list[Transfer], list[Fetch]]:
        """The transfers and fetches, read from the partition graphs alone (no timeline)."""
        return _crossings(self.run_metadata, self.graph, self._fed_args)

    @property
    def transfers(self) -> list[Transfer]:
        """The cross-device transfers: `_Send`/`_Recv` pairs of the partition graphs."""
        return self._crossings[0]

    @property
    def fetched(self) -> list[Fetch]:
        """The tensors fetched to the client, each from the device it comes from."""
        return self._crossings[1]

    @property
    def step_time_us(self) -> float:
        """The trace's makespan: first entry's start to the last one's end, all lanes, µs."""
        return self.trace.makespan_us

    def op_stats(self) -> dict[str, TraceOp]:
        """Per op (each once, from its device's own lane): type, device, times, output bytes."""
        return {op.name: op for op in self.trace.ops}

    def placement(self) -> PlacementReport:
        """Where every op ran and what crossed devices, from the partition graphs alone (the
        timeline, `trace`, is not read)."""
        ops: list[OpPlacement] = []
        ran: set[str] = set()
        fed: dict[str, str] = {}  # fed op -> the device its feed came in on
        for partition in self.run_metadata.partition_graphs:
            for node in partition.node:
                if node.name in self._fed_args:
                    fed[self._fed_args[node.name].split(":")[0]] = split_lane(node.device)[0]
                if node.op in _RUNTIME_OPS:
                    continue
                try:
                    requested = self.graph.get_operation_by_name(node.name).device
                except KeyError:
                    continue  # made by the runtime (e.g. the constant behind a control edge)
                ran.add(node.name)
                ops.append(OpPlacement(node.name, node.op, requested, split_lane(node.device)[0]))
        for name, device in fed.items():
            if name not in ran:  # else another output of the op was computed: it ran
                op = self.graph.get_operation_by_name(name)
                ops.append(OpPlacement(name, op.type, op.device, device, fed=True))
        wanted = needed_ops(fetch_ops(self.graph, self.fetches), self.fed)
        ops.sort(key=lambda op: op.name)
        return PlacementReport(ops, self.transfers, sorted(wanted - ran), self.fetched)

    @cached_property
    def _timeline(self) -> dict[str, Any]:
        """TF's timeline of the run as Chrome-trace JSON, without empty processes, with thread
        names and each op's output bytes (`args.bytes`)."""
        trace = json.loads(chrome_trace(self.run_metadata.step_stats, self.graph))
        events = trace["traceEvents"]
        used = {(e.get("pid"), e.get("tid")) for e in events if e.get("ph") != META}
        lanes = {
            e["pid"]: split_lane(lane)[1]
            for e in events
            if e.get("ph") == META and (lane := compute_lane(e["args"]["name"])) is not None
        }
        sizes = _output_sizes(self.run_metadata)
        for e in events:
            if e.get("ph") == OP and lanes.get(e.get("pid")) == "":
                e["args"]["bytes"] = sum(sizes.get(e["args"]["name"], []))
        pids = {pid for pid, _ in used}
        threads = [
            thread_name_event(pid, tid, _thread_name(lanes.get(pid), tid))
            for pid, tid in sorted(used, key=str)
        ]
        trace["traceEvents"] = [
            e for e in events if e.get("ph") != META or e.get("pid") in pids
        ] + threads
        return trace

    def __repr__(self) -> str:
        return trace_line("TracedRun", self.trace)

    def __str__(self) -> str:
        return "traced run: " + trace_table(self.trace, "op_stats()")

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        from devplace.views.notebook import picture_bundle

        return picture_bundle(self, include, exclude)

    def chrome_trace(self) -> dict[str, Any]:
        """The run as Chrome-trace JSON (what `save_profile` writes): TF's timeline, and a
        `devplace` section with the exact transfers, which `read_trace` reads back."""
        return self._timeline | {
            "devplace": {
                "transfers": [asdict(t) for t in self.trace.transfers],
                "fetched": [asdict(f) for f in self.trace.fetched],
            }
        }


def _thread_name(lane: str | None, tid: Any) -> str:
    if lane is None:
        return f"thread {tid}"
    kind = lane_kind(lane)[0]
    return f"ops, thread {tid}" if kind == "op" else f"{_PLURAL[kind]} ({lane})"


def _output_sizes(metadata: Any) -> dict[str, list[int]]:
    """Per node of the step stats, the bytes of each of its outputs."""
    return {
        node.node_name: [
            o.tensor_description.allocation_description.requested_bytes for o in node.output
        ]
        for dev in metadata.step_stats.dev_stats
        for node in dev.node_stats
    }


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


def _edge(node: Any) -> tuple[str, str, str]:
    """What pairs a `_Send` with its `_Recv`: the edge's name and both devices."""
    return tuple(node.attr[k].s.decode() for k in ("tensor_name", "send_device", "recv_device"))


def _is_fetch(node: Any) -> bool:
    """A fetch's end: a `_Retval` in process, a `_Send` to the client on a remote session."""
    return node.op == "_Retval" or (node.op == "_Send" and node.attr["client_terminated"].b)


def _crossings(
    metadata: Any, graph: Any, fed: dict[str, str]
) -> tuple[list[Transfer], list[Fetch]]:
    """The tensors that crossed devices, and those fetched to the client.

    A transfer is a `_Send` of the partition graphs whose `_Recv` is in another partition. One
    rule for a fetch, in process and remote: its tensor comes from the device that made it, and
    the pair that brings it to the client's device (GPU:0 to CPU:0 in process, a worker to the
    master remotely), read by nothing but the fetch, is the fetch, not a transfer. A fed
    tensor (its node in `fed`) is named as the user's tensor.
    """
    sizes = _output_sizes(metadata)
    nodes = {node.name: node for p in metadata.partition_graphs for node in p.node}
    readers: dict[str, list[Any]] = defaultdict(list)  # node -> the nodes reading it
    receivers: dict[tuple[str, str, str], str] = {}  # edge -> its _Recv node
    for node in nodes.values():
        if node.op == "_Recv":
            receivers[_edge(node)] = node.name
        for source in node.input:
            readers[source.lstrip("^").split(":")[0]].append(node)
    found: list[Transfer] = []
    # each _Recv -> its tensor and the device a fetch of it is from: the sender's for a fetch's
    # own hop, else the receiver's
    arrived: dict[str, tuple[str, str]] = {}
    for node in nodes.values():
        edge = _edge(node) if node.op == "_Send" else None
        if edge is None or edge not in receivers or edge[1] == edge[2]:
            continue
        source = node.input[0]
        tensor = fed.get(source) or (source if ":" in source else f"{source}:0")
        read = readers[receivers[edge]]
        hop = bool(read) and all(_is_fetch(r) for r in read)
        arrived[receivers[edge]] = (tensor, split_lane(edge[1 if hop else 2])[0])
        if hop:
            continue  # the fetch's own hop to the client's device
        control = "/ctrl/" in source  # the constant the runtime sends for a control edge
        found.append(
            Transfer(
                tensor=tensor,
                source=split_lane(edge[1])[0],
                destination=split_lane(edge[2])[0],
                bytes=0 if control else _tensor_bytes(graph, source, sizes),
                control=control,
                consumers=tuple(dict.fromkeys(r.name for r in read if not _is_fetch(r))),
            )
        )
    fetched = [_fetch(n, arrived, graph, sizes, fed) for n in nodes.values() if _is_fetch(n)]
    return found, sorted(fetched, key=lambda f: (f.tensor, f.device))


def _fetch(
    node: Any,
    arrived: dict[str, tuple[str, str]],
    graph: Any,
    sizes: dict[str, list[int]],
    fed: dict[str, str],
) -> Fetch:
    """What `node`, a fetch's end, hands the client, and the device it comes from."""
    source = node.input[0]
    tensor, device = arrived.get(source.split(":")[0], (source, split_lane(node.device)[0]))
    tensor = fed.get(tensor.split(":")[0], tensor)
    if node.op == "_Send":  # remote: the edge names the graph's tensor (not a runtime copy)
        tensor = node.attr["tensor_name"].s.decode()
    elif ":" not in tensor:
        tensor = f"{tensor}:0"
    return Fetch(tensor, device, _tensor_bytes(graph, tensor, sizes))


@accepts_feed_dict
def placement(sess: Any, fetches: Any, feed: Any = None) -> PlacementReport:
    """Run `fetches` once and report where every op ran and what crossed devices."""
    check_session("placement", sess)
    return TracedRun.of(sess, fetches, feed).placement()
