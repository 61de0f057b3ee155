"""Chrome traces of traced runs: validated on entry, lanes normalised into devices.

A TensorFlow timeline names one process per lane, `"<lane> Compute"`, and data flowing between
ops are flow events (`s` then `t`, paired by id). A CPU is one lane. A GPU is several: its
host side that launches kernels (`/device:GPU:0`), its kernel streams (`/device:GPU:0/stream:13`),
`stream:all` (the same kernels again), and its copies (`memcpy`, and the same copies again per
stream as `stream:14<MemcpyH2D>`, `stream:15<MemcpyD2H>`, peer copies `<MemcpyP2P>`). This module
is the one place that folds lanes into devices: every entry becomes a `TraceOp` of its device,
of kind `"op"` (host side: what op counts and busy time count), `"kernel"` or `"copy"`, and the
aggregate lanes are used only where the per-stream lanes are missing, so nothing is counted
twice. On a remote session a task logs each tensor it receives from another task as a
`RecvTensor` entry in its op lane: that is a copy (`direction` `"RPC"`), not an op.

A `Trace` is the one record of a traced run's facts: `devplace.facts.traced.TracedRun.trace` is this
reading of the run's timeline, with the exact cross-device transfers (tensor, devices, bytes, the
ops that read it) handed in from the partition graphs; a trace file written by `save_profile`
reads back to the same `Trace`, its transfers from the file's `devplace` section. The report, the
per-op statistics, the pictures and the comparisons are all views of a `Trace`. Traces without
that section (written by TF's own `Timeline`) get their transfers from the cross-device flow
events, with unknown bytes.

Traces are checked where they enter (`read_trace`): a file above `MAX_TRACE_BYTES`, endless
input, nesting too deep for the JSON reader, wrong types, and times that are not finite or out
of range are refused with a `TraceError` naming the file, the place inside it
(`traceEvents[12].dur`), what was expected and what was found.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from operator import attrgetter
from typing import Any

from devplace.adapter.devices import DeviceSpecError, parse_device, split_lane
from devplace.core._gc import cycle_collector_paused
from devplace.core._json import parse_json
from devplace.core.errors import Error
from devplace.facts.trace_format import FLOW_END, FLOW_START, META, OP, PROCESS_NAME, compute_lane

__all__ = [
    "MAX_DURATION_US",
    "MAX_TRACE_BYTES",
    "Fetch",
    "Trace",
    "TraceError",
    "TraceOp",
    "Transfer",
    "lane_kind",
    "read_trace",
]

#: Largest trace file read; larger ones are refused before reading.
MAX_TRACE_BYTES = 256 * 2**20
#: Longest op duration accepted (one day), in µs.
MAX_DURATION_US = 86_400e6
#: Largest timestamp accepted, in µs (about 3,000 years after 1970).
MAX_TIMESTAMP_US = 1e17
_RPC_RECEIVE = "RecvTensor"  # what a task's op lane calls a tensor received from another task
_HINT = "write traces with dp.save_profile(path) or `devplace demo`"
_CHUNK = 2**20
_SKIP = object()  # an event that is no entry (`_entry`)
_START = attrgetter("start_us")  # entries by start time
_READ: dict[str, Any] = {}  # in place of an op event read and released (`_raw_entries`)
# What TF's runtime adds to a partitioned graph: send/receive, arguments and return values, and
# the nodes it names `<op>/_<n>` (the constant behind a control edge, a receiving identity).
_RUNTIME_TYPES = frozenset({"_Send", "_Recv", "_HostSend", "_HostRecv", "_Retval", "_Arg"})
_RUNTIME_NAME = re.compile(r"/_\d+$")
_INPUT = re.compile(r"input(\d+)")  # an entry's inputs: args input0, input1, ...


class TraceError(Error, ValueError):
    """A trace that is missing, too large or not a valid TensorFlow Chrome trace; names it."""

    def __init__(self, source: str, problem: str, hint: str = _HINT):
        self.source = source
        self.problem = problem
        super().__init__(f"profile trace {source!r}: {problem} ({hint})")


@dataclass(frozen=True, slots=True)
class TraceOp:
    """One entry of a device's lanes, in µs since the trace's first entry.

    `kind` is `"op"` (the op as the device's executor ran it; on a GPU the host side that
    launches the kernel), `"kernel"` (a GPU kernel on a stream) or `"copy"` (a memory copy, or
    a tensor received from another task);
    `lane` is the stream it ran on (`"stream:13"`, `"stream:14<MemcpyH2D>"`), `""` for ops;
    `output_bytes` what its outputs took (0 where the trace does not say); `inputs` the tensors
    it read as the trace names them (its `input0`, `input1`, ... arguments: `"x"`, `"^y"` for a
    control edge, `"z/_3"` for a tensor received from another device).
    """

    name: str
    op_type: str
    device: str
    thread: int
    start_us: float
    duration_us: float
    kind: str = "op"
    lane: str = ""
    output_bytes: int = 0
    inputs: tuple[str, ...] = ()

    @property
    def end_us(self) -> float:
        """When the entry finished, in µs since the first entry."""
        return self.start_us + self.duration_us

    @property
    def by_runtime(self) -> bool:
        """Made by TensorFlow's runtime, not an op of the graph (not in a placement report)."""
        name = self.name
        return self.op_type in _RUNTIME_TYPES or ("/_" in name and bool(_RUNTIME_NAME.search(name)))

    @property
    def direction(self) -> str:
        """A copy's direction from its stream (`H2D`, `D2H`, `D2D`, `P2P`), `RPC` for a tensor
        received from another task, else `""`."""
        if self.op_type == _RPC_RECEIVE:
            return "RPC"
        start = self.lane.find("<Memcpy")
        return self.lane[start + len("<Memcpy") : -1] if start >= 0 else ""


