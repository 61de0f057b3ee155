"""Device strings: parse, validate, merge and print them the way TensorFlow does.

A `Device` is a small immutable value (job, replica, task, type, index), every field optional,
like TF's `DeviceSpec`. Unlike `DeviceSpec.from_string`, parsing is strict: anything TF would
misread silently (`/job:a/job:b`, `/gpu:-1`) or reject with a bare `ValueError` raises
`DeviceSpecError`, which quotes the input and says what a valid string looks like.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, replace
from typing import Any

from devplace.errors import Error

__all__ = ["Device", "DeviceSpecError", "canonical_device", "parse_device"]

_HINT = (
    "expected e.g. '/cpu:0', '/GPU:1', '/device:GPU:0', '/job:ps/task:0/cpu:0' "
    "or '/job:worker/replica:0/task:1/device:GPU:0'"
)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_INDEX = re.compile(r"[0-9]+\Z")
_TYPE = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")


class DeviceSpecError(Error, ValueError):
    """A device string or spec that cannot be understood; the message quotes it."""

    def __init__(self, spec: object, problem: str):
        self.spec = spec
        self.problem = problem
        super().__init__(f"malformed device {spec!r}: {problem}; {_HINT}")


@dataclass(frozen=True)
class Device:
    """A full or partial device specification; `str(d)` is TF's canonical form."""

    job: str | None = None
    replica: int | None = None
    task: int | None = None
    device_type: str | None = None
    device_index: int | None = None

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
        """This spec with every field that `other` sets overriding it (TF's nesting rule)."""
        changes = {k: v for k, v in other.__dict__.items() if v is not None}
        if other.device_type is not None and other.device_index is None:
            changes["device_index"] = None
        return replace(self, **changes)

    @property
    def local(self) -> Device:
        """The device part only, without job, replica and task."""
        return Device(device_type=self.device_type, device_index=self.device_index)

    @property
    def is_gpu(self) -> bool:
        """True for a GPU device."""
        return self.device_type == "GPU"


def _parse_index(spec: object, field: str, text: str) -> int:
    if not _INDEX.match(text):
        raise DeviceSpecError(spec, f"{field} must be a non-negative integer, got {text!r}")
    return int(text)


@functools.lru_cache(maxsize=4096)
def _parse_string(spec: str) -> Device:
    fields: dict[str, Any] = {}

    def put(key: str, value: Any) -> None:
        if key in fields:
            raise DeviceSpecError(spec, f"'{key}' is given twice")
        fields[key] = value

    text = spec.strip()
    if text.startswith("/"):
        text = text[1:]
    if not text:
        return Device()
    for part in text.split("/"):
        pieces = part.split(":")
        key = pieces[0].lower()
        if key == "job" and len(pieces) == 2:
            if not _NAME.match(pieces[1]):
                raise DeviceSpecError(spec, f"job name {pieces[1]!r} is not an identifier")
            put("job", pieces[1])
        elif key in ("replica", "task") and len(pieces) == 2:
            put(key, _parse_index(spec, key, pieces[1]))
        elif key == "device" and len(pieces) == 3:
            put("device_type", _parse_type(spec, pieces[1]))
            put(
                "device_index", None if pieces[2] == "*" else _parse_index(spec, "index", pieces[2])
            )
        elif len(pieces) == 2 and key not in ("job", "replica", "task", "device"):
            put("device_type", _parse_type(spec, pieces[0]))
            put(
                "device_index", None if pieces[1] == "*" else _parse_index(spec, "index", pieces[1])
            )
        else:
            raise DeviceSpecError(spec, f"cannot read the part {part!r}")
    return Device(**fields)


def _parse_type(spec: object, text: str) -> str:
    if not _TYPE.match(text):
        raise DeviceSpecError(spec, f"device type {text!r} is not a name like CPU or GPU")
    return text.upper()


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
    raise DeviceSpecError(spec, f"a {type(spec).__name__} is not a device string or DeviceSpec")


def canonical_device(spec: object) -> str:
    """The canonical form of a device: `canonical_device("/gpu:1") == "/device:GPU:1"`."""
    return parse_device(spec).to_string()
