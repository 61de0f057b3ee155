"""The placer registry: every strategy once, in one shape, with the facts `auto` needs.

Each placer module declares its `PLACER` (a `Placer`: name, `run(problem, budget_s) ->
Solution`, scaling class, whether `search` starts from it, size limits); this module lists
them. Placers never score themselves (`devplace.autoplacer.simulator.simulate` scores them
all). Adding a placer is one module with its `PLACER` and one entry in `_MODULES`.
"""

from __future__ import annotations

from devplace.autoplacer.placers import (
    contiguous,
    exhaustive,
    heft,
    human,
    m_etf,
    m_sct,
    m_topo,
    milp,
    round_robin,
    search,
    single,
    tf_default,
)
from devplace.autoplacer.placers._common import DEFAULT_BUDGET_S, SCALING, Placer, Solution
from devplace.autoplacer.placers._portfolio import PORTFOLIO

__all__ = ["BASELINES", "DEFAULT_BUDGET_S", "PLACERS", "SCALING", "Placer", "Solution"]

_MODULES = (
    single,
    tf_default,
    round_robin,
    human,
    m_topo,
    heft,
    m_etf,
    m_sct,
    contiguous,
    search,
    exhaustive,
    milp,
)

#: Every registered placer by name, in registration order.
PLACERS: dict[str, Placer] = {m.PLACER.name: m.PLACER for m in _MODULES}

#: The placers `search` starts from (those declared with `portfolio=True`).
BASELINES: dict[str, Placer] = {name: p for name, p in PLACERS.items() if p.portfolio}
PORTFOLIO.update(BASELINES)
