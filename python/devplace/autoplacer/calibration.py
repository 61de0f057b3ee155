"""Calibrate profiled op times against the untraced step measured with them.

A traced op's duration is not what the op costs in an untraced step: the executor's own work
per op (scheduling, allocation, the RPC that hands a partition its inputs) is left out, and
tracing adds its own per-op bookkeeping. Both are a cost per op, so each profile gets one
offset: `profile_devices` also times the whole graph untraced on the profiled device
(`DeviceProfiles.steps`), and `calibrate` adds to every op on the devices using that profile
the offset (µs, possibly negative; an op never costs less than 0) under which the simulated
step of everything on the profiled device equals that measured step.

Part of a step is no op's: the client's feed reaching the task, the fetch leaving it, the
step's start. It does not shrink when the ops are split across devices, so it must not go
into the ops' times: where the profiles give the traced span of the ops
(`DeviceProfiles.spans`), what every profiled device's step spends outside it beyond the
problem's fixed costs goes into `Problem.step_cost` first (docs/autoplace.md, "Cost model",
has what it measured on one-core tasks).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from scipy.optimize import brentq

from devplace.autoplacer.cost import DeviceProfiles
from devplace.autoplacer.graph import Problem
from devplace.autoplacer.placers.single import all_on
from devplace.autoplacer.simulator import simulate

__all__ = ["calibrate"]


def _shifted(
    compute: np.ndarray, columns: list[int], offset: float, scale: float = 1.0
) -> np.ndarray:
    """`compute` on `columns` where finite times `scale` plus `offset`, never below 0."""
    out = compute.copy()
    block = out[:, columns]
    shifted = np.maximum(block * scale + offset, 0.0)
    out[:, columns] = np.where(np.isfinite(block), shifted, block)
    return out


def _calibrated(problem: Problem, device: int, columns: list[int], step_us: float) -> Problem:
    """`problem` with the per-op offset on `columns` that makes everything-on-`device` take
    `step_us` (recorded in `op_offsets`). The offset goes no lower than minus the 10th
    percentile of the profiled op times: a profile slower than that (traced while the
    machine was busy) is scaled down instead (`op_scales`), so its big ops keep their share
    rather than its small ones dropping to 0. A step shorter than the fixed costs alone
    (every op free) lowers `step_cost` to fit: the servers' constants were timed at a slower
    moment."""
    cpus = [j for j, dev in enumerate(problem.devices) if dev.kind == "cpu"]
    single = all_on(problem, [device, *cpus])
    trial = replace(problem)  # one copy whose times each try replaces (finite stays finite)

    def error(offset: float, scale: float = 1.0) -> float:
        trial.compute = _shifted(problem.compute, columns, offset, scale)
        return simulate(trial, single).makespan - step_us

    finite = problem.compute[:, columns][np.isfinite(problem.compute[:, columns])]
    low = -float(finite.max(initial=0.0))  # every op free: the step's fixed costs alone
    positive = finite[finite > 0]
    floor = -float(np.percentile(positive, 10)) if positive.size else 0.0
    high = max(step_us, 1.0)  # every op at least the whole step
    step_cost, scale = problem.step_cost, 1.0
    if (excess := error(low)) >= 0:
        offset, step_cost = low, max(step_cost - excess, 0.0)
    elif error(high) <= 0:  # nothing on that device depends on the offset
        offset = 0.0
    elif error(floor) > 0:  # slower than any per-op overhead explains: scale
        offset = floor
        scale = float(brentq(lambda k: error(floor, k), 0.0, 1.0, xtol=1e-4))
    else:
        offset = float(brentq(error, floor, high, xtol=0.01))
    names = [problem.devices[j].name for j in columns]
    return replace(
        problem,
        compute=_shifted(problem.compute, columns, offset, scale),
        step_cost=step_cost,
        op_offsets={**problem.op_offsets, **dict.fromkeys(names, offset)},
        op_scales={**problem.op_scales, **dict.fromkeys(names, scale)},
    )


def _outside_ops(problem: Problem, profiles: DeviceProfiles) -> float:
    """What every profiled device's untraced step spends outside its ops (its step less the
    traced span of its ops, `DeviceProfiles.spans`) beyond the problem's fixed costs of a step
    there: the least over those devices, at least 0."""
    names = [dev.name for dev in problem.devices]
    cpus = [j for j, dev in enumerate(problem.devices) if dev.kind == "cpu"]
    extra = [
        profiles.steps[dev] - span - problem.fixed_cost(all_on(problem, [names.index(dev), *cpus]))
        for dev, span in profiles.spans.items()
        if dev in names and dev in profiles.steps and span > 0
    ]
    return max(min(extra), 0.0) if extra else 0.0


def calibrate(problem: Problem, profiles: DeviceProfiles | None) -> Problem:
    """`problem` with the steps' time outside their ops added to its `step_cost`
    (`_outside_ops`), then each measured profile's per-op offset added to the devices using it
    (`Problem.op_offsets` says which; `_calibrated` for a step shorter than the fixed costs);
    unchanged without profiles or measured steps.

    A profile is calibrated only when its profiled device is one of the problem's (its
    single-device step is what was measured); devices sharing its profile get its offset.
    """
    if profiles is None or not profiles.steps:
        return problem
    if outside := _outside_ops(problem, profiles):
        problem = replace(problem, step_cost=problem.step_cost + outside)
    names = [dev.name for dev in problem.devices]
    for profiled, step_us in profiles.steps.items():
        if profiled in names:
            columns = [j for j, x in enumerate(names) if profiles.profile_of(x) == profiled]
            problem = _calibrated(problem, names.index(profiled), columns, step_us)
    return problem
