"""What TensorBoard's Graphs dashboard reads: a graph with each op's devices, and a traced run.

`tensorboard(sess, fetches, logdir)` runs `fetches` once with full tracing and writes one
TensorBoard event file into `logdir`: the session's graph, each op that ran carrying the device
it ran on (from the run's partition graphs, as in `dp.placement`) as its device and the one it
asked for as its `requested_device` attribute, and the run's `RunMetadata` under `tag`. The
Graphs dashboard then colours the graph by device ("Color by: Device") and, with the tag picked
under "Tag", by the run's compute time and memory. The files are written with TensorFlow's own
writer; viewing them needs the `tensorboard` package (`pip install 'devplace[tensorboard]'`).

A saved profile (`save_profile`'s Chrome trace, also from Julia or a remote session) holds less:
`tensorboard_from_profile` (`devplace tensorboard TRACE.json --logdir DIR`) writes its ops on
the devices they ran on, the edges the trace records and each op's time and output bytes; the
requests and output slots are not in a trace.
"""

from __future__ import annotations

import glob
import json
import os
import re
import time
from dataclasses import dataclass
from typing import Any

from devplace._tf import tf
from devplace.devices import split_lane
from devplace.errors import ArgumentValueError
from devplace.feeds import accepts_feed_dict
from devplace.report import PlacementReport
from devplace.session import check_session
from devplace.trace import TraceOp, read_trace
from devplace.traced import TracedRun

__all__ = [
    "REQUESTED_DEVICE_ATTR",
    "TensorBoardLog",
    "annotated_graph_def",
    "profile_graph",
    "tensorboard",
    "tensorboard_from_profile",
    "write_events",
]

#: The node attribute that keeps the device an op asked for (its device is where it ran).
REQUESTED_DEVICE_ATTR = "requested_device"
# Ops the runtime adds to a run (not in the user's graph): sources, fetches, sends, receives.
_RUNTIME_OPS = frozenset({"_Retval", "_Arg", "_Send", "_Recv", "_HostSend", "_HostRecv"})
_RUNTIME_NODES = frozenset({"_SOURCE", "_SINK"})
_RUNTIME_NAME = re.compile(r"/_\d+$")  # an op the runtime made, named after another
_INPUT = re.compile(r"input(\d+)")  # a timeline event's inputs: args input0, input1, ...


@dataclass(frozen=True)
class TensorBoardLog:
    """What `tensorboard` wrote: the event file in `logdir`, the run metadata's `tag`, the
    traced run (`run`: its values, `RunMetadata`, timeline picture) and its placement (as
    `dp.placement` reports it)."""

    logdir: str
    events_file: str
    tag: str
    run: TracedRun
    placement: PlacementReport

    @property
    def command(self) -> str:
        """The command that shows it: `tensorboard --logdir LOGDIR`."""
        return f"tensorboard --logdir {self.logdir}"

    def __str__(self) -> str:
        return (
            f"TensorBoard log of {len(self.placement.ops)} ops on "
            f"{len(self.placement.devices)} devices in {self.events_file} (run metadata "
            f"tag {self.tag!r}); view it with: {self.command}"
        )


def annotated_graph_def(graph: Any, placement: PlacementReport) -> Any:
    """`graph`'s GraphDef with each op that ran on its actual device, and every op's request
    kept as its `requested_device` attribute (empty when it asked for none)."""
    graph_def = graph.as_graph_def()
    actual = {op.name: op.actual for op in placement.ops}
    for node in graph_def.node:
        node.attr[REQUESTED_DEVICE_ATTR].s = node.device.encode()
        node.device = actual.get(node.name, node.device)
    return graph_def


@accepts_feed_dict
def tensorboard(
    sess: Any, fetches: Any, logdir: str | os.PathLike[str], feed: Any = None, tag: str = "run"
) -> TensorBoardLog:
    """Run `fetches` once, traced, and write its graph (actual and requested devices) and
    `RunMetadata` (under `tag`) for TensorBoard into `logdir` (created if needed); returns
    what was written. Open it with `tensorboard --logdir LOGDIR`, Graphs dashboard."""
    check_session("tensorboard", sess)
    logdir = _check_output("tensorboard", logdir, tag)
    traced = TracedRun.of(sess, fetches, feed)
    placement = traced.placement()
    graph_def = annotated_graph_def(traced.graph, placement)
    events_file = write_events(logdir, graph_def, traced.run_metadata, tag)
    return TensorBoardLog(logdir, events_file, tag, traced, placement)