@dataclass(frozen=True)
class Transfer:
    """One tensor sent between devices (a `_Send`/`_Recv` pair); `bytes` is None when unknown
    (a trace written without devplace's section); `consumers` are the ops on the destination
    that read it (empty when unknown, or when it only goes on to the client as a fetch)."""

    tensor: str
    source: str
    destination: str
    bytes: int | None
    control: bool = False
    consumers: tuple[str, ...] = ()


@dataclass(frozen=True)
class Fetch:
    """One tensor fetched to the client (not a transfer), from the device it comes from."""

    tensor: str
    device: str
    bytes: int


def lane_kind(lane: str) -> tuple[str, bool]:
    """What a lane suffix holds: (`"op"`, `"kernel"` or `"copy"`, whether it aggregates others).

    `""` is the device's own lane; `stream:all` repeats the kernel streams and `memcpy` the
    copy streams (`stream:N<MemcpyH2D>` ...).
    """
    if not lane:
        return "op", False
    if lane == "stream:all":
        return "kernel", True
    if lane == "memcpy":
        return "copy", True
    return ("copy" if "<Memcpy" in lane else "kernel"), False


def _union_us(entries: list[TraceOp]) -> float:
    """Time covered by at least one of `entries` (by start time; overlaps counted once)."""
    total, reach = 0.0, -math.inf
    for entry in entries:
        start = entry.start_us
        end = start + entry.duration_us  # end_us, without a property call per entry
        if end > reach:
            total += end - max(start, reach)
            reach = end
    return total


