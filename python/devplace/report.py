"""Placement reports: for each op the device asked for, the device used, and the transfers.

The actual devices come from what the runtime ran (`RunMetadata.partition_graphs`), never from
`op.device`, which only records the request: a soft-placed op says `/device:GPU:0` there while
it ran on the CPU.
"""

from __future__ import annotations

import csv
import io
import json
import os
from dataclasses import asdict, dataclass
from typing import Any

from devplace._tf import tf
from devplace.devices import DeviceSpecError, canonical_device, parse_device
from devplace.devices import short_device

__all__ = ["OpPlacement", "PlacementReport", "Transfer", "placement", "transfers"]

_RUNTIME_OPS = frozenset({"_Send", "_Recv", "_HostSend", "_HostRecv", "_Retval", "_Arg"})


@dataclass(frozen=True)
class OpPlacement:
    """Where one op was asked to run and where it ran."""

    name: str
    op_type: str
    requested: str
    actual: str

    @property
    def moved(self) -> bool:
        """True when the runtime put the op somewhere other than its (partial) request."""
        if not self.requested:
            return False
        try:
            want = canonical_device(self.requested)
        except DeviceSpecError:
            return True
        return not _matches(want, self.actual)


def _matches(requested: str, actual: str) -> bool:
    """Whether every field the request names agrees with the actual device."""
    want, got = parse_device(requested), parse_device(actual)
    return all(
        w is None or w == g
        for w, g in (
            (want.job, got.job if got.job is not None else "localhost"),
            (want.replica, got.replica if got.replica is not None else 0),
            (want.task, got.task if got.task is not None else 0),
            (want.device_type, got.device_type),
            (want.device_index, got.device_index),
        )
    )


@dataclass(frozen=True)
class Transfer:
    """One tensor sent between devices (a `_Send`/`_Recv` pair in the partition graphs)."""

    tensor: str
    source: str
    destination: str
    bytes: int
    control: bool = False


