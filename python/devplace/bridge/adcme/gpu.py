"""What ADCME's `has_gpu`, `gpu_info` and `get_gpu` report (`julia/DevPlace/src/adcme/gpu.jl`)."""

from __future__ import annotations

import os
import shutil
from typing import Any

from devplace.adapter._tf import tf

__all__ = [
    "gpu_facts",
]


def gpu_facts() -> dict[str, Any]:
    """What the host knows about GPUs: TF's CUDA build, the GPUs it sees, nvcc, and why none."""
    from devplace.adapter._tf import GPU_MESSAGES, driver_present
    from devplace.cli.devices import why_no_gpu

    build = tf.sysconfig.get_build_info()
    gpus = [d.name for d in tf.config.list_physical_devices("GPU")]
    nvcc = shutil.which("nvcc")
    facts: dict[str, Any] = {
        "gpus": gpus,
        "built_with_cuda": bool(tf.test.is_built_with_cuda()),
        "cuda_version": build.get("cuda_version"),
        "cudnn_version": build.get("cudnn_version"),
        "nvcc": nvcc,
        "why_none": "",
    }
    if not gpus:
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        facts["why_none"] = why_no_gpu(
            None, facts["built_with_cuda"], driver_present(), visible, list(GPU_MESSAGES)
        )
    return facts
