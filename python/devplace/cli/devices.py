"""`devplace devices`: the devices a session sees, with their memory."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

__all__ = ["device_rows", "register"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `devices` command."""
    parser = subparsers.add_parser(
        "devices",
        help="the devices a session sees, with memory",
        description="List the devices a devplace Session sees (dp.Session(cpus=..., "
        "gpus=...).list_devices()), with each device's memory limit.",
    )
    parser.add_argument(
        "--cpus", type=_count, metavar="N", help="logical CPU devices, as dp.Session(cpus=N)"
    )
    parser.add_argument(
        "--gpus", type=_count, metavar="N", help="GPUs to use at most, as dp.Session(gpus=N)"
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.set_defaults(func=run)


def _count(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}")
    return int(text)


def device_rows(cpus: int | None = None, gpus: int | None = None) -> list[dict[str, Any]]:
    """One dict per device a session with these counts sees: name, type, memory_bytes."""
    import devplace as dp
    from devplace.devices import short_device

    with dp.Session(cpus=cpus, gpus=gpus, graph=dp.tf.Graph()) as sess:
        return [
            {
                "name": short_device(d.name),
                "type": d.device_type,
                "memory_bytes": int(d.memory_limit_bytes),
            }
            for d in sess.list_devices()
        ]


def _gib(count: int) -> str:
    return f"{count / 2**30:.2f} GiB" if count >= 2**30 else f"{count / 2**20:.0f} MiB"


def _ram() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def run(args: argparse.Namespace) -> int:
    """Print the devices; 1 with TensorFlow's message if the session cannot be made."""
    from devplace._tf import tf

    try:
        rows = device_rows(args.cpus, args.gpus)
    except (tf.errors.OpError, ValueError, RuntimeError) as err:
        print(f"devplace devices: error: cannot make a session: {err}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    width = max(len(r["name"]) for r in rows)
    print(f"{'device'.ljust(width)}  type  memory")
    for r in rows:
        print(f"{r['name'].ljust(width)}  {r['type']:<4}  {_gib(r['memory_bytes'])}")
    if not any(r["type"] == "GPU" for r in rows):
        print("no GPU: this TensorFlow sees none (pins to /GPU:i need dp.Session(soft=True))")
    if any(r["type"] == "CPU" for r in rows):
        ram = _ram()
        note = f"; the machine has {_gib(ram)} of RAM" if ram else ""
        print(f"CPU memory is TensorFlow's nominal allocator limit, not a real bound{note}")
    return 0