@dataclass
class Trace:
    """A traced run's facts: its devices, ops (and GPU kernels and copies) and transfers, with
    when each transfer left and arrived (`spans`, µs, one per transfer), and the tensors
    fetched to the client (`fetched`, no transfers; empty for traces without devplace's
    section)."""

    source: str
    devices: list[str]
    ops: list[TraceOp]
    transfers: list[Transfer]
    spans: list[tuple[float, float]]
    exact_transfers: bool = False
    kernels: list[TraceOp] = field(default_factory=list)
    copies: list[TraceOp] = field(default_factory=list)
    fetched: list[Fetch] = field(default_factory=list)

    @cached_property
    def makespan_us(self) -> float:
        """From the first entry's start to the last one's end (kernels and copies too), µs."""
        return max((e.end_us for e in [*self.ops, *self.kernels, *self.copies]), default=0.0)

    @cached_property
    def _by_device(self) -> dict[str, dict[str, list[TraceOp]]]:
        grouped: dict[str, dict[str, list[TraceOp]]] = {}
        for kind, entries in (("op", self.ops), ("kernel", self.kernels), ("copy", self.copies)):
            by_device: dict[str, list[TraceOp]] = {}
            for entry in sorted(entries, key=_START):
                by_device.setdefault(entry.device, []).append(entry)
            grouped[kind] = by_device
        return grouped

    def on_device(self, kind: str = "op") -> dict[str, list[TraceOp]]:
        """Per device that has any, its entries of `kind` (`"op"`, `"kernel"` or `"copy"`),
        by start time (in the trace's order where they start together)."""
        return self._by_device[kind]

    def ops_on(self, device: str) -> list[TraceOp]:
        """The ops that ran on `device`, by start time."""
        return list(self.on_device("op").get(device, []))

    @cached_property
    def graph_ops(self) -> list[TraceOp]:
        """The ops of the graph that ran (what a placement report lists): `ops` without the
        runtime's own (send/receive, return values, control-edge constants)."""
        return [op for op in self.ops if not op.by_runtime]

    def op_counts(self) -> dict[str, int]:
        """Per device, how many of the graph's ops ran there (each op once, whatever lanes
        show it)."""
        counts = Counter(op.device for op in self.graph_ops)
        return {d: counts[d] for d in self.devices}

    def busy_us(self, kind: str = "op") -> dict[str, float]:
        """Per device, the time at least one entry of `kind` was running (overlaps counted
        once), in µs. `"op"` gives every device; `"kernel"`/`"copy"` the devices that have any."""
        return dict(self._busy[kind])

    @cached_property
    def _busy(self) -> dict[str, dict[str, float]]:
        busy = {}
        for kind, by_device in self._by_device.items():
            devices = self.devices if kind == "op" else sorted(by_device, key=self.devices.index)
            busy[kind] = {d: _union_us(by_device.get(d, [])) for d in devices}
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

    def __repr__(self) -> str:
        from devplace.core.printed import trace_line

        return trace_line("Trace", self, f"{self.source!r}, ")

    def __str__(self) -> str:
        from devplace.core.printed import trace_table

        return f"trace {self.source!r}: " + trace_table(self, "ops")

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        from devplace.views.notebook import picture_bundle

        return picture_bundle(self, include, exclude)


def _problem(where: str, expected: str, found: Any) -> str:
    text = repr(found)
    if len(text) > 60:
        text = f"{text[:50]}... ({type(found).__name__})"
    return f"{where} is {text}, expected {expected}"


