"""Virtual GPUs: each GPU split into logical GPUs (`dp.Session(virtual_gpus=4)`).

TensorFlow makes a session's GPU devices from its `ConfigProto`: `gpu_options.experimental.
virtual_devices` holds one entry per GPU it sees, listing each logical GPU's memory in MiB
(`BaseGPUDeviceFactory::CreateDevices`, run for every `tf.compat.v1.Session`). Eager TF2's
`tf.config.set_logical_device_configuration` writes the same field into the eager context's
config, which a `tf.compat.v1.Session` reads only when given no config, so devplace sets the
session's proto. TensorFlow needs each logical GPU's size, refuses
`per_process_gpu_memory_fraction` beside them, and keeps each GPU device's allocator for the
whole process: the first session fixes them (`gpu_memory.py` warns later sessions).
"""

from __future__ import annotations

import ctypes
import os
import warnings
from typing import Any

from devplace.adapter._tf import GPU_MESSAGES, driver_present, tf
from devplace.adapter.no_gpu import why_no_gpu
from devplace.core.errors import DevplaceWarning, Error, SessionOptionError

__all__ = [
    "DEFAULT_SHARE",
    "NoGpuError",
    "NoGpuWarning",
    "gpu_memory_mib",
    "memory_split",
    "set_virtual_gpus",
]

#: Share of each GPU's memory `virtual_gpus=N` divides among its N logical GPUs. TensorFlow's
#: own default leaves 1.5 GiB of free memory to the driver; a tenth of the total leaves as much
#: on a 16 GiB GPU and more on larger ones.
DEFAULT_SHARE = 0.9


class NoGpuError(Error, RuntimeError):
    """`virtual_gpus` asked for where TensorFlow sees no GPU (and soft placement is off)."""


class NoGpuWarning(DevplaceWarning):
    """`virtual_gpus` asked for where TensorFlow sees no GPU: soft placement runs on the CPU."""


def _cuda_total_mib(ordinal: int) -> int | None:
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
        device, size = ctypes.c_int(), ctypes.c_size_t()
        failed = (
            cuda.cuInit(0)
            or cuda.cuDeviceGet(ctypes.byref(device), ordinal)
            or cuda.cuDeviceTotalMem_v2(ctypes.byref(size), device)
        )
    except (OSError, AttributeError):
        return None
    return None if failed else size.value >> 20


def gpu_memory_mib() -> list[int | None]:
    """The total memory in MiB of each GPU TensorFlow sees, in its order; None where unknown.

    Read from the CUDA driver, which numbers GPUs as TensorFlow does (after
    `CUDA_VISIBLE_DEVICES`) and answers without creating TensorFlow's devices: creating them
    would fix their memory for the whole process before the session asks for virtual GPUs.
    """
    gpus = tf.config.list_physical_devices("GPU")
    return [_cuda_total_mib(int(gpu.name.rsplit(":", 1)[1])) for gpu in gpus]


def _error(request: Any, expected: str, hint: str) -> SessionOptionError:
    return SessionOptionError("virtual_gpus", request, expected, hint)


def memory_split(
    request: int | tuple[int, ...], totals: list[int | None], share: float = DEFAULT_SHARE
) -> list[list[int]]:
    """Each logical GPU's MiB, per GPU of `totals` (its MiB, None if unknown).

    A count `n` divides `share` of each GPU's memory into `n` equal parts; a tuple of MiB is
    used as given on every GPU, and must fit in each GPU whose memory is known.
    """
    split = []
    for index, total in enumerate(totals):
        if isinstance(request, tuple):
            if total is not None and sum(request) > total:
                raise _error(
                    request,
                    f"at most {total} MiB in all, the memory of /device:GPU:{index}",
                    f"ask for less, e.g. virtual_gpus={len(request)} shares "
                    f"{DEFAULT_SHARE:.0%} of it equally",
                )
            split.append(list(request))
            continue
        if total is None:
            raise _error(
                request,
                "a list of MiB here: the CUDA driver did not report the GPU's memory",
                f"give each logical GPU's size, e.g. virtual_gpus={[1024] * min(request, 4)}",
            )
        mib = int(total * share) // request
        if mib < 1:
            raise _error(
                request,
                f"at most {int(total * share)} logical GPUs (one MiB each) on /device:GPU:{index}",
                "ask for fewer logical GPUs",
            )
        split.append([mib] * request)
    return split


def _shown(request: int | tuple[int, ...]) -> str:
    """The request as the user wrote it: a count, or a list of MiB."""
    return repr(list(request) if isinstance(request, tuple) else request)


def _no_gpu_reason() -> str:
    return why_no_gpu(
        None,
        tf.test.is_built_with_cuda(),
        driver_present(),
        os.environ.get("CUDA_VISIBLE_DEVICES"),
        GPU_MESSAGES,
    )


def set_virtual_gpus(
    proto: Any, request: int | tuple[int, ...], totals: list[int | None] | None = None
) -> None:
    """Write `request`'s logical GPUs into `proto` (a `ConfigProto`), one entry per GPU.

    `totals` are the GPUs' memory in MiB (default: `gpu_memory_mib()`, this machine's).
    `gpu_memory_fraction` (already in `proto`) sets the share a count divides, and is then
    cleared: TensorFlow refuses it beside virtual devices. Without a GPU: `NoGpuError`, or
    with soft placement a `NoGpuWarning` and nothing set.
    """
    hidden = "GPU" in proto.device_count
    if totals is None:
        totals = [] if hidden and proto.device_count["GPU"] == 0 else gpu_memory_mib()
    if hidden and proto.device_count["GPU"] < max(1, len(totals)):
        raise SessionOptionError(
            "gpus",
            proto.device_count["GPU"],
            f"left out with virtual_gpus, which splits every GPU TensorFlow sees ({len(totals)} "
            "here)",
            "leave gpus out; CUDA_VISIBLE_DEVICES=0 before Python starts hides the other GPUs",
        )
    if not totals:
        # why_no_gpu's last line is a hint about soft placement; these say their own.
        reason = _no_gpu_reason().rsplit("\n", 1)[0]
        message = (
            f"Session: virtual_gpus={_shown(request)} splits each GPU into logical GPUs, but "
            f"TensorFlow sees no GPU here.\n  {reason}\n"
        )
        if not proto.allow_soft_placement:
            raise NoGpuError(
                f"{message}Hint: run on a machine with a GPU, or pass soft=True to run ops "
                "pinned to /GPU:i on the CPU instead."
            )
        warnings.warn(
            NoGpuWarning(f"{message}Soft placement is on: ops pinned to /GPU:i run on the CPU."),
            stacklevel=4,
        )
        return
    share = proto.gpu_options.per_process_gpu_memory_fraction
    if share and isinstance(request, tuple):
        raise _error(
            request,
            "a count when gpu_memory_fraction is given (both would set the memory)",
            f"give virtual_gpus={len(request)} with gpu_memory_fraction={share:g}, or leave "
            "gpu_memory_fraction out",
        )
    split = memory_split(request, totals, share or DEFAULT_SHARE)
    proto.gpu_options.per_process_gpu_memory_fraction = 0
    devices = proto.gpu_options.experimental.virtual_devices
    del devices[:]
    for sizes in split:
        devices.add(memory_limit_mb=sizes)
