"""`autoplace`: place a TF graph's ops with the cost model, and the resulting `AutoPlacement`."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from devplace.adapter.feeds import accepts_feed_dict
from devplace.autoplacer.cost import CostModel
from devplace.autoplacer.explain import explain_text
from devplace.autoplacer.graph import AutoPlacementError, InfeasibleError, Problem
from devplace.autoplacer.placers import BASELINES
from devplace.autoplacer.placers.search import DEFAULT_BUDGET_S
from devplace.autoplacer.placers.single import all_on
from devplace.autoplacer.profiles import profiled_cost
from devplace.autoplacer.simulator import Schedule, simulate
from devplace.autoplacer.strategies import Choice, choose, near_groupings
from devplace.autoplacer.timing import measure_placement
from devplace.autoplacer.verify import Verdict, verify_rounds
from devplace.core.formatting import format_time, plural
from devplace.core.printed import Printed, devices_line

__all__ = ["AutoPlacement", "autoplace"]


@dataclass(repr=False)
class AutoPlacement(Printed):
    """Where each op goes, with the simulator's predicted step time (µs for TF graphs).

    `single_device`: predicted step time of everything on each device (ops it cannot run
    falling back as TF's soft placement does). `measured`: with `verify`, the median measured
    step time (µs) of each candidate measured, by label ("<strategy>", a placer's name, or
    "single:<device>"), `measured_rounds` its time in each interleaved round, and `predicted`
    their predicted times; `verdict` what verify decided (`autoplacer.verify.Verdict`: the
    decision, each candidate's sign-test chance, the rounds' spread and the reason).
    `strategy` names what made the result (the placer `auto` chose, "single:<device>", or
    with verify the candidate it chose); `asked` the strategy asked for; `notes` what
    `autoplace` did on its own (e.g. profiling the devices, what verify chose and why) and
    the first line of `explain()`. `best_single`: the best single-device placement (device
    index per op), `alternative`: (label, assignment) of the best placement of the other
    kind (a split for a single-device pick, and the reverse), both for `explain()`.
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
    verdict: Verdict | None = None
    best_single: np.ndarray | None = None
    alternative: tuple[str, np.ndarray] | None = None

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

    def explain(self) -> str:
        """Why this placement, in numbers (plain text): its predicted step against the best
        single device's; per device its ops, their compute there and on that device; the
        crossings (tensors, bytes, link time) and the fixed costs of a step (per further
        task, an idle master, other tasks' late start); the best placement of the other kind
        and why it lost; where verify ran, every candidate's measured median and the
        decision with its rounds, spread and evidence."""
        best = self.best_single
        if best is None:
            best = np.zeros(self.problem.n, dtype=np.int64)
        return explain_text(
            self.problem,
            self.schedule.assignment,
            self.strategy,
            best,
            self.alternative,
            self.measured_rounds,
            self.verdict.reason if self.verdict is not None else "",
        )

    def _facts(self) -> str:
        return (
            f"{plural(len(self), 'op')} on {devices_line(self.devices.values())}, "
            f"predicted step {format_time(self.predicted_step_time)}, strategy {self.strategy!r}"
        )

    def __repr__(self) -> str:
        return f"AutoPlacement({self._facts()})"

    def __str__(self) -> str:
        return f"autoplace: {self._facts()}\n{self.explain()}"

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
        from devplace.adapter._tf import set_op_device, tf

        graph = graph or tf.get_default_graph()
        changed = 0
        for op in graph.get_operations():
            want = self.devices.get(op.name)
            if want is not None and op.device != want:
                set_op_device(op, want)
                changed += 1
        return changed

    def device_function(self) -> Callable[[Any], str]:
        """A device function (op or NodeDef -> device) for rebuilding the same graph."""
        devices = self.devices

        def _placed(op: Any) -> str:
            return devices.get(op.name, op.device)

        return _placed

    def _repr_html_(self) -> str:
        from devplace.views.notebook import autoplacement_html

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
    """`verify` (None or an integer >= 0) and `runs` (>= 1), and `verify` comes with a
    session."""
    for key, value, low in (("verify", verify, 0), ("runs", runs, 1)):
        if key == "verify" and value is None:
            continue
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


def _alternative(
    problem: Problem,
    chosen: np.ndarray,
    candidates: Mapping[str, np.ndarray],
    singles: Mapping[str, np.ndarray],
) -> tuple[str, np.ndarray] | None:
    """The best predicted placement of the other kind than `chosen`: for one on a single
    device the best split among `candidates`, for a split the best single device."""
    spread = len(set(chosen.tolist())) > 1
    pool = singles if spread else {k: a for k, a in candidates.items() if len(set(a.tolist())) > 1}
    scored = [(simulate(problem, a).makespan, k) for k, a in pool.items()]
    if not scored:
        return None
    label = min(scored)[1]
    return label, pool[label]


def _to_verify(
    problem: Problem,
    assignment: np.ndarray,
    label: str,
    count: int,
    choice: Choice,
    singles: dict[str, np.ndarray],
) -> dict[str, np.ndarray]:
    """What verify measures: the pick and the best other placers' (`count` in all), both of
    auto's results (`Choice.placer`'s, also when the pick fell back to a single device, and
    `Choice.runner_up`: so the units' exact solution is always measured), the groupings of
    the units next to it predicted fastest (`strategies.near_groupings`: profile noise may
    have ranked them below it), every single device. In that order, which `verify.decide`
    follows between candidates measured alike."""
    candidates = _candidates(problem, assignment, label, count)
    candidates.setdefault(choice.placer, choice.assignment)
    own = [choice.assignment]
    if choice.runner_up is not None:
        candidates.setdefault(*choice.runner_up)
        own.append(choice.runner_up[1])
    near = next((found for a in own if (found := near_groupings(problem, a))), [])
    for k, a in enumerate(near, 1):
        if not any(np.array_equal(a, b) for b in candidates.values()):
            candidates[f"units' grouping next to auto's ({k})"] = a
    return {**candidates, **singles}


def _splits(problem: Problem, chosen: np.ndarray, placer: str) -> dict[str, np.ndarray]:
    """The placer's own pick, the split to explain a single-device result by; when it is on
    one device too, the best split of the other placers as well."""
    if len(set(chosen.tolist())) == 1 and problem.d > 1:
        return _candidates(problem, chosen, placer, 2)
    return {placer: chosen}


def _explained(
    result: AutoPlacement, candidates: dict[str, np.ndarray], singles: dict[str, np.ndarray]
) -> None:
    """Give `result` what `explain()` compares it with (the best single device, the best
    placement of the other kind among `candidates` or `singles`), and its first line as the
    last note."""
    best = _best_single(result.problem, singles)
    result.best_single = singles[best[1]] if best is not None else None
    result.alternative = _alternative(
        result.problem, result.schedule.assignment, candidates, singles
    )
    result.notes.append(result.explain().splitlines()[0])


def _verified(
    problem: Problem,
    ops: Sequence[Any],
    candidates: dict[str, np.ndarray],
    singles: dict[str, np.ndarray],
    measure: Callable[[list[str]], float],
    asked: str,
) -> AutoPlacement:
    """The candidate `verify_rounds` decides on against the predicted-best single device,
    with every candidate's measured rounds and median, and predicted time."""
    best = _best_single(problem, singles)
    incumbent = best[1] if best is not None else next(iter(candidates))
    verdict = verify_rounds(
        candidates, lambda a: measure([problem.devices[j].name for j in a]), incumbent
    )
    label = verdict.chosen
    result = AutoPlacement.of(problem, ops, candidates[label], label, singles, asked)
    result.verdict = verdict
    result.measured_rounds = verdict.rounds
    result.measured = {k: statistics.median(t) for k, t in verdict.rounds.items()}
    result.predicted = {k: simulate(problem, a).makespan for k, a in candidates.items()}
    result.notes = [verdict.reason]
    return result


@accepts_feed_dict
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
    verify: int | None = None,
    runs: int = 20,
) -> AutoPlacement:
    """Place the ops `fetches` need on `devices`, minimising the simulated step time.

    fetches: what `dp.placement` takes (a tensor, op or name, or lists and dicts of them);
    cost: a `CostModel` (per-device profiles, links, speed factors, device concurrency);
    profile: a `dp.run_profile(..., repeat=N)` result giving measured op times and sizes;
    without either, with `session`, the devices are profiled (`AutoPlacement.notes` says so;
    cached for the graph), else a static estimate from shapes is used. memory: caps in bytes
    per device name; strategy: see `devplace.autoplacer.strategies.place`; budget: seconds.

    Never predicted slower than the best single device that fits (`strategy="auto"`). With
    `session` and `verify=N`, the `N` best candidates, auto's other result and every single
    device are measured (`runs` steps each, `feed` fed, fresh sessions, interleaved rounds)
    and the predicted-best single device is kept unless a candidate was significantly
    faster (`autoplacer.verify`). `verify=None` (default): with `session` and several
    devices, verified so (as `verify=1`), whatever the prediction.
    `explain()` says why.
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
    if verify is None:  # measured even when one device is predicted best: models err
        verify = int(session is not None and problem.d > 1)
    if verify:
        candidates = _to_verify(problem, assignment, label, verify, choice, singles)
        measure = _measurer(session, fetches, feed, ops, runs)
        result = _verified(problem, ops, candidates, singles, measure, strategy)
    else:
        candidates = _splits(problem, choice.assignment, choice.placer)
    _explained(result, candidates, singles)
    result.notes, result.seconds = [*notes, *result.notes], time.perf_counter() - t0
    return result