def _read_bytes(path: str) -> bytes:
    """The file's bytes, refusing anything above `MAX_TRACE_BYTES` without reading it whole."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise TraceError(path, "no such file") from None
    except OSError as err:
        raise TraceError(path, f"cannot be read: {err.strerror or err}") from None
    if stat.S_ISDIR(info.st_mode):
        raise TraceError(path, "is a directory, not a trace file")
    limit = f"the limit of {MAX_TRACE_BYTES // 2**20} MiB (devplace.facts.trace.MAX_TRACE_BYTES)"
    if stat.S_ISREG(info.st_mode) and info.st_size > MAX_TRACE_BYTES:
        raise TraceError(path, f"is {info.st_size / 2**20:.0f} MiB, above {limit}")
    chunks, size = [], 0
    try:
        with open(path, "rb") as f:
            while chunk := f.read(_CHUNK):
                if not chunks and chunk.lstrip()[:1] not in (b"{", b"[", b""):
                    raise TraceError(path, f"is not JSON: it starts with {chunk[:8]!r}")
                chunks.append(chunk)
                size += len(chunk)
                if size > MAX_TRACE_BYTES:
                    raise TraceError(path, f"goes on past {limit} (endless input?)")
    except OSError as err:
        raise TraceError(path, f"cannot be read: {err.strerror or err}") from None
    return b"".join(chunks)


def _load(source: Any) -> tuple[str, Any]:
    if isinstance(source, dict):
        return "(in memory)", source
    if not isinstance(source, (str, os.PathLike)):
        raise TraceError(
            repr(source), f"expected a path or a trace dict, got {type(source).__name__}"
        )
    path = os.fspath(source)
    data = _read_bytes(path)
    try:
        data.decode("utf-8")  # checked, not kept: the parse is the memory peak of a large trace
    except UnicodeDecodeError as err:
        raise TraceError(path, f"is not UTF-8 text (byte {err.start})") from None
    try:
        return path, parse_json(data, utf8=True)
    except json.JSONDecodeError as err:
        raise TraceError(
            path, f"is not JSON: {err.msg} at line {err.lineno} column {err.colno}"
        ) from None
    except RecursionError:
        raise TraceError(
            path,
            "is nested deeper than the JSON reader allows (about 1,000 levels; a trace is 4 deep)",
        ) from None


class _Events:
    """Typed access to a trace's events; every check names the place inside the file."""

    def __init__(self, name: str, events: list[Any]):
        self.name = name
        for i, event in enumerate(events):
            if not isinstance(event, dict):
                self.fail(f"traceEvents[{i}]", "an object", event)
        self.events: list[dict[str, Any]] = events

    def fail(self, where: str, expected: str, found: Any) -> None:
        raise TraceError(self.name, _problem(where, expected, found))

    def scalar(self, i: int, key: str) -> Any:
        value = self.events[i].get(key, 0)
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            self.fail(f"traceEvents[{i}].{key}", "an integer or a string", value)
        return value

    def args(self, i: int) -> dict[str, Any]:
        value = self.events[i].get("args", {})
        if not isinstance(value, dict):
            self.fail(f"traceEvents[{i}].args", "an object", value)
        return value

    def text(self, i: int, key: str, default: str, args: dict[str, Any] | None = None) -> str:
        value = (self.args(i) if args is None else args).get(key, default)
        if not isinstance(value, str):
            self.fail(f"traceEvents[{i}].args.{key}", "a string", value)
        return value

    def number(self, i: int, key: str, low: float, high: float, unit: str) -> float:
        value = self.events[i].get(key)
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not low <= value <= high  # also refuses NaN
        ):
            self.fail(
                f"traceEvents[{i}].{key}", f"a number of {unit} from {low:g} to {high:g}", value
            )
        return float(value)

    def inputs(self, i: int, args: dict[str, Any]) -> tuple[str, ...]:
        """The event's `input0`, `input1`, ... arguments, in their order."""
        found = sorted((int(m[1]), key) for key in args if (m := _INPUT.fullmatch(key)))
        return tuple(self.text(i, key, "", args) for _, key in found)

    def byte_count(self, i: int, args: dict[str, Any]) -> int:
        value = args.get("bytes", 0)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            self.fail(f"traceEvents[{i}].args.bytes", "a byte count (an integer >= 0)", value)
        return int(value)

    def time(self, i: int) -> float:
        return self.number(i, "ts", -MAX_TIMESTAMP_US, MAX_TIMESTAMP_US, "µs")

    def lanes(self) -> dict[Any, tuple[str, str]]:
        """pid -> (device, lane) for every `"<lane> Compute"` process."""
        lanes = {}
        for i, event in enumerate(self.events):
            if event.get("ph") != META or event.get("name") != PROCESS_NAME:
                continue
            label = self.text(i, "name", "")
            lane = compute_lane(label)
            if lane is not None:
                try:
                    lanes[self.scalar(i, "pid")] = split_lane(lane)
                except DeviceSpecError:
                    self.fail(f"traceEvents[{i}].args.name", "'<device> Compute'", label)
        return lanes


