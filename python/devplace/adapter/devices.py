"""Device strings: parse, validate, merge, match and print them the way TensorFlow does.

A `Device` is a small immutable value (job, replica, task, type, index), every field optional,
like TF's `DeviceSpec`. Unlike `DeviceSpec.from_string`, parsing is strict: anything TF would
misread silently (`/job:a/job:b`, `/gpu:-1`, `/cpu:99999999999`) or reject with a bare
`ValueError` raises `DeviceSpecError`, which quotes the input and says what a valid string looks
like. This module is the one owner of device meaning: the runtime's long names
(`/job:localhost/replica:0/task:0/device:CPU:0`) and the short ones users write convert here, and
`matches` is the one test of a partial request against a concrete device.
"""

from __future__ import annotations

import functools
import re
import textwrap
from dataclasses import dataclass, fields, replace
from typing import Any

from devplace.core.errors import Error, quoted
from devplace.core.formatting import article

__all__ = [
    "LOCAL_PREFIX",
    "LOGICAL_CPU_CAVEAT",
    "MAX_INDEX",
    "MAX_SPEC_LENGTH",
    "Device",
    "DeviceSpecError",
    "canonical_device",
    "caveat_lines",
    "logical_cpus",
    "matches",
    "parse_device",
    "runtime_device",
    "short_device",
    "split_lane",
]

#: Largest task, replica or device index: TensorFlow keeps them as 32-bit signed integers.
MAX_INDEX = 2**31 - 1
#: Longest device string accepted (job names included); longer input is refused unread.
MAX_SPEC_LENGTH = 512
#: What the runtime puts before a device of the local (in-process) session.
LOCAL_PREFIX = "/job:localhost/replica:0/task:0"

_HINT = (
    "expected e.g. '/cpu:0', '/GPU:1', '/device:GPU:0', '/job:ps/task:0/cpu:0' "
    "or '/job:worker/replica:0/task:1/device:GPU:0'"
)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_INDEX = re.compile(r"[0-9]+\Z")
_TYPE = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")
# A runtime device name and what follows it in trace lanes (`/stream:13`, `/memcpy`, ...).
_RUNTIME_NAME = re.compile(
    r"(?P<device>(?:/job:[^/]+)?(?:/replica:\d+)?(?:/task:\d+)?/device:[A-Za-z_]+:\d+)"
    r"(?:/(?P<lane>.+))?\Z"
)


class DeviceSpecError(Error, ValueError):
    """A device string or spec that cannot be understood; the message quotes it."""

    def __init__(self, spec: object, problem: str):
        self.spec = spec
        self.problem = problem
        super().__init__(f"malformed device {quoted(spec)}: {problem}; {_HINT}")


