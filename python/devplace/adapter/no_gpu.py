"""Why a session sees no GPU, in words ending with TensorFlow's own (no TensorFlow import).

Said by `devplace devices` and by `virtual_gpus=` without a GPU (`NoGpuError`).
"""

from __future__ import annotations

__all__ = ["why_no_gpu"]


def why_no_gpu(
    gpus: int | None,
    built_with_cuda: bool,
    driver: bool,
    visible: str | None,
    messages: list[str],
) -> str:
    """One paragraph on why a session sees no GPU, ending with TensorFlow's own words."""
    if gpus == 0:
        return "no GPU: --gpus 0 asked for none"
    if not built_with_cuda:
        reason = (
            "no GPU: this TensorFlow is a CPU-only build (tensorflow-cpu, or a platform without "
            "CUDA wheels); on Linux with an NVIDIA GPU: pip uninstall tensorflow-cpu, then "
            "pip install 'devplace[gpu]'"
        )
    elif visible is not None and visible.strip() in ("", "-1"):
        reason = f"no GPU: CUDA_VISIBLE_DEVICES={visible!r} hides every GPU from TensorFlow"
    elif not driver:
        reason = (
            "no GPU: no NVIDIA driver on this machine: TensorFlow runs on the CPU (with a "
            "driver, pip install 'devplace[gpu]' adds TensorFlow's CUDA libraries)"
        )
    elif any("dynamic library" in m or "dlopen" in m for m in messages):
        reason = (
            "no GPU: an NVIDIA driver is present but CUDA libraries failed to load; "
            "pip install 'devplace[gpu]' installs them (tensorflow[and-cuda])"
        )
    else:
        reason = "no GPU: an NVIDIA driver is present but TensorFlow found no usable GPU"
    said = "".join(f"\n  TensorFlow: {m}" for m in messages)
    return f"{reason}{said}\n  pins to /GPU:i need dp.Session(soft=True) here"