_PLAIN_ARGS = frozenset({"name", "op", "bytes"})  # an entry's args without inputs


def _quick_entry(event: dict[str, Any], lanes: dict[Any, tuple[str, str, str, bool]]) -> Any:
    """`_entry` of an op event in one pass where every value has the plain JSON type and
    range `_entry` checks; None where it may not (`_entry` then checks and names the value)."""
    pid, tid = event.get("pid", 0), event.get("tid", 0)
    if type(pid) not in (int, str) or type(tid) not in (int, str):
        return None
    lane = lanes.get(pid)
    if lane is None:
        return _SKIP
    args = event.get("args", {})
    if type(args) is not dict or not _PLAIN_ARGS.issuperset(args):
        return None
    name, op_type = args.get("name"), args.get("op")
    if name is None or op_type is None:
        return None
    start, duration, size = event.get("ts"), event.get("dur"), args.get("bytes", 0)
    if (
        type(name) is not str
        or type(op_type) is not str
        or type(start) not in (int, float)
        or type(duration) not in (int, float)
        or type(size) is not int
        or not (-MAX_TIMESTAMP_US <= start <= MAX_TIMESTAMP_US)
        or not (0 <= duration <= MAX_DURATION_US)
        or size < 0
    ):
        return None
    if name == "_SOURCE":
        return _SKIP
    device, kind, aggregate, lane_name = lane
    thread = tid if type(tid) is int else 0
    return (
        name,
        op_type,
        device,
        thread,
        float(start),
        float(duration),
        kind,
        aggregate,
        lane_name,
        size,
        (),
    )


def _entry(events: _Events, i: int, lanes: dict[Any, tuple[str, str, str, bool]]) -> Any:
    """Event `i` as an entry's fields (`_SKIP` when it is in no lane, or TF's graph source),
    every value checked."""
    event = events.events[i]
    if events.scalar(i, "pid") not in lanes:
        return _SKIP
    args, fallback = events.args(i), str(event.get("name", "?"))
    name = events.text(i, "name", fallback, args)
    start, duration = events.time(i), events.number(i, "dur", 0, MAX_DURATION_US, "µs")
    if name == "_SOURCE":  # TF's graph source: checked like every event, but not an op
        return _SKIP
    device, kind, aggregate, lane = lanes[event["pid"]]
    thread = events.scalar(i, "tid")
    return (
        name,
        events.text(i, "op", fallback, args),
        device,
        thread if isinstance(thread, int) else 0,
        start,
        duration,
        kind,
        aggregate,
        lane,
        events.byte_count(i, args),
        events.inputs(i, args),
    )


def _raw_entries(
    events: _Events, lanes: dict[Any, tuple[str, str]], release: bool
) -> tuple[list[Any], float]:
    """The fields of every op, kernel and copy in the lanes (`_entry`), and the first one's
    timestamp. `release`: drop each op event from `events` once read (a trace read from a file:
    its JSON is freed as its entries are made, for a lower peak of memory)."""
    kinds = {pid: (device, *lane_kind(lane), lane) for pid, (device, lane) in lanes.items()}
    raw = []
    for i, event in enumerate(events.events):
        if event.get("ph") != OP:
            continue
        found = _quick_entry(event, kinds)
        if found is None:
            found = _entry(events, i, kinds)
        if found is not _SKIP:
            raw.append(found)
        if release:
            events.events[i] = _READ
    return raw, min((r[4] for r in raw), default=0.0)


