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
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from devplace.adapter._tf import kernel_device_types, tf
from devplace.adapter.devices import DeviceSpecError, canonical_device, matches, parse_device
from devplace.adapter.scopes import PS_OPS, variable_bytes
from devplace.autoplacer.calibration import calibrate
from devplace.autoplacer.cost import CostModel, DeviceProfiles, device_kind, task_of
from devplace.autoplacer.graph import AutoPlacementError, Problem, ProblemDevice

__all__ = [
    "device_names",
    "effective_assignment",
    "estimate_us",
    "fetch_closure",
    "problem_from_graph",
]


def _fetch_ops(fetches: Any, graph: Any) -> list[Any]:
    """The ops of `fetches` in any form `Session.run` and `dp.placement` take: a tensor, an
    op, a name, or lists, tuples, sets and dicts of them (nested)."""
    items = list(fetches) if isinstance(fetches, set) else tf.nest.flatten(fetches)
    ops = []
    for item in items:
        try:
            element = graph.as_graph_element(item, allow_tensor=True, allow_operation=True)
        except (TypeError, ValueError, KeyError):
            element = None
        op = getattr(element, "op", element)
        if not isinstance(op, tf.Operation):
            raise AutoPlacementError(
                f"cannot place fetch {item!r}: expected a tf.Tensor, tf.Operation or a name "
                "of the graph, or lists and dicts of them (as dp.placement takes)"
            )
        ops.append(op)
    if not ops:
        raise AutoPlacementError(
            "autoplace needs at least one fetch; hint: pass the train op or loss"
        )
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
    return kernel_device_types(op_type)


@cache
def _known_types() -> frozenset[str]:
    """Device types this TF build really supports (a MatMul kernel); others count as unknown.

    A CPU-only build still registers a few GPU kernels (e.g. for Identity), so one op type
    having none says nothing there; then every op is assumed to have a kernel.
    """
    return _kernel_types("MatMul") | {"CPU"}


def _groups(ops: Sequence[Any]) -> np.ndarray:
    """Colocation group label per op: connected components of "loc:@name" references."""
    index = {op.name: i for i, op in enumerate(ops)}
    pairs = [
        (i, index[name])
        for i, op in enumerate(ops)
        for cls in op.colocation_groups()
        if (name := cls.decode().removeprefix("loc:@")) in index
    ]
    rows, cols = zip(*pairs, strict=True) if pairs else ((), ())
    graph = coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(ops), len(ops)))
    return connected_components(graph, directed=False)[1]


def _pin_mask(op: Any, names: list[str]) -> np.ndarray | None:
    """Devices matching op's requested device, or None when it requests none."""
    if not op.device:
        return None
    ok = np.array([matches(op.device, name) for name in names])
    if not ok.any():
        raise AutoPlacementError(
            f"op {op.name!r} is pinned to {op.device!r}, which is none of the devices {names}; "
            "hint: add that device, or pass respect_pins=False"
        )
    return ok


def device_names(devices: Sequence[str]) -> list[str]:
    """Canonical names of `devices`, checked: a non-empty list naming each device once."""
    if isinstance(devices, str) or not devices:
        raise AutoPlacementError(
            f"devices must be a non-empty list of device names, got {devices!r}; "
            "hint: devices=['/device:CPU:0', '/device:GPU:0']"
        )
    try:
        names = [canonical_device(x) for x in devices]
    except DeviceSpecError as err:
        raise AutoPlacementError(f"bad device in devices={list(devices)!r}: {err}") from err
    if len(set(names)) != len(names):
        raise AutoPlacementError(f"devices {names} name a device twice")
    return names


def _profile_key(op: Any, profiles: DeviceProfiles | None) -> str:
    """The name `op` has in device profiles: a fed placeholder runs as `_arg_<name>_0_0`."""
    alias = f"_arg_{op.name}_0_0"
    if (
        op.type == "Placeholder"
        and profiles is not None
        and profiles.output_bytes(alias) is not None
    ):
        return alias
    return op.name


def _op_costs(
    ops: Sequence[Any], names: list[str], cost: CostModel, profile: Any
) -> tuple[np.ndarray, np.ndarray]:
    """Compute times (n, d) and output bytes (n,) of `ops` on the devices `names`.

    Times: `cost.profiles` per device kind, else `profile`'s median, else a static estimate.
    """
    stats = getattr(profile, "op_stats", None) or {}
    keys = [_profile_key(op, cost.profiles) for op in ops]
    times = np.empty(len(ops))
    out_bytes = np.empty(len(ops))
    for i, op in enumerate(ops):
        stat = stats.get(op.name)
        measured = cost.profiles.output_bytes(keys[i]) if cost.profiles is not None else None
        times[i] = stat.duration_us if stat is not None else estimate_us(op)
        if measured is None:
            measured = stat.output_bytes if stat is not None else _static_bytes(op)
        out_bytes[i] = measured
    typed = [(key, op.type) for key, op in zip(keys, ops, strict=True)]
    return cost.compute(times, names, typed), out_bytes


