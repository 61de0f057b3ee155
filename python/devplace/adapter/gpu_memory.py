"""GPU memory options are process-wide: the first session fixes them, later ones are told so.

TensorFlow creates each GPU's allocator once per process, with the `gpu_options` of the first
session (and `TF_FORCE_GPU_ALLOW_GROWTH`, which overrides `allow_growth` in every session):
memory growth, the memory fraction and the logical GPUs' sizes (`virtual_gpus`). A later
session asking for other settings silently gets the first ones; devplace warns once per
differing request, naming what was asked and what the process has.
"""

from __future__ import annotations

import os
import threading
import warnings
from typing import Any

from devplace.core.errors import DevplaceWarning

__all__ = ["GpuMemoryOptionsWarning", "note_session"]

_ENV = "TF_FORCE_GPU_ALLOW_GROWTH"


class GpuMemoryOptionsWarning(DevplaceWarning):
    """A session's GPU memory options cannot take effect: the process fixed others earlier."""


_lock = threading.Lock()
_process: dict[str, Any] | None = None
_warned: set[tuple[tuple[str, Any], ...]] = set()


def _env_growth() -> bool | None:
    value = os.environ.get(_ENV, "").lower()
    return {"true": True, "false": False}.get(value)


def _virtual_gpus(gpu_options: Any) -> tuple[tuple[int, ...], ...] | None:
    """The logical GPUs' MiB, per GPU, in `gpu_options`; None for one logical GPU per GPU."""
    devices = gpu_options.experimental.virtual_devices
    return tuple(tuple(int(mib) for mib in d.memory_limit_mb) for d in devices) or None


def _effective(gpu_options: Any) -> dict[str, Any]:
    growth = _env_growth()
    return {
        "allow_growth": gpu_options.allow_growth if growth is None else growth,
        "gpu_memory_fraction": gpu_options.per_process_gpu_memory_fraction or None,
        "virtual_gpus": _virtual_gpus(gpu_options),
    }


def _requested(gpu_options: Any, explicit: dict[str, Any]) -> dict[str, Any]:
    """The memory settings a session asks for: given as keywords, or set in its config."""
    asked = {}
    if explicit.get("allow_growth") is not None or gpu_options.allow_growth:
        asked["allow_growth"] = gpu_options.allow_growth
    # Zero when asked for too: `virtual_gpus` divided it among the logical GPUs.
    if gpu_options.per_process_gpu_memory_fraction:
        asked["gpu_memory_fraction"] = gpu_options.per_process_gpu_memory_fraction
    if explicit.get("virtual_gpus") is not None or gpu_options.experimental.virtual_devices:
        asked["virtual_gpus"] = _virtual_gpus(gpu_options)
    return asked


def _value(name: str, value: Any) -> str:
    if value is None:
        return "none (one per GPU)" if name == "virtual_gpus" else "TensorFlow default"
    if name == "virtual_gpus":
        return " and ".join(
            f"{list(sizes)} MiB on physical GPU {i}" for i, sizes in enumerate(value)
        )
    return str(round(value, 6) if isinstance(value, float) else value)


def _described(settings: dict[str, Any]) -> str:
    return ", ".join(f"{name}={_value(name, value)}" for name, value in settings.items())


def note_session(config: Any, explicit: dict[str, Any]) -> None:
    """Record an in-process session's GPU memory options; warn if they cannot take effect.

    The first session noted fixes the process's settings. `explicit` holds the keyword options
    the caller gave (`allow_growth`, `gpu_memory_fraction`, `virtual_gpus`), so defaults never
    warn.
    """
    global _process
    gpu_options = config.gpu_options
    asked = _requested(gpu_options, explicit)
    with _lock:
        if _process is None:
            _process = _effective(gpu_options)
        differing = {k: v for k, v in asked.items() if v != _process[k]}
        key = tuple(sorted(differing.items()))
        if not differing or key in _warned:
            return
        _warned.add(key)
        have = {k: _process[k] for k in differing}
    why = (
        f"{_ENV}={os.environ[_ENV]} overrides allow_growth"
        if "allow_growth" in differing and _env_growth() is not None
        else "TensorFlow fixes GPU memory options and logical GPUs for the whole process at its "
        "first session"
    )
    warnings.warn(
        GpuMemoryOptionsWarning(
            f"this Session asks for {_described(differing)}, but the process already has "
            f"{_described(have)} ({why}); the request has no effect. Hint: set GPU memory "
            "options in the first Session of the process, or start a new process for them."
        ),
        stacklevel=3,
    )