def _entries(raw: list[Any], origin: float) -> list[TraceOp]:
    """`_raw_entries` as entries, in µs since `origin`; aggregate lanes are dropped where the
    per-stream lanes exist."""
    detailed = {(r[2], r[6]) for r in raw if not r[7]}
    types: dict[str, str] = {}  # one string per op type, not one per entry
    return [
        TraceOp(
            name,
            types.setdefault(op_type, op_type),
            device,
            thread,
            ts - origin,
            dur,
            "copy" if op_type == _RPC_RECEIVE else kind,
            lane,
            size,
            inputs,
        )
        for name, op_type, device, thread, ts, dur, kind, aggregate, lane, size, inputs in raw
        if not (aggregate and (device, kind) in detailed)
    ]


def _quick_flow(event: dict[str, Any]) -> tuple[Any, Any, Any, Any] | None:
    """(pid, cat, id, ts) of a flow event whose values all have the plain JSON type and range
    `_Events` checks; None where one may not."""
    pid, cat, flow, ts = (
        event.get("pid", 0),
        event.get("cat", 0),
        event.get("id", 0),
        event.get("ts"),
    )
    plain = (int, str)
    if (
        type(pid) in plain
        and type(cat) in plain
        and type(flow) in plain
        and type(ts) in (int, float)
        and -MAX_TIMESTAMP_US <= ts <= MAX_TIMESTAMP_US
    ):
        return pid, cat, flow, ts
    return None


def _flow_transfers(
    events: _Events, lanes: dict[Any, tuple[str, str]], origin: float
) -> tuple[list[Transfer], list[tuple[float, float]]]:
    """Transfers of a trace without devplace's section: one per distinct (tensor, source,
    destination) of its cross-device flow events, spanning the earliest of them."""
    starts, ends = {}, {}
    for i, event in enumerate(events.events):
        phase = event.get("ph")
        if phase != FLOW_START and phase != FLOW_END:
            continue
        found = _quick_flow(event)
        if found is None:  # the checked way, which names what is wrong
            if events.scalar(i, "pid") not in lanes:
                continue
            found = (event.get("pid", 0), events.scalar(i, "cat"), events.scalar(i, "id"))
            found += (events.time(i),)
        pid, cat, flow, ts = found
        if pid in lanes:
            side = starts if phase == FLOW_START else ends
            side[cat, flow] = (str(event.get("name")), lanes[pid][0], float(ts))
    flows = sorted(
        (ts - origin, ends[key][2] - origin, tensor, device, ends[key][1])
        for key, (tensor, device, ts) in starts.items()
        if key in ends and ends[key][1] != device
    )
    first: dict[tuple[str, str, str], tuple[float, float]] = {}
    for sent, received, *triple in flows:
        first.setdefault(tuple(triple), (sent, received))  # type: ignore[arg-type]
    return [Transfer(t, s, d, None) for t, s, d in first], list(first.values())


def _spans(entries: list[TraceOp], transfers: list[Transfer]) -> list[tuple[float, float]]:
    """When each transfer left (its producer's end on the source) and arrived (the start of
    its first reader on the destination); a side the trace does not show takes the other's
    time, so every transfer has a span."""
    ends: dict[tuple[str, str], float] = {}
    starts: dict[tuple[str, str], float] = {}
    for e in entries:
        ends[e.device, e.name] = max(ends.get((e.device, e.name), 0.0), e.end_us)
        starts[e.device, e.name] = min(starts.get((e.device, e.name), math.inf), e.start_us)
    spans = []
    for t in transfers:
        sent = ends.get((t.source, t.tensor.rsplit(":", 1)[0]))
        read = [starts[key] for c in t.consumers if (key := (t.destination, c)) in starts]
        received = min(read) if read else None
        if sent is None:
            sent = 0.0 if received is None else received
        spans.append((sent, sent if received is None else received))
    return spans


