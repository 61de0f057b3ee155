"""Build a placement problem from a real TF graph, its fetches and (optionally) a profile.

Per op: compute time from the profile's median (`dp.run_profile(..., repeat=N)`) or, without
one, a static estimate from shapes; output bytes from the profile or static shapes; memory held
by variables; colocation groups from TF's `_class` attributes; devices without a registered
kernel for the op type excluded; a user's explicit device pin kept (`respect_pins=True`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

import numpy as np
from tensorflow.python.framework import kernels

from devplace._tf import tf
from devplace.autoplacer.cost import CostModel, device_kind
from devplace.autoplacer.graph import Device, PlacementError, Problem
from devplace.devices import DeviceSpecError, canonical_device, parse_device
from devplace.scopes import PS_OPS, variable_bytes

__all__ = ["estimate_us", "fetch_closure", "problem_from_graph"]


def _fetch_ops(fetches: Any, graph: Any) -> list[Any]:
    items = fetches if isinstance(fetches, (list, tuple, set)) else [fetches]
    ops = []
    for item in items:
        if isinstance(item, str):
            item = graph.as_graph_element(item)
        op = getattr(item, "op", item)
        if not isinstance(op, tf.Operation):
            raise PlacementError(
                f"cannot place fetch {item!r}: expected a tf.Tensor, tf.Operation, a name, or a "
                "list of them"
            )
        ops.append(op)
    if not ops:
        raise PlacementError("autoplace needs at least one fetch; hint: pass the train op or loss")
    return ops


def fetch_closure(fetches: Any, graph: Any = None) -> list[Any]:
    """The ops `fetches` depend on (data and control inputs), in graph creation order."""
    graph = graph or tf.get_default_graph()
    seen: dict[str, Any] = {}
    stack = _fetch_ops(fetches, graph)
    while stack:
        op = stack.pop()
        if op.name in seen:
            continue
        seen[op.name] = op
        stack.extend(t.op for t in op.inputs)
        stack.extend(op.control_inputs)
    order = {op.name: i for i, op in enumerate(graph.get_operations())}
    return sorted(seen.values(), key=lambda op: order[op.name])


def _elements(shape: Any) -> int:
    dims = shape.as_list() if shape.rank is not None else None
    if dims is None or any(x is None for x in dims):
        return 0
    return int(np.prod(dims, dtype=np.int64))


def _static_bytes(op: Any) -> int:
    return sum(_elements(t.shape) * t.dtype.size for t in op.outputs if t.dtype.size)


def estimate_us(op: Any) -> float:
    """A static time estimate: 1 µs plus flops at 10 GFLOP/s (matmul, conv) or bytes at 10 GB/s."""
    out = sum(_elements(t.shape) for t in op.outputs)
    flops = float(out)
    if op.type in ("MatMul", "BatchMatMul", "BatchMatMulV2") and op.inputs:
        k = op.inputs[0].shape.as_list()[-1] if op.inputs[0].shape.rank else None
        flops = 2.0 * out * (k or 1)
    elif op.type.startswith("Conv") and len(op.inputs) > 1:
        w = op.inputs[1].shape
        flops = 2.0 * out * (_elements(w) / max(w.as_list()[-1] or 1, 1) if w.rank else 1)
    return 1.0 + max(flops / 1e4, _static_bytes(op) / 1e4)


@cache
def _kernel_types(op_type: str) -> frozenset[str]:
    return frozenset(k.device_type for k in kernels.get_registered_kernels_for_op(op_type).kernel)


@cache
def _known_types() -> frozenset[str]:
    """Device types this TF build really supports (a MatMul kernel); others count as unknown.

    A CPU-only build still registers a few GPU kernels (e.g. for Identity), so one op type
    having none says nothing there; then every op is assumed to have a kernel.
    """
    return _kernel_types("MatMul") | {"CPU"}


def _groups(ops: Sequence[Any]) -> np.ndarray:
    """Union of ops sharing a colocation class ("loc:@name")."""
    index = {op.name: i for i, op in enumerate(ops)}
    parent = list(range(len(ops)))

    def find(i: int) -> int:
        """Root of i in the union-find forest."""
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, op in enumerate(ops):
        for cls in op.colocation_groups():
            other = index.get(cls.decode().removeprefix("loc:@"))
            if other is not None:
                parent[find(i)] = find(other)
    return np.array([find(i) for i in range(len(ops))])


def _pin_mask(op: Any, names: list[str]) -> np.ndarray | None:
    """Devices matching op's requested device, or None when it requests none."""
    if not op.device:
        return None
    want = parse_device(op.device)
    ok = np.zeros(len(names), dtype=bool)
    for j, name in enumerate(names):
        have = parse_device(name)
        ok[j] = (want.device_type in (None, have.device_type)) and (
            want.device_index in (None, have.device_index)
        )
    if not ok.any():
        raise PlacementError(
            f"op {op.name!r} is pinned to {op.device!r}, which is none of the devices {names}; "
            "hint: add that device, or pass respect_pins=False"
        )
    return ok


