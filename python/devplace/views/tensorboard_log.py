"""What TensorBoard's Graphs dashboard reads: a graph with each op's devices, and a traced run.

`tensorboard(sess, fetches, logdir)` runs `fetches` once with full tracing and writes one
TensorBoard event file into `logdir`: the session's graph, each op that ran carrying the device
it ran on (from the run's partition graphs, as in `dp.placement`) as its device and the one it
asked for as its `requested_device` attribute, and the run's `RunMetadata` under `tag`. An op
that did not run (not needed for the fetches, or optimized away by TF) has no device, so it is
not coloured as a device it never used, and a `did_not_run` attribute saying why. The Graphs
dashboard then colours the graph by where each op ran ("Color by: Device") and, with the tag
picked under "Tag", by the run's compute time and memory. The files are written with
TensorFlow's own writer; viewing them needs the `tensorboard` package
(`pip install 'devplace[tensorboard]'`).

A saved profile (`save_profile`'s Chrome trace, also from Julia or a remote session) holds less:
`tensorboard_from_profile` (`devplace tensorboard TRACE.json --logdir DIR`) writes its ops on
the devices they ran on, the edges the trace records and each op's time and output bytes; the
requests and output slots are not in a trace.
"""

from __future__ import annotations

import glob
import os
import re
import tempfile
import time
from dataclasses import dataclass
from typing import Any

from devplace.adapter._tf import tf
from devplace.adapter.feeds import accepts_feed_dict
from devplace.adapter.session import check_session
from devplace.core import atomic
from devplace.core.errors import ArgumentValueError
from devplace.core.formatting import plural
from devplace.core.printed import Printed
from devplace.facts.report import PlacementReport
from devplace.facts.trace import Trace, TraceOp, read_trace
from devplace.facts.traced import TracedRun

__all__ = [
    "NOT_RUN_ATTR",
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
#: The node attribute of an op that did not run in the traced run: why (it has no device).
NOT_RUN_ATTR = "did_not_run"
# Ops the runtime adds to a run (not in the user's graph): sources, fetches, sends, receives.
_RUNTIME_OPS = frozenset({"_Retval", "_Arg", "_Send", "_Recv", "_HostSend", "_HostRecv"})
_RUNTIME_NODES = frozenset({"_SOURCE", "_SINK"})
_RUNTIME_NAME = re.compile(r"/_\d+$")  # an op the runtime made, named after another


@dataclass(frozen=True)
class TensorBoardLog(Printed):
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

    def __repr__(self) -> str:
        return f"TensorBoardLog({self.events_file!r}, tag {self.tag!r}, {self.placement!r})"

    def __str__(self) -> str:
        ops, devices = len(self.placement.ops), len(self.placement.devices)
        return (
            f"TensorBoard log of {plural(ops, 'op')} on {plural(devices, 'device')} in "
            f"{self.events_file} (run metadata tag {self.tag!r}); view it with: {self.command}"
        )


def annotated_graph_def(graph: Any, placement: PlacementReport) -> Any:
    """`graph`'s GraphDef with each op that ran on its actual device, every op's request kept
    as its `requested_device` attribute (empty when it asked for none), and each op that did
    not run without a device and with a `did_not_run` attribute saying why."""
    graph_def = graph.as_graph_def()
    actual = {op.name: op.actual for op in placement.ops}
    folded = set(placement.optimized_away)
    for node in graph_def.node:
        node.attr[REQUESTED_DEVICE_ATTR].s = node.device.encode()
        node.device = actual.get(node.name, "")
        if node.name not in actual:
            why = "optimized away by TF" if node.name in folded else "not needed for the fetches"
            node.attr[NOT_RUN_ATTR].s = why.encode()
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
    try:
        os.makedirs(logdir, exist_ok=True)
        # TF's writer reports few failures (a full disk is logged, not raised): it writes into a
        # scratch folder, and the file is then written into place by devplace.core.atomic.
        with tempfile.TemporaryDirectory(prefix=".devplace-", dir=logdir) as scratch:
            writer = tf.summary.FileWriter(scratch, graph_def=graph_def, filename_suffix=suffix)
            try:
                writer.add_run_metadata(run_metadata, tag)
            finally:
                writer.close()
            (written,) = glob.glob(os.path.join(glob.escape(scratch), "events.out.tfevents.*"))
            events_file = os.path.join(logdir, os.path.basename(written))
            with open(written, "rb") as f:
                return str(atomic.write_bytes(events_file, f.read()))
    except (OSError, tf.errors.OpError) as err:
        if isinstance(err, atomic.FileWriteError):
            raise
        reason = getattr(err, "strerror", None) or getattr(err, "message", None) or str(err)
        raise atomic.FileWriteError(
            f"cannot write a TensorBoard event file into {logdir!r}: {reason}. Hint: choose a "
            "folder you can write to, on a disk with free space"
        ) from err


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


def profile_graph(source: str | os.PathLike[str] | Trace) -> tuple[Any, Any]:
    """A saved profile (`save_profile`'s Chrome trace, its path or its `Trace`) as a GraphDef
    and a RunMetadata, built from the `Trace` alone: its ops
    on the devices they ran on, with the inputs the trace records (a tensor from another device
    as an edge from the op that sent it; output slots are not recorded, so edges leave slot 0),
    and each op's start, duration and output bytes."""
    trace = read_trace(source)
    ran = [
        op
        for op in trace.ops
        if op.op_type not in _RUNTIME_OPS
        and op.name not in _RUNTIME_NODES
        and not _RUNTIME_NAME.search(op.name)
    ]
    ops = {op.name: op for op in reversed(ran)}  # an op listed twice: its first entry
    kept = [op for op in ran if ops[op.name] is op]
    graph_def = tf.GraphDef()
    for op in kept:
        node = graph_def.node.add(name=op.name, op=op.op_type, device=op.device)
        for name in op.inputs:
            sender = _source_op(name.lstrip("^"), ops)
            if sender is not None and sender != op.name:
                node.input.append(("^" if name.startswith("^") else "") + sender)
    metadata = tf.RunMetadata()
    for device in trace.devices:
        stats = metadata.step_stats.dev_stats.add(device=device)
        for op in sorted((o for o in kept if o.device == device), key=lambda o: o.start_us):
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