def write_events(logdir: str, graph_def: Any, run_metadata: Any, tag: str) -> str:
    """Write a graph and a run's metadata (under `tag`) as a new event file in `logdir`;
    returns its path."""
    # Each call its own file: TF names event files by the second, and would write over one.
    suffix = f".devplace-{time.time_ns()}"
    writer = tf.summary.FileWriter(logdir, graph_def=graph_def, filename_suffix=suffix)
    try:
        writer.add_run_metadata(run_metadata, tag)
    finally:
        writer.close()
    (events_file,) = glob.glob(os.path.join(glob.escape(logdir), f"events.out.tfevents.*{suffix}"))
    return events_file


def _check_output(function: str, logdir: str | os.PathLike[str], tag: str) -> str:
    if not isinstance(tag, str) or not tag.strip():
        raise ArgumentValueError(function, "tag", tag, "a non-empty string", "e.g. tag='run'")
    logdir = os.fspath(logdir)
    if os.path.exists(logdir) and not os.path.isdir(logdir):
        raise ArgumentValueError(
            function, "logdir", logdir, "a folder", "name a folder (it is made if needed)"
        )
    return logdir


def _source_op(name: str, ops: dict[str, TraceOp]) -> str | None:
    """The op an input names: itself, or for a tensor received from another device the op
    that sent it (the runtime names a receive `<sender>/_<n>`, a control edge's
    `<sender>/ctrl/_<n>`)."""
    while name not in ops:
        base = _RUNTIME_NAME.sub("", name)
        base = base.removesuffix("/ctrl")
        if base == name:
            return None
        name = base
    return name


def _op_lane_events(events: list[Any]) -> list[dict[str, Any]]:
    """The complete events of the devices' own op lanes (not GPU streams or copies)."""
    lanes = {
        e.get("pid"): str((e.get("args") or {}).get("name", ""))
        for e in events
        if e.get("ph") == "M" and e.get("name") == "process_name"
    }
    op_lanes = {
        pid
        for pid, name in lanes.items()
        if name.endswith(" Compute") and split_lane(name.rsplit(" ", 1)[0])[1] == ""
    }
    return [
        e
        for e in events
        if e.get("ph") == "X" and e.get("pid") in op_lanes and isinstance(e.get("args"), dict)
    ]


def profile_graph(path: str | os.PathLike[str]) -> tuple[Any, Any]:
    """A saved profile (`save_profile`'s Chrome trace) as a GraphDef and a RunMetadata: its ops
    on the devices they ran on, with the inputs the trace records (a tensor from another device
    as an edge from the op that sent it; output slots are not recorded, so edges leave slot 0),
    and each op's start, duration and output bytes."""
    trace = read_trace(path)
    ops = {
        op.name: op
        for op in trace.ops
        if op.op_type not in _RUNTIME_OPS
        and op.name not in _RUNTIME_NODES
        and not _RUNTIME_NAME.search(op.name)
    }
    with open(path, "rb") as f:
        events = json.load(f)["traceEvents"]
    graph_def = tf.GraphDef()
    kept: set[str] = set()
    for event in _op_lane_events(events):
        args = event["args"]
        op = ops.get(args.get("name", ""))
        if op is None or op.name in kept or args.get("op") != op.op_type:
            continue
        kept.add(op.name)
        node = graph_def.node.add(name=op.name, op=op.op_type, device=op.device)
        inputs = sorted((int(m[1]), v) for k, v in args.items() if (m := _INPUT.fullmatch(k)))
        for _, name in inputs:
            source = _source_op(str(name).lstrip("^"), ops)
            if source is not None and source != op.name:
                node.input.append(("^" if str(name).startswith("^") else "") + source)
    metadata = tf.RunMetadata()
    for device in trace.devices:
        stats = metadata.step_stats.dev_stats.add(device=device)
        for op in trace.ops_on(device):
            if op.name not in kept:
                continue
            node = stats.node_stats.add(
                node_name=op.name,
                all_start_micros=round(op.start_us),
                op_end_rel_micros=round(op.duration_us),
                all_end_rel_micros=round(op.duration_us),
            )
            allocation = node.output.add(slot=0).tensor_description.allocation_description
            allocation.requested_bytes = allocation.allocated_bytes = op.output_bytes
    return graph_def, metadata


def tensorboard_from_profile(
    path: str | os.PathLike[str], logdir: str | os.PathLike[str], tag: str = "run"
) -> str:
    """Write a saved profile (`profile_graph`) for TensorBoard's Graphs dashboard into
    `logdir`; returns the event file. `devplace tensorboard TRACE.json --logdir DIR`."""
    logdir = _check_output("tensorboard_from_profile", logdir, tag)
    graph_def, metadata = profile_graph(path)
    return write_events(logdir, graph_def, metadata, tag)
