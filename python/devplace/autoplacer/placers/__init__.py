"""One module per placer family; every placer maps a `Problem` to a device index per op.

Placers never score themselves: `devplace.autoplacer.simulator.simulate` scores them all.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from devplace.autoplacer.graph import Problem
from devplace.autoplacer.placers.heft import heft
from devplace.autoplacer.placers.human import human
from devplace.autoplacer.placers.m_etf import m_etf
from devplace.autoplacer.placers.m_sct import m_sct
from devplace.autoplacer.placers.m_topo import m_topo
from devplace.autoplacer.placers.round_robin import round_robin
from devplace.autoplacer.placers.single import single_device
from devplace.autoplacer.placers.tf_default import tf_default

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
