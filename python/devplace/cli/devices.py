"""`devplace devices`: the devices a session sees, with their memory, or why there is no GPU."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from typing import Any

from devplace.adapter.no_gpu import why_no_gpu
from devplace.core.formatting import format_bytes

__all__ = ["device_rows", "register", "tensorflow_gpu_messages", "why_no_gpu"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `devices` command."""
    parser = subparsers.add_parser(
        "devices",
        help="the devices a session sees, with memory",
        description="List the devices a devplace Session sees (dp.Session(cpus=..., "
        "gpus=..., virtual_gpus=...).list_devices()), with each device's memory limit.",
    )
    parser.add_argument(
        "--cpus", type=_count, metavar="N", help="logical CPU devices, as dp.Session(cpus=N)"
    )
    parser.add_argument(
        "--gpus", type=_count, metavar="N", help="GPUs to use at most, as dp.Session(gpus=N)"
    )
    parser.add_argument(
        "--virtual-gpus",
        type=_virtual_gpus,
        metavar="N|MiB,MiB,...",
        help="split each GPU into N logical GPUs, or into ones of these MiB, as "
        "dp.Session(virtual_gpus=...)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.set_defaults(func=run)


def _count(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}")
    return int(text)


def _virtual_gpus(text: str) -> int | list[int]:
    parts = text.split(",")
    if not all(part.strip().isdigit() for part in parts):
        raise argparse.ArgumentTypeError(
            f"expected a count like 4 or MiB per logical GPU like 2048,2048, got {text!r}"
        )
    sizes = [int(part) for part in parts]
    return sizes[0] if len(sizes) == 1 and "," not in text else sizes


def device_rows(
    cpus: int | None = None,
    gpus: int | None = None,
    virtual_gpus: int | list[int] | None = None,
) -> list[dict[str, Any]]:
    """One dict per device a session with these options sees: name, type, memory_bytes."""
    import devplace as dp
    from devplace.adapter.devices import short_device

    session = dp.Session(cpus=cpus, gpus=gpus, virtual_gpus=virtual_gpus, graph=dp.tf.Graph())
    with session as sess:
        return [
            {
                "name": short_device(d.name),
                "type": d.device_type,
                "memory_bytes": int(d.memory_limit_bytes),
            }
            for d in sess.list_devices()
        ]


def _ram() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def tensorflow_gpu_messages() -> list[str]:
    """What TensorFlow says about GPUs at full verbosity, from a fresh process.

    This process's TensorFlow logs warnings only from TF_CPP_MIN_LOG_LEVEL=2 up (fixed when it
    loaded), which hides the libraries that failed to load; a child at level 0 shows them.
    """
    from devplace.adapter._tf import gpu_lines

    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="0")
    code = "import tensorflow as tf; tf.config.list_physical_devices('GPU')"
    try:
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env
        )
    except subprocess.TimeoutExpired:
        return ["(TensorFlow took over 120 s to look for GPUs)"]
    return gpu_lines(done.stdout + done.stderr)


def run(args: argparse.Namespace) -> int:
    """Print the devices; 1 with TensorFlow's message if the session cannot be made."""
    from devplace.adapter._tf import GPU_MESSAGES, driver_present, tf
    from devplace.adapter.virtual_gpus import NoGpuError

    try:
        rows = device_rows(args.cpus, args.gpus, args.virtual_gpus)
    except NoGpuError as err:
        # The Session's hint (soft=True) is no option of this command.
        reason = str(err).split("\nHint:", 1)[0]
        print(
            f"devplace devices: error: {reason}\nHint: --virtual-gpus needs a GPU to split; "
            "`devplace devices` without it lists this machine's devices",
            file=sys.stderr,
        )
        return 1
    except (tf.errors.OpError, ValueError, RuntimeError) as err:
        print(f"devplace devices: error: cannot make a session: {err}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    width = max(len(r["name"]) for r in rows)
    print(f"{'device'.ljust(width)}  type  memory")
    for r in rows:
        print(f"{r['name'].ljust(width)}  {r['type']:<4}  {format_bytes(r['memory_bytes'])}")
    if not any(r["type"] == "GPU" for r in rows):
        cuda = tf.test.is_built_with_cuda()
        driver = driver_present()
        # With a driver, the reason is usually a warning this process's log level hid.
        messages = tensorflow_gpu_messages() if cuda and driver else GPU_MESSAGES
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        print(why_no_gpu(args.gpus, cuda, driver, visible, messages))
    if any(r["type"] == "CPU" for r in rows):
        ram = _ram()
        note = f"; the machine has {format_bytes(ram)} of RAM" if ram else ""
        print(f"CPU memory is TensorFlow's nominal allocator limit, not a real bound{note}")
    return 0