@dataclass
class PlacementReport:
    """The placement of every op that ran for some fetches, and the transfers it caused."""

    ops: list[OpPlacement]
    transfers: list[Transfer]
    optimized_away: list[str]

    def __getitem__(self, name: str) -> OpPlacement:
        for op in self.ops:
            if op.name == name:
                return op
        raise KeyError(
            f"no op named {name!r} ran; ops that ran: {', '.join(o.name for o in self.ops)}"
        )

    def actual(self, name: str) -> str:
        """The device op `name` ran on."""
        return self[name].actual

    @property
    def transfer_count(self) -> int:
        """Tensors sent between devices (control-only edges included)."""
        return len(self.transfers)

    @property
    def transfer_bytes(self) -> int:
        """Bytes sent between devices."""
        return sum(t.bytes for t in self.transfers)

    @property
    def devices(self) -> list[str]:
        """The devices that ran at least one op."""
        return sorted({op.actual for op in self.ops})

    @property
    def moved(self) -> list[OpPlacement]:
        """Ops that ran somewhere other than requested (soft placement fell back)."""
        return [op for op in self.ops if op.moved]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary of the whole report."""
        return {
            "ops": [asdict(op) | {"moved": op.moved} for op in self.ops],
            "transfers": [asdict(t) for t in self.transfers],
            "transfer_count": self.transfer_count,
            "transfer_bytes": self.transfer_bytes,
            "optimized_away": self.optimized_away,
        }

    def to_json(self, path: str | os.PathLike[str] | None = None) -> str:
        """The report as JSON text, also written to `path` when given."""
        text = json.dumps(self.to_dict(), indent=2)
        if path is not None:
            with open(path, "w") as f:
                f.write(text + "\n")
        return text

    def to_csv(self, path: str | os.PathLike[str] | None = None) -> str:
        """One row per op (op, type, requested, actual, moved, transfers out, bytes out)."""
        sent: dict[str, list[int]] = {}
        for t in self.transfers:
            count_bytes = sent.setdefault(t.tensor.split(":")[0], [0, 0])
            count_bytes[0] += 1
            count_bytes[1] += t.bytes
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(
            ["op", "type", "requested", "actual", "moved", "transfers_out", "bytes_out"]
        )
        for op in self.ops:
            count, size = sent.get(op.name, [0, 0])
            writer.writerow([op.name, op.op_type, op.requested, op.actual, op.moved, count, size])
        text = buffer.getvalue()
        if path is not None:
            with open(path, "w", newline="") as f:
                f.write(text)
        return text

    def table(self) -> str:
        """A plain-text table: op, type, requested, actual, then a transfers summary."""
        sent: dict[str, int] = {}
        for t in self.transfers:
            key = t.tensor.split(":")[0]
            sent[key] = sent.get(key, 0) + 1
        header = ("op", "type", "requested", "actual", "transfers out")
        rows = [
            (
                op.name,
                op.op_type,
                op.requested or "-",
                op.actual + (" *" if op.moved else ""),
                str(sent.get(op.name, "")),
            )
            for op in self.ops
        ]
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
        lines = [
            "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
            for row in [header, *rows]
        ]
        lines.insert(1, "  ".join("-" * w for w in widths))
        control = sum(t.control for t in self.transfers)
        lines.append(
            f"{self.transfer_count} cross-device transfers, {self.transfer_bytes} bytes"
            + (f" ({control} control-only, sent by no op above)" if control else "")
            + (f"; {len(self.moved)} ops (*) ran elsewhere than requested" if self.moved else "")
        )
        if self.optimized_away:
            lines.append(f"optimized away by TF: {', '.join(self.optimized_away)}")
        return "\n".join(lines)

    __str__ = table


def _fetch_ops(graph: Any, fetches: Any) -> list[Any]:
    flat = tf.nest.flatten(fetches)
    ops = []
    for fetch in flat:
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


def _output_bytes(run_metadata: Any) -> dict[str, list[int]]:
    sizes: dict[str, list[int]] = {}
    for dev in run_metadata.step_stats.dev_stats:
        for node in dev.node_stats:
            sizes[node.node_name] = [
                o.tensor_description.allocation_description.requested_bytes for o in node.output
            ]
    return sizes


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


def _canonical_or_raw(device: str) -> str:
    try:
        return canonical_device(device)
    except DeviceSpecError:
        return device


def _send_transfer(
    node: Any, nodes: dict[str, Any], graph: Any, sizes: dict[str, list[int]]
) -> Transfer:
    source = node.input[0]
    source_node = nodes.get(source.split(":")[0])
    control = source_node is not None and "/ctrl/" in source_node.name
    return Transfer(
        tensor=source if ":" in source else f"{source}:0",
        source=short_device(node.attr["send_device"].s.decode()),
        destination=short_device(node.attr["recv_device"].s.decode()),
        bytes=0 if control else _tensor_bytes(graph, source, sizes),
        control=control,
    )


def transfers(graph: Any, run_metadata: Any) -> list[Transfer]:
    """The cross-device transfers of a run traced with `output_partition_graphs=True`."""
    sizes = _output_bytes(run_metadata)
    found = []
    for partition in run_metadata.partition_graphs:
        nodes = {n.name: n for n in partition.node}
        found.extend(
            _send_transfer(n, nodes, graph, sizes) for n in partition.node if n.op == "_Send"
        )
    return found


def placement(sess: Any, fetches: Any, feed: Any = None) -> PlacementReport:
    """Run `fetches` once and report where every op ran and what crossed devices."""
    graph = sess.graph
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE, output_partition_graphs=True)
    metadata = tf.RunMetadata()
    sess.run(fetches, feed_dict=feed, options=options, run_metadata=metadata)
    ops: list[OpPlacement] = []
    ran: set[str] = set()
    for partition in metadata.partition_graphs:
        for node in partition.node:
            if node.op in _RUNTIME_OPS:
                continue
            try:
                requested = graph.get_operation_by_name(node.name).device
            except KeyError:
                continue  # made by the runtime (e.g. the constant behind a control edge)
            ran.add(node.name)
            ops.append(OpPlacement(node.name, node.op, requested, short_device(node.device)))
    wanted = _closure(_fetch_ops(graph, fetches))
    ops.sort(key=lambda op: op.name)
    return PlacementReport(ops, transfers(graph, metadata), sorted(wanted - ran))
