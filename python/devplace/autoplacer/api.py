"""`autoplace`: place a TF graph's ops with the cost model, and the resulting `Placement`."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from devplace.autoplacer.cost import CostModel
from devplace.autoplacer.graph import Problem
from devplace.autoplacer.placers.search import DEFAULT_BUDGET_S
from devplace.autoplacer.simulator import Schedule, simulate
from devplace.autoplacer.strategies import place

__all__ = ["Placement", "autoplace"]


@dataclass
class Placement:
    """Where each op goes, with the simulator's predicted step time (µs for TF graphs)."""

    devices: dict[str, str]
    predicted_step_time: float
    strategy: str
    problem: Problem
    schedule: Schedule
    seconds: float

    def __getitem__(self, op_name: str) -> str:
        """The device chosen for the op named `op_name`."""
        return self.devices[op_name]

    def __len__(self) -> int:
        """Number of placed ops."""
        return len(self.devices)

    def apply(self, graph: Any = None) -> int:
        """Set each placed op's device in `graph` (default graph); returns how many changed.

        Colocated ops always get one device here, so TF's colocation rule and the placement
        agree. Ops not in the placement keep their device.
        """
        from devplace._tf import tf

        graph = graph or tf.get_default_graph()
        changed = 0
        for op in graph.get_operations():
            want = self.devices.get(op.name)
            if want is not None and op.device != want:
                op._set_device(want)
                changed += 1
        return changed

    def device_function(self) -> Callable[[Any], str]:
        """A device function (op or NodeDef -> device) for rebuilding the same graph."""
        devices = self.devices

        def _placed(op: Any) -> str:
            return devices.get(op.name, op.device)

        return _placed


def autoplace(
    fetches: Any,
    devices: Sequence[str],
    cost: CostModel | None = None,
    strategy: str = "auto",
    profile: Any = None,
    graph: Any = None,
    memory: Mapping[str, float] | None = None,
    respect_pins: bool = True,
    budget: float = DEFAULT_BUDGET_S,
) -> Placement:
    """Place the ops `fetches` need on `devices`, minimising the simulated step time.

    cost: a `CostModel` (links, speed factors, shared CPU pool); profile: a
    `dp.run_profile(..., repeat=N)` result giving measured op times and sizes (without one, a
    static estimate from shapes is used); memory: caps in bytes per device name; strategy: see
    `devplace.autoplacer.strategies.place`; budget: seconds for the search.
    """
    from devplace.autoplacer.tf_graph import problem_from_graph

    t0 = time.perf_counter()
    problem, ops = problem_from_graph(
        fetches,
        devices,
        cost=cost,
        profile=profile,
        graph=graph,
        memory=memory,
        respect_pins=respect_pins,
    )
    assignment = place(problem, strategy, budget)
    schedule = simulate(problem, assignment)
    return Placement(
        devices={op.name: problem.devices[a].name for op, a in zip(ops, assignment, strict=True)},
        predicted_step_time=schedule.makespan,
        strategy=strategy,
        problem=problem,
        schedule=schedule,
        seconds=time.perf_counter() - t0,
    )