def problem_from_graph(
    fetches: Any,
    devices: Sequence[str],
    cost: CostModel | None = None,
    profile: Any = None,
    graph: Any = None,
    memory: Mapping[str, float] | None = None,
    respect_pins: bool = True,
) -> tuple[Problem, list[Any]]:
    """The placement problem of the ops `fetches` need, and those ops (index = op index)."""
    cost = cost or CostModel()
    graph = graph or tf.get_default_graph()
    if isinstance(devices, str) or not devices:
        raise PlacementError(
            f"devices must be a non-empty list of device names, got {devices!r}; "
            "hint: devices=['/device:CPU:0', '/device:GPU:0']"
        )
    try:
        names = [canonical_device(x) for x in devices]
    except DeviceSpecError as err:
        raise PlacementError(f"bad device in devices={list(devices)!r}: {err}") from err
    if len(set(names)) != len(names):
        raise PlacementError(f"devices {names} name a device twice")
    ops = fetch_closure(fetches, graph)
    stats = getattr(profile, "op_stats", None) or {}
    times = np.empty(len(ops))
    out_bytes = np.empty(len(ops))
    for i, op in enumerate(ops):
        stat = stats.get(op.name)
        times[i] = stat.duration_us if stat is not None else estimate_us(op)
        out_bytes[i] = stat.output_bytes if stat is not None else _static_bytes(op)
    compute = cost.compute(times, names)
    types = [parse_device(x).device_type for x in names]
    known = _known_types()
    for i, op in enumerate(ops):
        have = _kernel_types(op.type)
        for j, dtype in enumerate(types):
            if dtype in known and dtype not in have and "DEFAULT" not in have:
                compute[i, j] = np.inf
        if respect_pins and (pin := _pin_mask(op, names)) is not None:
            compute[i, ~pin] = np.inf
    index = {op.name: i for i, op in enumerate(ops)}
    edges = {(index[t.op.name], i) for i, op in enumerate(ops) for t in op.inputs}
    edges |= {(index[c.name], i) for i, op in enumerate(ops) for c in op.control_inputs}
    is_param = np.array([op.type in PS_OPS for op in ops])
    held = np.array(
        [float(variable_bytes(op)) if p else 0.0 for op, p in zip(ops, is_param, strict=True)]
    )
    caps = dict(memory or {})
    unknown = set(caps) - set(names) - set(devices)
    if unknown:
        raise PlacementError(
            f"memory caps name unknown devices {sorted(unknown)}; devices: {names}"
        )
    caps = {canonical_device(k): float(v) for k, v in caps.items()}
    pooled = cost.cpu_threads is not None
    devs = [
        Device(
            name,
            device_kind(name),
            memory=caps.get(name, float("inf")),
            slots=cost.cpu_slots if device_kind(name) == "cpu" else 1,
            pool="cpu" if pooled and device_kind(name) == "cpu" else None,
        )
        for name in names
    ]
    alpha, beta = cost.links(names)
    problem = Problem(
        names=[op.name for op in ops],
        devices=devs,
        compute=compute,
        edges=sorted(edges),
        xfer=out_bytes,
        link_alpha=alpha,
        link_beta=beta,
        memory=held,
        out_bytes=out_bytes,
        groups=_groups(ops),
        is_param=is_param,
        serial_links=cost.serial_links,
        pool_capacity={"cpu": int(cost.cpu_threads)} if pooled else {},
        name=graph.__class__.__name__,
    )
    return problem, ops
