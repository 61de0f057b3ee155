"""An emulation of TensorFlow's default placer.

TF puts each op (with its colocation group) on the highest-priority device type that has a
kernel for every member, index 0 of that type unless pinned: accelerators before CPUs. It
ignores op costs and memory.
"""

from __future__ import annotations

import numpy as np

from devplace.autoplacer.graph import Problem
from devplace.autoplacer.placers._common import Placer, Solution
from devplace.autoplacer.placers.single import all_on

__all__ = ["PLACER", "tf_default"]


def tf_default(problem: Problem) -> np.ndarray:
    """Accelerator 0 for everything it can run, else CPU 0, pins kept."""
    accs = [i for i, dev in enumerate(problem.devices) if dev.kind != "cpu"]
    cpus = [i for i, dev in enumerate(problem.devices) if dev.kind == "cpu"]
    return all_on(problem, accs[:1] + cpus[:1])


PLACER = Placer(
    "tf_default", lambda problem, _budget: Solution(tf_default(problem)), "greedy", portfolio=True
)
