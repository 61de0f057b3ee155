"""Automatic placement: a cost model, one simulator that scores every placer, and the placers.

`autoplace(fetches, devices=..., cost=..., strategy="auto")` returns an `AutoPlacement`. The pure
parts (problem, cost model, simulator, placers, workloads) never touch TensorFlow.
"""

from __future__ import annotations

from devplace.autoplacer.api import AutoPlacement, autoplace
from devplace.autoplacer.cost import (
    NVLINK,
    PCIE,
    SHARED,
    CostModel,
    DeviceProfiles,
    Link,
    fit_crossings,
    fit_link,
)
from devplace.autoplacer.graph import AutoPlacementError, InfeasibleError, Problem, ProblemDevice
from devplace.autoplacer.measure import measure_crossings, measure_link, measure_servers
from devplace.autoplacer.placers import PLACERS, Placer
from devplace.autoplacer.profiles import pool_equal_tasks, profile_devices
from devplace.autoplacer.simulator import Schedule, simulate
from devplace.autoplacer.strategies import STRATEGIES, place

__all__ = [
    "NVLINK",
    "PCIE",
    "PLACERS",
    "SHARED",
    "STRATEGIES",
    "CostModel",
    "DeviceProfiles",
    "ProblemDevice",
    "InfeasibleError",
    "Link",
    "AutoPlacement",
    "Placer",
    "AutoPlacementError",
    "Problem",
    "Schedule",
    "autoplace",
    "fit_crossings",
    "fit_link",
    "measure_crossings",
    "measure_link",
    "measure_servers",
    "place",
    "pool_equal_tasks",
    "profile_devices",
    "simulate",
]
