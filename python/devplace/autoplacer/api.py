"""`autoplace`: place a TF graph's ops with the cost model, and the resulting `AutoPlacement`."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from devplace.autoplacer.cost import CostModel
from devplace.autoplacer.graph import AutoPlacementError, InfeasibleError, Problem
from devplace.autoplacer.placers import BASELINES
from devplace.autoplacer.placers.search import DEFAULT_BUDGET_S
from devplace.autoplacer.placers.single import all_on
from devplace.autoplacer.profiles import profiled_cost
from devplace.autoplacer.simulator import Schedule, simulate
from devplace.autoplacer.strategies import choose
from devplace.autoplacer.timing import measure_in_rounds, measure_placement, step_time_us

#: Rounds in which `autoplace(verify=N)` measures every candidate, interleaved: a candidate
#: replaces the predicted-best single device only when faster in every one of them.
VERIFY_ROUNDS = 5

__all__ = [
    "AutoPlacement",
    "autoplace",
    "faster_every_round",
    "measure_in_rounds",
    "measure_placement",
    "step_time_us",
]


@dataclass
class AutoPlacement:
    """Where each op goes, with the simulator's predicted step time (µs for TF graphs).

    `single_device`: predicted step time of everything on each device (ops it cannot run
    falling back as TF's soft placement does). `measured`: with `verify`, the median measured
    step time (µs) of each candidate measured, by label ("<strategy>", a placer's name, or
    "single:<device>"), `measured_rounds` its time in each interleaved round, and `predicted`
    their predicted times. `strategy` names what made the result (the placer `auto` chose,
    "single:<device>", or with `verify` the one `faster_every_round` picked); `asked` the
    strategy asked for; `notes` what `autoplace` did on its own (e.g. profiling the devices,
    what verify chose and why).
    """

    devices: dict[str, str]
    predicted_step_time: float
    strategy: str
    problem: Problem
    schedule: Schedule
    seconds: float
    single_device: dict[str, float] = field(default_factory=dict)
    measured: dict[str, float] = field(default_factory=dict)
    measured_rounds: dict[str, list[float]] = field(default_factory=dict)
    predicted: dict[str, float] = field(default_factory=dict)
    asked: str = "auto"
    notes: list[str] = field(default_factory=list)

    @classmethod
    def of(
        cls,
        problem: Problem,
        ops: Sequence[Any],
        assignment: np.ndarray,
        strategy: str,
        singles: Mapping[str, np.ndarray],
        asked: str,
    ) -> AutoPlacement:
        """The result of placing `ops` (problem op order) by `assignment`, made by `strategy`,
        with the single-device placements' predicted times (`seconds` still to be set)."""
        schedule = simulate(problem, assignment)
        return cls(
            devices={
                op.name: problem.devices[a].name for op, a in zip(ops, assignment, strict=True)
            },
            predicted_step_time=schedule.makespan,
            strategy=strategy,
            problem=problem,
            schedule=schedule,
            seconds=0.0,
            single_device={
                k[len("single:") :]: simulate(problem, a).makespan for k, a in singles.items()
            },
            asked=asked,
        )

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

    def _repr_html_(self) -> str:
        from devplace.notebook import autoplacement_html

        return autoplacement_html(self)


def _singles(problem: Problem) -> dict[str, np.ndarray]:
    """Everything on one device (TF's fallback for ops it cannot run there), per device."""
    cpus = [j for j, dev in enumerate(problem.devices) if dev.kind == "cpu"]
    return {
        f"single:{dev.name}": all_on(problem, [j, *cpus]) for j, dev in enumerate(problem.devices)
    }


def _candidates(
    problem: Problem, chosen: np.ndarray, strategy: str, count: int
) -> dict[str, np.ndarray]:
    """The chosen assignment and the best other placers' (`count` in all), fastest first."""
    found = {strategy: chosen}
    for name, placer in BASELINES.items():
        try:
            found.setdefault(name, placer(problem))
        except InfeasibleError:
            continue
    scored = sorted(found.items(), key=lambda kv: (simulate(problem, kv[1]).makespan, kv[0]))
    out: dict[str, np.ndarray] = {strategy: chosen}
    for name, a in scored:
        if len(out) >= count:
            break
        if not any(np.array_equal(a, b) for b in out.values()):
            out[name] = a
    return out


def _measurer(
    session: Any, fetches: Any, feed: Any, ops: Sequence[Any], runs: int
) -> Callable[[list[str]], float]:
    """Measures a placement given as a device name per op of `ops` (`measure_placement`)."""

    def measure(names: list[str]) -> float:
        devices = {op.name: name for op, name in zip(ops, names, strict=True)}
        return measure_placement(session, fetches, devices, feed, runs)

    return measure


def _check_verify(verify: object, runs: object, session: Any) -> None:
    """`verify` and `runs` are integers (>= 0, >= 1), and `verify` comes with a session."""
    for key, value, low in (("verify", verify, 0), ("runs", runs, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise AutoPlacementError(
                f"autoplace({key}={value!r}): expected an integer >= {low}; hint: e.g. {key}=3"
            )
    if verify and session is None:
        raise AutoPlacementError(
            f"autoplace(verify={verify!r}) measures candidates on real devices; "
            "hint: pass session=sess (a session of the graph)"
        )


def _best_single(problem: Problem, singles: dict[str, np.ndarray]) -> tuple[float, str] | None:
    """(predicted step time, label) of the fastest single-device placement that fits."""
    fits = [(s.makespan, k) for k, a in singles.items() if (s := simulate(problem, a)).feasible]
    return min(fits, default=None)


def _not_slower_than_one_device(
    problem: Problem, assignment: np.ndarray, label: str, singles: dict[str, np.ndarray]
) -> tuple[np.ndarray, str]:
    """`assignment`, or the best single-device placement that fits when predicted faster."""
    best = _best_single(problem, singles)
    if best is not None and best[0] < simulate(problem, assignment).makespan:
        return singles[best[1]], best[1]
    return assignment, label


def faster_every_round(rounds: Mapping[str, Sequence[float]], incumbent: str) -> str:
    """The label to trust: among the candidates faster than `incumbent` in every round (rounds
    measured interleaved, so a burst of load hits each round's candidates alike), the one of
    least median; `incumbent` when none is. A lucky median alone never displaces it."""
    base = rounds[incumbent]
    beat = [
        k
        for k, times in rounds.items()
        if k != incumbent and all(t < b for t, b in zip(times, base, strict=True))
    ]
    return min(beat, key=lambda k: (statistics.median(rounds[k]), k), default=incumbent)


def _verified(
    problem: Problem,
    ops: Sequence[Any],
    candidates: dict[str, np.ndarray],
    singles: dict[str, np.ndarray],
    measure: Callable[[list[str]], float],
    asked: str,
) -> AutoPlacement:
    """The candidate `faster_every_round` picks over the predicted-best single device in
    `VERIFY_ROUNDS` interleaved rounds (`measure_in_rounds`), with every candidate's measured
    rounds and median, predicted time, and a note saying why it was picked."""
    best = _best_single(problem, singles)
    incumbent = best[1] if best is not None else next(iter(candidates))
    rounds = measure_in_rounds(
        candidates, lambda a: measure([problem.devices[j].name for j in a]), VERIFY_ROUNDS
    )
    label = faster_every_round(rounds, incumbent)
    result = AutoPlacement.of(problem, ops, candidates[label], label, singles, asked)
    result.measured_rounds = rounds
    result.measured = {k: statistics.median(t) for k, t in rounds.items()}
    result.predicted = {k: simulate(problem, a).makespan for k, a in candidates.items()}
    result.notes = [
        f"verify: chose {label} (faster than {incumbent} in each of {VERIFY_ROUNDS} rounds)"
        if label != incumbent
        else f"verify: kept {label} (no candidate was faster in each of {VERIFY_ROUNDS} rounds)"
    ]
    return result


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
    session: Any = None,
    feed: Any = None,
    verify: int = 0,
    runs: int = 20,
) -> AutoPlacement:
    """Place the ops `fetches` need on `devices`, minimising the simulated step time.

    fetches: what `dp.placement` takes (a tensor, op or name, or lists and dicts of them);
    cost: a `CostModel` (per-device profiles, links, speed factors, device concurrency);
    profile: a `dp.run_profile(..., repeat=N)` result giving measured op times and sizes;
    without either, with `session`, the devices are profiled (`AutoPlacement.notes` says so;
    cached for the graph), else a static estimate from shapes is used. memory: caps in bytes
    per device name; strategy: see `devplace.autoplacer.strategies.place`; budget: seconds.

    Every single-device placement is scored under the same model; with `strategy="auto"` the
    result is never one predicted slower than the best of them that fits in memory. With
    `session` and `verify=N`, the `N` best candidates (the strategy's and other placers')
    and every single-device placement are measured (`runs` steps each, `feed` fed, in fresh
    sessions of that session's graph and config, in `VERIFY_ROUNDS` interleaved rounds), and
    the predicted-best single-device placement is returned unless a candidate was faster in
    every round (`faster_every_round`; the fastest such).
    """
    from devplace.autoplacer.tf_graph import problem_from_graph

    _check_verify(verify, runs, session)
    t0 = time.perf_counter()
    graph = graph if graph is not None else getattr(session, "graph", None)
    notes: list[str] = []
    if session is not None and profile is None and (cost is None or cost.profiles is None):
        cost = profiled_cost(session, fetches, devices, feed, cost, notes)
    problem, ops = problem_from_graph(
        fetches, devices, cost, profile, graph, memory, respect_pins=respect_pins
    )
    choice = choose(problem, strategy, budget)
    assignment, label = choice.assignment, choice.placer
    singles = _singles(problem)
    if strategy == "auto":
        assignment, label = _not_slower_than_one_device(problem, assignment, label, singles)
    result = AutoPlacement.of(problem, ops, assignment, label, singles, asked=strategy)
    if verify:
        candidates = {**_candidates(problem, assignment, label, verify), **singles}
        measure = _measurer(session, fetches, feed, ops, runs)
        result = _verified(problem, ops, candidates, singles, measure, strategy)
    result.notes, result.seconds = notes + result.notes, time.perf_counter() - t0
    return result