@dataclass(frozen=True)
class Device:
    """A full or partial device specification; `str(d)` is TF's canonical form.

    `Device("/job:ps/task:0/cpu:0")` parses a device string (as `parse_device` does);
    `Device(job="ps", task=0)` sets fields.
    """

    job: str | None = None
    replica: int | None = None
    task: int | None = None
    device_type: str | None = None
    device_index: int | None = None

    def __post_init__(self) -> None:
        others = (self.replica, self.task, self.device_type, self.device_index)
        if isinstance(self.job, str) and self.job.startswith("/") and others == (None,) * 4:
            # One device string and no other field: the spec it names (strictly parsed).
            parsed = _parse_string(self.job)
            for field in fields(self):
                object.__setattr__(self, field.name, getattr(parsed, field.name))
            return
        for name in ("replica", "task", "device_index"):
            value = getattr(self, name)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_INDEX
            ):
                raise DeviceSpecError(self, f"{name} must be an integer from 0 to {MAX_INDEX}")
        if self.job is not None and not (isinstance(self.job, str) and _NAME.match(self.job)):
            alone = " (a device string is read when it is Device's only argument)"
            raise DeviceSpecError(
                self,
                f"job name {self.job!r} is not an identifier" + (alone if "/" in self.job else ""),
            )
        if self.device_type is None and self.device_index is not None:
            raise DeviceSpecError(self, "a device index needs a device type")
        if self.device_type is not None and not (
            isinstance(self.device_type, str)
            and _TYPE.match(self.device_type)
            and self.device_type.isupper()
        ):
            raise DeviceSpecError(self, f"device type {self.device_type!r} is not like CPU or GPU")

    def to_string(self) -> str:
        """The canonical string, e.g. `/job:ps/task:0/device:CPU:0`."""
        parts = []
        if self.job is not None:
            parts.append(f"/job:{self.job}")
        if self.replica is not None:
            parts.append(f"/replica:{self.replica}")
        if self.task is not None:
            parts.append(f"/task:{self.task}")
        if self.device_type is not None:
            index = "*" if self.device_index is None else str(self.device_index)
            parts.append(f"/device:{self.device_type}:{index}")
        return "".join(parts)

    __str__ = to_string

    def merge(self, other: Device) -> Device:
        """This spec with every field `other` sets overriding it.

        TF's nesting rule (`DeviceSpec.make_merged_spec`, nested `tf.device` scopes): field by
        field, so `/job:worker/device:GPU:0` merged with `/device:CPU:*` is
        `/job:worker/device:CPU:0`; the unset index keeps the outer one.
        """
        return replace(
            self,
            **{
                f.name: getattr(other, f.name)
                for f in fields(other)
                if getattr(other, f.name) is not None
            },
        )


#: The local session's job, replica and task, which runtime names of local devices carry.
_LOCAL = Device("localhost", 0, 0)


def _parse_index(spec: object, field: str, text: str) -> int:
    if not _INDEX.match(text):
        raise DeviceSpecError(spec, f"{field} must be a non-negative integer, got {text!r}")
    if len(text) > len(str(MAX_INDEX)) or int(text) > MAX_INDEX:
        raise DeviceSpecError(spec, f"{field} {quoted(text)} is above the maximum {MAX_INDEX}")
    return int(text)


def _parse_type(spec: object, text: str) -> str:
    if not _TYPE.match(text):
        raise DeviceSpecError(spec, f"device type {text!r} is not a name like CPU or GPU")
    return text.upper()


@functools.lru_cache(maxsize=4096)
def _parse_string(spec: str) -> Device:
    if not spec:
        return Device()
    if len(spec) > MAX_SPEC_LENGTH:
        raise DeviceSpecError(
            spec, f"it is longer than the maximum of {MAX_SPEC_LENGTH} characters"
        )
    if spec != spec.strip() or any(c.isspace() for c in spec):
        raise DeviceSpecError(spec, "device strings contain no spaces")
    text = spec[1:] if spec.startswith("/") else spec
    if not text:
        raise DeviceSpecError(spec, "it names no device (use '' or None for no device)")
    found: dict[str, Any] = {}

    def put(key: str, value: Any) -> None:
        if key in found:
            raise DeviceSpecError(spec, f"'{key}' is given twice")
        found[key] = value

    for part in text.split("/"):
        pieces = part.split(":")
        key = pieces[0].lower()
        if key == "job" and len(pieces) == 2:
            if not _NAME.match(pieces[1]):
                raise DeviceSpecError(spec, f"job name {pieces[1]!r} is not an identifier")
            put("job", pieces[1])
        elif key in ("replica", "task") and len(pieces) == 2:
            put(key, _parse_index(spec, key, pieces[1]))
        elif (key == "device" and len(pieces) == 3) or (
            len(pieces) == 2 and key not in ("job", "replica", "task", "device")
        ):
            device_type, index = pieces[-2:]
            put("device_type", _parse_type(spec, device_type))
            put("device_index", None if index == "*" else _parse_index(spec, "index", index))
        else:
            raise DeviceSpecError(spec, f"cannot read the part {quoted(part)}")
    return Device(**found)


