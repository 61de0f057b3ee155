"""Reading Chrome traces written by `save_profile`: ops per device, transfers, busy time.

A TensorFlow timeline names one process per device, `"<device> Compute"` (ops as complete
`X` events) and `"<device> Tensors"`; data flowing between ops are flow events (`s` then `t`,
paired by id). devplace's `save_profile` also writes a `devplace` section with the exact
cross-device transfers (tensor, devices, bytes) taken from the partition graphs; traces
without it (written by TF's own `Timeline`) get their transfers from the cross-device flows,
with unknown bytes.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import Any

from devplace.errors import Error

__all__ = [
    "Trace",
    "TraceError",
    "TraceFlow",
    "TraceOp",
    "TraceTransfer",
    "device_of_process",
    "read_trace",
]

_LOCAL_PREFIX = "/job:localhost/replica:0/task:0"
_DEVICE = re.compile(r"/device:([A-Za-z_]+):(\d+)", re.IGNORECASE)
_HINT = "write traces with dp.save_profile(path) or `devplace demo`"


class TraceError(Error, ValueError):
    """A trace file that is missing or is not a TensorFlow Chrome trace; names the file."""

    def __init__(self, source: str, problem: str, hint: str = _HINT):
        self.source = source
        self.problem = problem
        super().__init__(f"profile trace {source}: {problem} ({hint})")


@dataclass(frozen=True)
class TraceOp:
    """One op execution: device lane, thread, start and duration in µs since the first op."""

    name: str
    op_type: str
    device: str
    thread: int
    start_us: float
    duration_us: float

    @property
    def end_us(self) -> float:
        """When the op finished, in µs since the first op."""
        return self.start_us + self.duration_us


@dataclass(frozen=True)
class TraceFlow:
    """A tensor produced on one device and consumed on another (a cross-device flow event)."""

    tensor: str
    source: str
    destination: str
    start_us: float
    end_us: float


@dataclass(frozen=True)
class TraceTransfer:
    """A tensor sent between devices; `bytes` is None when the trace does not say."""

    tensor: str
    source: str
    destination: str
    bytes: int | None
    control: bool = False


@dataclass
class Trace:
    """A parsed trace: its devices (lanes), ops, cross-device flows and transfers."""

    source: str
    devices: list[str]
    ops: list[TraceOp]
    flows: list[TraceFlow]
    transfers: list[TraceTransfer]
    exact_transfers: bool = field(default=False)

    @property
    def makespan_us(self) -> float:
        """From the first op's start to the last op's end, in µs."""
        return max((op.end_us for op in self.ops), default=0.0)

    def ops_on(self, device: str) -> list[TraceOp]:
        """The ops that ran on `device`, by start time."""
        return sorted((op for op in self.ops if op.device == device), key=lambda o: o.start_us)

    def busy_us(self) -> dict[str, float]:
        """Per device, the time at least one op was running (overlaps counted once), in µs."""
        busy = {}
        for device in self.devices:
            total, reach = 0.0, float("-inf")
            for op in self.ops_on(device):
                if op.end_us > reach:
                    total += op.end_us - max(op.start_us, reach)
                    reach = op.end_us
            busy[device] = total
        return busy

    @property
    def transfer_count(self) -> int:
        """Tensors sent between devices (control edges included when the trace lists them)."""
        return len(self.transfers)

    @property
    def transfer_bytes(self) -> int | None:
        """Bytes sent between devices; None when the trace does not record sizes."""
        if any(t.bytes is None for t in self.transfers):
            return None
        return sum(t.bytes or 0 for t in self.transfers)


def device_of_process(process: str) -> str:
    """The device a timeline process stands for: `/device:CPU:0` from
    `/job:localhost/replica:0/task:0/device:CPU:0 Compute`; streams keep their suffix."""
    name = process.rsplit(" ", 1)[0] if process.endswith((" Compute", " Tensors")) else process
    if name.startswith(_LOCAL_PREFIX):
        name = name[len(_LOCAL_PREFIX) :]
    return _DEVICE.sub(lambda m: f"/device:{m.group(1).upper()}:{m.group(2)}", name)


def _load(source: Any) -> tuple[str, Any]:
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except FileNotFoundError:
            raise TraceError(repr(path), "no such file") from None
        except IsADirectoryError:
            raise TraceError(repr(path), "is a directory, not a trace file") from None
        except UnicodeDecodeError:
            raise TraceError(repr(path), "is not text (binary file?)") from None
        try:
            return repr(path), json.loads(text)
        except json.JSONDecodeError as err:
            raise TraceError(
                repr(path), f"is not JSON: {err.msg} at line {err.lineno} column {err.colno}"
            ) from None
    if isinstance(source, dict):
        return "(in memory)", source
    raise TraceError(repr(source), f"expected a path or a trace dict, got {type(source).__name__}")


def _number(name: str, event: dict[str, Any], key: str, index: int) -> float:
    value = event.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TraceError(
            name,
            f"traceEvents[{index}] ({event.get('ph')!r} event {event.get('name')!r}) "
            f"has {key}={value!r}, expected a number",
        )
    return float(value)


def _processes(name: str, events: list[Any]) -> dict[Any, str]:
    processes = {}
    for i, event in enumerate(events):
        if not isinstance(event, dict):
            raise TraceError(name, f"traceEvents[{i}] is {type(event).__name__}, not an object")
        if event.get("ph") == "M" and event.get("name") == "process_name":
            label = (event.get("args") or {}).get("name")
            if isinstance(label, str):
                processes[event.get("pid")] = label
    return processes


def _transfers_section(name: str, data: Any) -> list[TraceTransfer] | None:
    section = data.get("devplace") if isinstance(data, dict) else None
    if section is None:
        return None
    items = section.get("transfers") if isinstance(section, dict) else None
    if not isinstance(items, list):
        raise TraceError(name, "its 'devplace' section has no 'transfers' list")
    transfers = []
    for i, item in enumerate(items):
        try:
            transfers.append(
                TraceTransfer(
                    str(item["tensor"]),
                    str(item["source"]),
                    str(item["destination"]),
                    int(item["bytes"]),
                    bool(item.get("control", False)),
                )
            )
        except (KeyError, TypeError, ValueError) as err:
            raise TraceError(
                name, f"devplace.transfers[{i}] is malformed ({type(err).__name__}: {err})"
            ) from None
    return transfers


def read_trace(trace_or_path: Any) -> Trace:
    """Parse a Chrome trace (a path, or the dict `Profile.trace`) into a `Trace`.

    Raises `TraceError` naming the file and what is wrong when it is missing, not JSON, or
    not a TensorFlow timeline (no `"<device> Compute"` processes).
    """
    if isinstance(trace_or_path, Trace):
        return trace_or_path
    name, data = _load(trace_or_path)
    events = data.get("traceEvents") if isinstance(data, dict) else data
    if not isinstance(events, list):
        raise TraceError(name, "has no 'traceEvents' list; not a Chrome trace")
    processes = _processes(name, events)
    compute = {pid: device_of_process(p) for pid, p in processes.items() if p.endswith(" Compute")}
    if not compute:
        raise TraceError(
            name,
            "has no '<device> Compute' processes; not a TensorFlow timeline "
            f"(processes: {sorted(processes.values()) or 'none'})",
        )
    raw_ops, starts, ends = [], {}, {}
    for i, event in enumerate(events):
        phase = event.get("ph")
        if phase == "X" and event.get("pid") in compute:
            args = event.get("args") or {}
            if args.get("name") == "_SOURCE":
                continue
            ts, dur = _number(name, event, "ts", i), _number(name, event, "dur", i)
            op_name = str(args.get("name", event.get("name", "?")))
            op_type = str(args.get("op", event.get("name", "?")))
            raw_ops.append((op_name, op_type, compute[event["pid"]], event.get("tid", 0), ts, dur))
        elif phase in ("s", "t") and event.get("pid") in compute:
            ts = _number(name, event, "ts", i)
            side = starts if phase == "s" else ends
            side[(event.get("cat"), event.get("id"))] = (str(event.get("name")), event["pid"], ts)
    origin = min((op[4] for op in raw_ops), default=0.0)
    ops = [
        TraceOp(n, t, d, int(tid) if isinstance(tid, int) else 0, ts - origin, dur)
        for n, t, d, tid, ts, dur in raw_ops
    ]
    flows = []
    for key, (tensor, pid, ts) in starts.items():
        if key in ends and compute[ends[key][1]] != compute[pid]:
            flows.append(
                TraceFlow(
                    tensor, compute[pid], compute[ends[key][1]], ts - origin, ends[key][2] - origin
                )
            )
    flows.sort(key=lambda f: (f.start_us, f.end_us, f.tensor))
    exact = _transfers_section(name, data)
    if exact is None:
        unique = dict.fromkeys((f.tensor, f.source, f.destination) for f in flows)
        transfers = [TraceTransfer(t, s, d, None) for t, s, d in unique]
    else:
        transfers = exact
    devices = sorted(set(compute.values()), key=_device_order)
    return Trace(name, devices, ops, flows, transfers, exact_transfers=exact is not None)


def _device_order(device: str) -> tuple[str, int, str]:
    found = _DEVICE.search(device)
    if not found:
        return (device, 0, "")
    return (device[: found.start()] + found.group(1), int(found.group(2)), device[found.end() :])
