"""What TensorBoard's Graphs dashboard reads: a graph with each op's devices, and a traced run.

`tensorboard(sess, fetches, logdir)` runs `fetches` once with full tracing and writes one
TensorBoard event file into `logdir`: the session's graph, each op that ran carrying the device
it ran on (from the run's partition graphs, as in `dp.placement`) as its device and the one it
asked for as its `requested_device` attribute, and the run's `RunMetadata` under `tag`. The
Graphs dashboard then colours the graph by device ("Color by: Device") and, with the tag picked
under "Tag", by the run's compute time and memory. The files are written with TensorFlow's own
writer; viewing them needs the `tensorboard` package (`pip install 'devplace[tensorboard]'`).
"""

from __future__ import annotations

import glob
import os
import time
from dataclasses import dataclass
from typing import Any

from devplace._tf import tf
from devplace.errors import ArgumentValueError
from devplace.report import PlacementReport
from devplace.session import check_session
from devplace.traced import TracedRun

__all__ = ["REQUESTED_DEVICE_ATTR", "TensorBoardLog", "annotated_graph_def", "tensorboard"]

#: The node attribute that keeps the device an op asked for (its device is where it ran).
REQUESTED_DEVICE_ATTR = "requested_device"


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


def tensorboard(
    sess: Any, fetches: Any, logdir: str | os.PathLike[str], feed: Any = None, tag: str = "run"
) -> TensorBoardLog:
    """Run `fetches` once, traced, and write its graph (actual and requested devices) and
    `RunMetadata` (under `tag`) for TensorBoard into `logdir` (created if needed); returns
    what was written. Open it with `tensorboard --logdir LOGDIR`, Graphs dashboard."""
    check_session("tensorboard", sess)
    if not isinstance(tag, str) or not tag.strip():
        raise ArgumentValueError(
            "tensorboard", "tag", tag, "a non-empty string", "the default is tag='run'"
        )
    logdir = os.fspath(logdir)
    if os.path.exists(logdir) and not os.path.isdir(logdir):
        raise ArgumentValueError(
            "tensorboard", "logdir", logdir, "a folder", "name a folder (it is made if needed)"
        )
    traced = TracedRun.of(sess, fetches, feed)
    placement = traced.placement()
    # Each call its own file: TF names event files by the second, and would write over one.
    suffix = f".devplace-{time.time_ns()}"
    writer = tf.summary.FileWriter(
        logdir, graph_def=annotated_graph_def(traced.graph, placement), filename_suffix=suffix
    )
    try:
        writer.add_run_metadata(traced.run_metadata, tag)
    finally:
        writer.close()
    (events_file,) = glob.glob(os.path.join(glob.escape(logdir), f"events.out.tfevents.*{suffix}"))
    return TensorBoardLog(logdir, events_file, tag, traced, placement)