def parse_device(spec: object) -> Device:
    """Parse a device string, a TF `DeviceSpec`, or a `Device` into a `Device`.

    Raises `DeviceSpecError` (a `ValueError`) naming the input for anything malformed, and
    for objects that are not device specifications at all.
    """
    if isinstance(spec, Device):
        return spec
    if isinstance(spec, str):
        return _parse_string(spec)
    to_string = getattr(spec, "to_string", None)
    if callable(to_string) and type(spec).__name__.startswith("DeviceSpec"):
        return _parse_string(to_string())
    raise DeviceSpecError(
        spec, f"{article(type(spec).__name__)} is not a device string or DeviceSpec"
    )


def canonical_device(spec: object) -> str:
    """The canonical form of a device: `canonical_device("/gpu:1") == "/device:GPU:1"`."""
    return parse_device(spec).to_string()


def split_lane(name: str) -> tuple[str, str]:
    """A runtime device or trace-lane name as (short device, lane).

    `/job:localhost/replica:0/task:0/device:GPU:0/stream:14<MemcpyH2D>` gives
    `("/device:GPU:0", "stream:14<MemcpyH2D>")`; a plain device or spec gives an empty lane, `''`
    gives `('', '')`. Devices of other jobs keep their job, replica and task.
    """
    found = _RUNTIME_NAME.match(name)
    if found is None:
        return canonical_device(name), ""
    device = found.group("device")
    if device.startswith(LOCAL_PREFIX + "/"):
        device = device[len(LOCAL_PREFIX) :]
    return canonical_device(device), found.group("lane") or ""


def short_device(name: str) -> str:
    """A runtime device name without the local `/job:localhost/replica:0/task:0` prefix.

    The result is canonical; a trace lane keeps its suffix (`/device:GPU:0/stream:13`).
    """
    device, lane = split_lane(name)
    return f"{device}/{lane}" if lane else device


def runtime_device(spec: object) -> str:
    """The runtime's full name of a device: unset job, replica and task are the local ones.

    `/cpu:1` is `/job:localhost/replica:0/task:0/device:CPU:1`, `/job:ps/gpu:0` is
    `/job:ps/replica:0/task:0/device:GPU:0`.

    Only complete devices (type and index) have one: a partial spec raises `DeviceSpecError`.
    """
    device = parse_device(spec)
    if device.device_type is None or device.device_index is None:
        raise DeviceSpecError(spec, "a runtime name needs a device type and index, e.g. '/cpu:0'")
    return str(_LOCAL.merge(device))


def matches(spec: object, device: object) -> bool:
    """Whether every field a partial `spec` names agrees with the concrete `device`.

    `matches('/gpu:0', '/job:localhost/replica:0/task:0/device:GPU:0')` is true; a device
    without job, replica or task is read as the local one (`localhost`, 0, 0).
    """
    want = parse_device(spec)
    got = _LOCAL.merge(parse_device(device))
    return all(getattr(want, f.name) in (None, getattr(got, f.name)) for f in fields(Device))


LOGICAL_CPU_CAVEAT = (
    "logical CPU devices share one thread pool and copy nothing: these times do not rank "
    "placements; the placement and the transfers do"
)


def logical_cpus(devices: list[str] | tuple[str, ...]) -> bool:
    """Whether some task of the trace has several CPU devices: logical devices of one process,
    whose times cannot rank placements (see `LOGICAL_CPU_CAVEAT`)."""
    tasks = [
        (spec.job, spec.replica, spec.task)
        for spec in map(parse_device, devices)
        if spec.device_type == "CPU"
    ]
    return len(set(tasks)) < len(tasks)


def caveat_lines(devices: list[str] | tuple[str, ...], width: int = 100) -> list[str]:
    """The logical-CPU caveat wrapped to `width` characters, or nothing when it does not apply."""
    return textwrap.wrap(f"Note: {LOGICAL_CPU_CAVEAT}.", width) if logical_cpus(devices) else []