def _forbid(compute: np.ndarray, ops: Sequence[Any], names: list[str], respect_pins: bool) -> None:
    """Set inf where an op has no kernel for a device's type, or is pinned elsewhere."""
    types = [parse_device(x).device_type for x in names]
    known = _known_types()
    for i, op in enumerate(ops):
        have = _kernel_types(op.type)
        for j, dtype in enumerate(types):
            if dtype in known and dtype not in have and "DEFAULT" not in have:
                compute[i, j] = np.inf
        if respect_pins and (pin := _pin_mask(op, names)) is not None:
            compute[i, ~pin] = np.inf


def _problem_devices(
    names: list[str], devices: Sequence[str], cost: CostModel, memory: Mapping[str, float] | None
) -> list[ProblemDevice]:
    """The problem's devices: memory caps, slots, the shared CPU pool and transfer channel."""
    caps = dict(memory or {})
    unknown = set(caps) - set(names) - set(devices)
    if unknown:
        raise AutoPlacementError(
            f"memory caps name unknown devices {sorted(unknown)}; devices: {names}"
        )
    caps = {canonical_device(k): float(v) for k, v in caps.items()}
    pooled = cost.cpu_threads is not None
    out = []
    for name in names:
        cpu = device_kind(name) == "cpu"
        task = task_of(name)
        pool = "cpu" if pooled and cpu else None
        if cpu and task in cost.task_threads:
            pool = task  # the task's inter-op pool
        out.append(
            ProblemDevice(
                name,
                device_kind(name),
                memory=caps.get(name, float("inf")),
                slots=cost.cpu_slots if cpu else cost.acc_slots,
                pool=pool,
                channel=(task or "host") if cost.shared_channel else None,
                dma=cost.dma_copies,
                host=task,
            )
        )
    return out


def _master_crossings(
    compute: np.ndarray,
    out_bytes: np.ndarray,
    ops: Sequence[Any],
    fetched: Sequence[Any],
    names: list[str],
    cost: CostModel,
) -> None:
    """Add to the time of placeholders (fed from the master's task) and of fetched ops (whose
    outputs go to it) the crossing between the master's task and each device's."""
    if cost.master is None:
        return
    fetched_names = {op.name for op in fetched}
    for i, op in enumerate(ops):
        if op.type == "Placeholder" or op.name in fetched_names:
            compute[i] += [cost.master_crossing(name, out_bytes[i]) for name in names]


def _pool_capacity(cost: CostModel) -> dict[str, int]:
    """Threads of each shared pool: all CPU devices' (`cpu_threads`), each task's."""
    pools = {task: int(n) for task, n in cost.task_threads.items()}
    if cost.cpu_threads is not None:
        pools["cpu"] = int(cost.cpu_threads)
    return pools


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
    names = device_names(devices)
    ops = fetch_closure(fetches, graph)
    compute, out_bytes = _op_costs(ops, names, cost, profile)
    _master_crossings(compute, out_bytes, ops, _fetch_ops(fetches, graph), names, cost)
    _forbid(compute, ops, names, respect_pins)
    index = {op.name: i for i, op in enumerate(ops)}
    edges = {(index[t.op.name], i) for i, op in enumerate(ops) for t in op.inputs}
    edges |= {(index[c.name], i) for i, op in enumerate(ops) for c in op.control_inputs}
    is_param = np.array([op.type in PS_OPS for op in ops])
    held = np.array(
        [float(variable_bytes(op)) if p else 0.0 for op, p in zip(ops, is_param, strict=True)]
    )
    alpha, beta = cost.links(names)
    problem = Problem(
        names=[op.name for op in ops],
        devices=_problem_devices(names, devices, cost, memory),
        compute=compute,
        edges=sorted(edges),
        xfer=cost.transfer_units(out_bytes),
        link_alpha=alpha,
        link_beta=beta,
        memory=held,
        out_bytes=out_bytes,
        groups=_groups(ops),
        is_param=is_param,
        fed=np.array([op.type == "Placeholder" for op in ops]),
        serial_links=cost.serial_links,
        pool_capacity=_pool_capacity(cost),
        name=graph.__class__.__name__,
        host_step_cost=cost.task_step_us,
        step_cost=cost.step_us,
        master_host=cost.master,
        master_host_cost=cost.master_task_us,
        host_send_share=cost.task_send_share,
        host_start_delay=cost.remote_start_us,
    )
    return calibrate(problem, cost.profiles), ops


def effective_assignment(problem: Problem, requested: Sequence[str]) -> np.ndarray:
    """The devices TF runs each op on, given the requested device per op (soft placement).

    An op goes to the first device matching its request that it may use; an op without a
    usable request goes where TF's default would put it (accelerators before CPUs); a
    colocation group whose members disagree goes, as one, to the first device in that order
    every member may use.
    """
    order = sorted(range(problem.d), key=lambda j: problem.devices[j].kind == "cpu")
    allowed = problem.allowed
    a = np.empty(problem.n, dtype=np.int64)
    for i, want in enumerate(requested):
        hits = [j for j in range(problem.d) if want and matches(want, problem.devices[j].name)]
        a[i] = next((j for j in hits + order if allowed[i, j]), order[0])
    group_ok = problem.group_allowed()
    for members in problem.group_members():
        if len(set(a[members].tolist())) > 1:
            a[members] = next(j for j in order if group_ok[members[0], j])
    return a
