"""One module per placer family; every placer maps a `Problem` to a device index per op.

Placers never score themselves: `devplace.autoplace.simulator.simulate` scores them all.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from devplace.autoplace.graph import Problem
from devplace.autoplace.placers.heft import heft
from devplace.autoplace.placers.human import human
from devplace.autoplace.placers.m_etf import m_etf
from devplace.autoplace.placers.m_sct import m_sct
from devplace.autoplace.placers.m_topo import m_topo
from devplace.autoplace.placers.round_robin import round_robin
from devplace.autoplace.placers.single import single_device
from devplace.autoplace.placers.tf_default import tf_default

__all__ = [
    "BASELINES",
    "Placer",
    "heft",
    "human",
    "m_etf",
    "m_sct",
    "m_topo",
    "round_robin",
    "single_device",
    "tf_default",
]

Placer = Callable[[Problem], np.ndarray]

BASELINES: dict[str, Placer] = {
    "single": single_device,
    "tf_default": tf_default,
    "round_robin": round_robin,
    "human": human,
    "m_topo": m_topo,
    "heft": heft,
    "m_etf": m_etf,
    "m_sct": m_sct,
}