def _transfers_section(name: str, data: Any) -> list[Transfer] | None:
    section = data.get("devplace") if isinstance(data, dict) else None
    if section is None:
        return None
    items = section.get("transfers") if isinstance(section, dict) else None
    if not isinstance(items, list):
        raise TraceError(name, "its 'devplace' section has no 'transfers' list")
    transfers = []
    for i, item in enumerate(items):
        try:
            size = item["bytes"]
            if isinstance(size, bool) or not isinstance(size, int) or size < 0:
                raise ValueError(f"bytes={size!r} is not a byte count")
            consumers = item.get("consumers", [])
            if not isinstance(consumers, (list, tuple)):
                raise TypeError(f"consumers={consumers!r} is not a list")
            transfers.append(
                Transfer(
                    str(item["tensor"]),
                    str(item["source"]),
                    str(item["destination"]),
                    size,
                    bool(item.get("control", False)),
                    tuple(map(str, consumers)),
                )
            )
        except (KeyError, TypeError, ValueError) as err:
            raise TraceError(
                name, f"devplace.transfers[{i}] is malformed ({type(err).__name__}: {err})"
            ) from None
    return transfers


def _fetched_section(name: str, data: Any) -> list[Fetch]:
    section = data.get("devplace") if isinstance(data, dict) else None
    items = section.get("fetched", []) if isinstance(section, dict) else []
    try:
        return [Fetch(str(f["tensor"]), str(f["device"]), int(f["bytes"])) for f in items]
    except (KeyError, TypeError, ValueError) as err:
        raise TraceError(
            name, f"devplace.fetched is malformed ({type(err).__name__}: {err})"
        ) from None


def _device_order(device: str) -> tuple[Any, ...]:
    spec = parse_device(device)
    return (
        spec.job or "",
        spec.replica or 0,
        spec.task or 0,
        spec.device_type or "",
        spec.device_index or 0,
    )


def read_trace(
    trace_or_path: Any,
    transfers: list[Transfer] | None = None,
    fetched: list[Fetch] | None = None,
) -> Trace:
    """Parse a Chrome trace (a path, or the dict `Profile.trace`) into a `Trace`.

    `transfers`, `fetched`: the run's exact transfers and fetches when the caller has them (a
    traced run in memory); otherwise they come from the trace's `devplace` section, or else
    (transfers only) its flow events.

    Raises `TraceError` naming the file and what is wrong when it is missing, too large, not
    JSON, not a TensorFlow timeline (no `"<device> Compute"` processes), or holds values of the
    wrong type or out of range.
    """
    if isinstance(trace_or_path, Trace):
        return trace_or_path
    with cycle_collector_paused():
        return _read(trace_or_path, transfers, fetched)


def _read(
    trace_or_path: Any, transfers: list[Transfer] | None, fetched: list[Fetch] | None
) -> Trace:
    name, data = _load(trace_or_path)
    raw = data.get("traceEvents") if isinstance(data, dict) else data
    if not isinstance(raw, list):
        raise TraceError(name, "has no 'traceEvents' list; not a Chrome trace")
    events = _Events(name, raw)
    lanes = events.lanes()
    if not lanes:
        raise TraceError(name, "has no '<device> Compute' processes; not a TensorFlow timeline")
    rows, origin = _raw_entries(events, lanes, release=not isinstance(trace_or_path, dict))
    exact = _transfers_section(name, data) if transfers is None else transfers
    if exact is None:
        found, spans = _flow_transfers(events, lanes, origin)
    fetched = _fetched_section(name, data) if fetched is None else fetched
    del data, raw, events  # a file's JSON is freed before its entries are made
    entries = _entries(rows, origin)
    del rows
    if exact is not None:
        found, spans = exact, _spans(entries, exact)
    # a lane without entries (TF's timeline keeps empty ones) is no device of this run
    ran = {e.device for e in entries} | {d for t in found for d in (t.source, t.destination)}
    devices = sorted(ran, key=_device_order)
    return Trace(
        name,
        devices,
        [e for e in entries if e.kind == "op"],
        found,
        spans,
        exact_transfers=exact is not None,
        kernels=[e for e in entries if e.kind == "kernel"],
        copies=[e for e in entries if e.kind == "copy"],
        fetched=fetched,
    )
