"""devplace's own placer: the best of a portfolio, improved by local search on the simulator.

The portfolio members (`PORTFOLIO_ORDER` first, then the registry's other portfolio placers)
propose assignments, skipping those above their size limit and starting none once the budget
is spent; the simulator scores them (memory violations first, then makespan) and the best is
improved by moving one colocation group at a time to a device where its neighbours are, or to a
still unused device (alone, or together with the ops after it, or before it, that share its
device: a pipeline boundary shifting), keeping every move that lowers the simulated makespan,
until no move helps or the time budget is spent.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from devplace.autoplacer.graph import AutoPlacementError, InfeasibleError, Problem
from devplace.autoplacer.placers._common import (
    DEFAULT_BUDGET_S,
    Assigner,
    Placer,
    Solution,
    device_classes,
)
from devplace.autoplacer.placers._portfolio import PORTFOLIO
from devplace.autoplacer.simulator import Schedule, simulate

__all__ = [
    "DEFAULT_BUDGET_S",
    "PLACER",
    "MAX_BUDGET_S",
    "PORTFOLIO_ORDER",
    "SearchResult",
    "check_budget",
    "improve",
    "run_search",
    "search",
]

#: The largest budget accepted, in seconds: a bound on every placement call.
MAX_BUDGET_S = 3600.0

#: Portfolio members tried first (they give the best starts on most graphs and take about
#: linear time); the other portfolio members of the registry follow in registration order.
PORTFOLIO_ORDER = ("heft", "contiguous", "m_topo")

#: How much worse than the best a local optimum may be for the search to continue from it.
WALK = 0.03


def check_budget(value: object, option: str = "budget") -> float:
    """`value` as a budget in seconds: a finite number in (0, MAX_BUDGET_S]; else an
    AutoPlacementError naming `option`, the value and the allowed range.

    A placement ends within its budget plus a margin: reading the input and scoring the result
    (linear in the graph), the portfolio member still running when the budget ran out (the
    quadratic ones have size limits: m_sct at 2,000 ops takes about 1.5 s), and the one
    simulation running then (see benchmarks/placement/scaling.md). The exact placers keep to
    it too: exhaustive checks its deadline at every node of its search, the MILP counts
    building its model (about 0.1 s at its 40-op limit) and gives HiGHS the rest.
    """
    seconds = math.nan
    if not isinstance(value, bool):
        try:
            seconds = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            pass
    if not 0 < seconds <= MAX_BUDGET_S:  # also false for NaN
        raise AutoPlacementError(
            f"{option} must be a number of seconds in (0, {MAX_BUDGET_S:g}], got {value!r}; "
            f"hint: the default is {DEFAULT_BUDGET_S} s, enough for 1,000 ops"
        )
    return seconds


def _score(problem: Problem, s: Schedule) -> tuple[float, float]:
    excess = float(np.maximum(s.peak_memory - problem.caps, 0.0).sum())
    return (excess, s.makespan)


def _region(
    problem: Problem, a: np.ndarray, state: Assigner, ops: np.ndarray, down: bool
) -> np.ndarray:
    """ops plus everything reachable from them (down or up) without leaving their device."""
    cur = a[ops[0]]
    seen = set(ops.tolist())
    stack = list(seen)
    while stack:
        u = stack.pop()
        for v in problem.succs[u] if down else problem.preds[u]:
            if v not in seen and a[v] == cur:
                for w in state.members[state.label[v]].tolist():
                    if w not in seen:
                        seen.add(w)
                        stack.append(w)
    return np.fromiter(seen, dtype=np.int64)


def _moves(
    problem: Problem, a: np.ndarray, state: Assigner, ops: np.ndarray, classes: list[int]
) -> list[tuple[int, np.ndarray]]:
    """The moves of group `ops`: to each device a neighbour uses and to one used and one
    unused device of each class, alone or with its region down or up (`_region`)."""
    cur = int(a[ops[0]])
    near = {int(a[v]) for u in ops for v in problem.preds[u] + problem.succs[u]}
    occupied = set(a.tolist())
    seen_class: set[tuple[int, bool]] = set()
    for dv in range(problem.d):  # one used and one unused device of each class
        key = (classes[dv], dv in occupied)
        if key not in seen_class:
            seen_class.add(key)
            near.add(dv)
    moves = [(dv, ops) for dv in sorted(near - {cur})]
    return moves + [
        (dv, _region(problem, a, state, ops, down)) for down in (True, False) for dv, _ in moves
    ]


def improve(
    problem: Problem,
    assignment: np.ndarray,
    budget_s: float = DEFAULT_BUDGET_S,
    schedule: Schedule | None = None,
) -> tuple[np.ndarray, Schedule]:
    """First-improvement local search within `budget_s` seconds; returns it and its schedule.

    A move takes one colocation group, alone or with the ops after (or before) it on its
    device, to a device a neighbour uses or to one used and one unused device of each class.
    """
    deadline = time.perf_counter() + budget_s
    state = Assigner(problem)
    a = np.asarray(assignment, dtype=np.int64).copy()
    best = schedule if schedule is not None else simulate(problem, a)
    best_key = _score(problem, best)
    classes = device_classes(problem)
    label, members, ok = state.label, state.members, state.ok
    caps = problem.caps * (1 + 1e-9)
    improved = True
    while improved and time.perf_counter() < deadline:
        improved = False
        used = np.bincount(a, weights=problem.memory, minlength=problem.d)
        # Groups finishing late first: they are the ones on or near the critical path.
        ends = np.zeros(len(members))
        np.maximum.at(ends, label, best.finish)
        for g in np.argsort(-ends, kind="stable"):
            if time.perf_counter() >= deadline:
                break
            ops = members[g]
            cur = int(a[ops[0]])
            for dv, region in _moves(problem, a, state, ops, classes):
                if time.perf_counter() >= deadline:
                    break
                need = float(problem.memory[region].sum())
                over_cap = used[dv] + need > caps[dv]
                if not ok[region, dv].all() or (over_cap and best_key[0] == 0):
                    continue  # no kernel there, or it would break a feasible placement's caps
                a[region] = dv
                trial = simulate(problem, a)
                key = _score(problem, trial)
                if key < best_key and (key[0] < best_key[0] or key[1] < best_key[1] * (1 - 1e-12)):
                    best, best_key, improved = trial, key, True
                    used[cur] -= need
                    used[dv] += need
                    break
                a[region] = cur
    return a, best


@dataclass
class SearchResult:
    """What `run_search` found: the assignment, the portfolio member it grew from, why
    other members were not tried (name -> reason), and its simulated schedule."""

    assignment: np.ndarray
    start: str
    skipped: dict[str, str] = field(default_factory=dict)
    schedule: Schedule | None = None


def _starts(
    problem: Problem, deadline: float, skipped: dict[str, str]
) -> tuple[list[tuple[tuple[float, float], np.ndarray, str, Schedule]], list[InfeasibleError]]:
    """Scored distinct assignments of the portfolio members that fit, in `PORTFOLIO_ORDER`.

    Members above their size limit are skipped; once the deadline has passed no further
    member is started (the first always runs, so there is a result).
    """
    rank = {name: k for k, name in enumerate(PORTFOLIO_ORDER)}
    members = list(PORTFOLIO)
    names = sorted(members, key=lambda name: rank.get(name, len(rank)))
    starts: list[tuple[tuple[float, float], np.ndarray, str, Schedule]] = []
    errors: list[InfeasibleError] = []
    for name in names:
        member = PORTFOLIO[name]
        refusal = member.refusal(problem)
        if refusal is not None:
            skipped[name] = refusal
            continue
        if (starts or errors) and time.perf_counter() >= deadline:
            skipped[name] = "not started: the budget was spent"
            continue
        try:
            a = member(problem, max(deadline - time.perf_counter(), 0.0))
        except InfeasibleError as err:
            errors.append(err)
            continue
        if not any(np.array_equal(a, b) for _, b, _, _ in starts):
            s = simulate(problem, a)
            starts.append((_score(problem, s), a, name, s))
    starts.sort(key=lambda item: item[0])
    return starts, errors


def run_search(
    problem: Problem,
    budget_s: float = DEFAULT_BUDGET_S,
    seed: int = 0,
    start: np.ndarray | None = None,
) -> SearchResult:
    """Best portfolio member, improved by local search (see the module docstring); `start`:
    one more start (e.g. the best placement of the problem's units), named "units"."""
    deadline = time.perf_counter() + budget_s
    skipped: dict[str, str] = {}
    starts, errors = _starts(problem, deadline, skipped)
    if start is not None:
        s = simulate(problem, start)
        starts.append((_score(problem, s), np.asarray(start), "units", s))
        starts.sort(key=lambda item: item[0])
    if not starts:
        raise errors[0]
    best_key, best_a, best_from, best = starts[0]
    for _, a, name, known in starts:  # every distinct start, best first, while time lasts
        left = deadline - time.perf_counter()
        if left <= 0:
            break
        a, s = improve(problem, a, left, known)
        if _score(problem, s) < best_key:
            best_key, best_a, best_from, best = _score(problem, s), a, name, s
    best_key, best_a, best = _walk(problem, best_a, best_key, best, deadline, seed)
    if best_key[0] > 0:
        if errors:
            raise errors[0]
        raise InfeasibleError(
            f"no placement of problem {problem.name!r} found within the memory caps: "
            f"{best.violations}; hint: add devices or memory"
        )
    return SearchResult(best_a, best_from, skipped, best)


def _walk(
    problem: Problem,
    best_a: np.ndarray,
    best_key: tuple[float, float],
    best: Schedule,
    deadline: float,
    seed: int,
) -> tuple[tuple[float, float], np.ndarray, Schedule]:
    """Iterated local search until the deadline: kick the current solution, improve it, and
    move on if the new local optimum is feasible and within WALK of the best (a random walk
    over near-optimal plateaus); returns the best key, assignment and schedule seen."""
    if time.perf_counter() >= deadline:  # e.g. HEFT alone took the budget of a huge graph
        return best_key, best_a, best
    rng = np.random.default_rng(seed)
    state = Assigner(problem)
    n_groups = len(state.members)
    current_a, current_key = best_a, best_key
    while time.perf_counter() < deadline:
        trial = current_a.copy()
        size = int(rng.integers(1, max(3, n_groups // 8) + 1))
        for g in rng.choice(n_groups, size=min(n_groups, size), replace=False):
            ops = state.members[g]
            trial[ops] = rng.choice(np.flatnonzero(state.ok[ops[0]]))
        a, s = improve(problem, trial, deadline - time.perf_counter())
        key = _score(problem, s)
        if key < best_key:
            best_key, best_a, best = key, a, s
        if key[0] <= current_key[0] and key[1] <= best_key[1] * (1 + WALK):
            current_a, current_key = a, key
    return best_key, best_a, best


def search(problem: Problem, budget_s: float = DEFAULT_BUDGET_S, seed: int = 0) -> np.ndarray:
    """The assignment `run_search` finds."""
    return run_search(problem, budget_s, seed).assignment


PLACER = Placer(
    "search", lambda problem, budget: Solution(search(problem, budget)), "budget", portfolio=False
)
