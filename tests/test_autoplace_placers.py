"""Every placer: valid, constraint-respecting assignments; the exact ones really optimal."""

from __future__ import annotations

import dataclasses
import itertools
import time
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from devplace.autoplacer import (
    AutoPlacementError,
    InfeasibleError,
    Problem,
    ProblemDevice,
    place,
    simulate,
)
from devplace.autoplacer.placers import BASELINES, PLACERS, Placer
from devplace.autoplacer.placers._common import Assigner, data_ready, mean_comm, upward_rank
from devplace.autoplacer.placers.contiguous import contiguous, depth_first_order
from devplace.autoplacer.placers.exhaustive import exhaustive
from devplace.autoplacer.placers.heft import heft
from devplace.autoplacer.placers.m_sct import favourite_parents
from devplace.autoplacer.placers.milp import milp_placement
from devplace.autoplacer.placers.search import PORTFOLIO_ORDER, run_search, search
from devplace.autoplacer.strategies import STRATEGIES, choose
from devplace.autoplacer.workloads import chain, fork_join, inception_module, random_layered

#: Every strategy, from the registry: each registered placer and "auto".
ALL = list(STRATEGIES)


def _budget(name: str) -> float:
    """Seconds for a placer in these tests: the exact ones get enough to finish small graphs."""
    return 5.0 if name in PLACERS and PLACERS[name].scaling == "exponential" else 0.05


@st.composite
def problems(draw: st.DrawFn, max_ops: int = 8) -> Problem:
    """Small random DAGs on a CPU and two accelerators, with groups, caps and a CPU-only op."""
    n = draw(st.integers(2, max_ops))
    edges = [(u, v) for u, v in itertools.combinations(range(n), 2) if draw(st.booleans())]
    acc = np.array([draw(st.integers(1, 9)) for _ in range(n)], dtype=float)
    compute = np.column_stack([acc * 3, acc, acc])
    cpu_only = draw(st.integers(-1, n - 1))
    if cpu_only >= 0:
        compute[cpu_only, 1:] = np.inf
    groups = np.arange(n)
    if n >= 3 and draw(st.booleans()):
        groups[1] = groups[0]
    memory = np.array([draw(st.integers(0, 4)) for _ in range(n)], dtype=float)
    cap = float(max(memory.sum() * 0.6, memory.max() + memory[:2].sum(), 1.0))
    devices = [
        ProblemDevice("cpu:0", "cpu"),
        ProblemDevice("acc:0", memory=cap),
        ProblemDevice("acc:1", memory=cap),
    ]
    beta = np.array([[0, 1, 1], [1, 0, 2], [1, 2, 0]], dtype=float)
    return Problem(
        names=[f"op{i}" for i in range(n)],
        devices=devices,
        compute=compute,
        edges=edges,
        xfer=np.array([draw(st.integers(0, 5)) for _ in range(n)], dtype=float),
        link_alpha=np.zeros((3, 3)),
        link_beta=beta,
        memory=memory,
        groups=groups,
        serial_links=draw(st.booleans()),
    )


@settings(max_examples=40, deadline=None)
@given(problems())
def test_every_placer_respects_kernels_groups_and_memory(p: Problem):
    for name in ALL:
        a = place(p, name, budget_s=_budget(name))
        p.check(a)  # kernels and colocation
        s = simulate(p, a)
        if name not in ("single", "tf_default"):  # these ignore memory, as TF does
            assert s.feasible, (name, s.violations)


def brute_force(p: Problem) -> float:
    best = np.inf
    for a in itertools.product(range(p.d), repeat=p.n):
        try:
            s = simulate(p, a)
        except AutoPlacementError:
            continue
        if s.feasible:
            best = min(best, s.makespan)
    return best


@settings(max_examples=25, deadline=None)
@given(problems(max_ops=6))
def test_exhaustive_finds_the_brute_force_optimum(p: Problem):
    found = exhaustive(p)
    assert found.optimal
    opt = simulate(p, found.assignment).makespan
    assert opt == pytest.approx(brute_force(p))
    seeded = exhaustive(p, incumbent=search(p, 0.02))  # tries the incumbent's devices first
    assert seeded.optimal and simulate(p, seeded.assignment).makespan == pytest.approx(opt)
    for name in ALL:
        s = simulate(p, place(p, name, budget_s=_budget(name)))
        assert s.makespan >= opt - 1e-9 or not s.feasible


@settings(max_examples=15, deadline=None)
@given(problems(max_ops=6))
def test_milp_value_is_a_lower_bound_on_the_simulated_optimum(p: Problem):
    r = milp_placement(p, time_limit=30)
    assert r.optimal
    opt = simulate(p, exhaustive(p).assignment).makespan
    assert r.bound <= opt + 1e-6
    assert r.value <= simulate(p, r.assignment).makespan + 1e-6


def test_milp_solves_a_model_highs_presolve_fails_on():
    """Hypothesis found it: HiGHS's presolve stops with "Solve error" on this 3-op model (on
    scipy 1.16's HiGHS), which the MILP placer then solves without presolve."""
    cpu = ProblemDevice("cpu:0", "cpu", memory=np.inf)
    accs = [ProblemDevice(f"acc:{i}", "acc", memory=1.0) for i in range(2)]
    p = Problem(
        names=["op0", "op1", "op2"],
        devices=[cpu, *accs],
        compute=np.array([[3.0, 1.0, 1.0], [6.0, 2.0, 2.0], [3.0, np.inf, np.inf]]),
        edges=[(1, 2)],
        xfer=np.array([0.0, 2.0, 0.0]),
        link_alpha=np.zeros((3, 3)),
        link_beta=np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 2.0], [1.0, 2.0, 0.0]]),
        memory=np.zeros(3),
        serial_links=False,
    )
    r = milp_placement(p, time_limit=30)
    assert r.optimal
    assert r.value == pytest.approx(simulate(p, exhaustive(p).assignment).makespan)


def test_milp_is_exact_without_contention_on_a_fork():
    p = fork_join(2, 2, seed=3)
    p.serial_links = False
    r = milp_placement(p)
    assert r.optimal
    assert r.value == pytest.approx(simulate(p, exhaustive(p).assignment).makespan, rel=1e-6)


def test_auto_is_within_two_percent_of_the_optimum_on_small_graphs():
    for p in (chain(10), fork_join(3, 3), random_layered(10, seed=2)):
        opt = simulate(p, exhaustive(p).assignment).makespan
        assert simulate(p, place(p, "auto", budget_s=1.0)).makespan <= opt * 1.02


#: Seconds a placement may run past its budget in these tests: generous, as the test machine
#: may be shared (the margin devplace states is in `check_budget`'s docstring).
OVERRUN_S = 5.0


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("exhaustive", random_layered(14, seed=5, n_acc=4)),  # > 150 s to finish here
        ("milp", random_layered(40, seed=1)),
    ],
    ids=["exhaustive", "milp"],
)
def test_an_exact_placer_keeps_to_its_budget_and_says_it_is_not_proven_optimal(name, problem):
    t0 = time.perf_counter()
    found = choose(problem, name, budget_s=1.0)
    assert time.perf_counter() - t0 < 1.0 + OVERRUN_S
    assert found.placer == name and found.optimal is False
    s = simulate(problem, found.assignment)
    assert s.feasible  # never worse than where it started: HEFT's assignment
    assert s.makespan <= simulate(problem, heft(problem)).makespan + 1e-9


def test_exact_placers_that_finish_say_their_result_is_optimal():
    fork = fork_join(2, 2, seed=3)
    assert choose(fork, "exhaustive", budget_s=60).optimal is True
    assert choose(fork, "milp", budget_s=60).optimal is True
    auto = choose(random_layered(8, seed=0), "auto", budget_s=4)
    assert auto.optimal is True  # its exhaustive step finished
    assert choose(random_layered(60, seed=1), "auto", budget_s=0.2).optimal is None  # search only


def test_exact_placers_without_a_start_refuse_when_the_budget_ends_first():
    with pytest.raises(
        AutoPlacementError, match=r"no complete assignment .* within its 0 s budget"
    ):
        exhaustive(random_layered(8, seed=1), time_limit=0)
    with pytest.raises(AutoPlacementError, match=r"no assignment within its 0.001 s budget.*hint"):
        milp_placement(random_layered(40, seed=1), time_limit=1e-3)


def test_search_is_never_worse_than_the_best_baseline():
    for p in (fork_join(4, 3), random_layered(13, seed=4), random_layered(60, seed=1, n_acc=3)):
        best = min(simulate(p, f(p)).makespan for f in BASELINES.values())
        assert simulate(p, search(p, 0.3)).makespan <= best + 1e-9


def test_memory_infeasible_problem_names_the_op():
    p = Problem(
        names=["big", "small"],
        devices=[ProblemDevice("acc:0", memory=10), ProblemDevice("acc:1", memory=10)],
        compute=np.ones((2, 2)),
        edges=[(0, 1)],
        xfer=np.zeros(2),
        link_alpha=np.zeros((2, 2)),
        link_beta=np.zeros((2, 2)),
        memory=np.array([11.0, 1.0]),
    )
    for name in ALL:
        if name in ("single", "tf_default"):
            continue
        with pytest.raises(InfeasibleError, match="'big'.*hint"):
            place(p, name, budget_s=0.05)


def test_unknown_strategy_lists_the_known_ones():
    with pytest.raises(AutoPlacementError, match="heft"):
        place(chain(3), "fastest")


def test_sct_favourite_child_of_a_chain_is_the_next_op():
    p = chain(6)
    assert favourite_parents(p).tolist() == [-1, 0, 1, 2, 3, 4]


def test_contiguous_cuts_a_capped_chain_at_the_cheapest_edge():
    n = 6
    p = Problem(
        names=[f"op{i}" for i in range(n)],
        devices=[ProblemDevice("acc:0", memory=4), ProblemDevice("acc:1", memory=4)],
        compute=np.ones((n, 2)),
        edges=[(i, i + 1) for i in range(n - 1)],
        xfer=np.array([9, 9, 1, 9, 9, 0], dtype=float),
        link_alpha=np.zeros((2, 2)),
        link_beta=np.array([[0, 1], [1, 0]], dtype=float),
        memory=np.ones(n),
    )
    a = contiguous(p)
    assert a[:3].tolist() == [a[0]] * 3 and a[3:].tolist() == [a[3]] * 3 and a[0] != a[3]
    assert simulate(p, a).makespan == 6 + 1


def test_depth_first_order_puts_inputs_right_before_their_user():
    # weight 0 feeds op 3 only; ops 1 -> 2 -> 3.
    p = Problem(
        names=["w", "a", "b", "c"],
        devices=[ProblemDevice("acc:0")],
        compute=np.ones((4, 1)),
        edges=[(0, 3), (1, 2), (2, 3)],
        xfer=np.zeros(4),
        link_alpha=np.zeros((1, 1)),
        link_beta=np.zeros((1, 1)),
        memory=np.zeros(4),
    )
    assert depth_first_order(p) == [1, 2, 0, 3]


def test_heft_spreads_independent_work_over_free_links():
    p = fork_join(4, 1, seed=0)
    p.link_beta[:] = 0.0
    p.link_alpha[:] = 0.0
    a = BASELINES["heft"](p)
    assert len(set(a[1:5].tolist())) >= 2


def _two_acc_problem(n: int, cpu_only: int = -1, params: tuple[int, ...] = ()) -> Problem:
    compute = np.column_stack([np.full(n, 5.0), np.ones(n), np.ones(n)])
    if cpu_only >= 0:
        compute[cpu_only, 1:] = np.inf
    is_param = np.zeros(n, dtype=bool)
    is_param[list(params)] = True
    return Problem(
        names=[f"op{i}" for i in range(n)],
        devices=[ProblemDevice("cpu:0", "cpu"), ProblemDevice("acc:0"), ProblemDevice("acc:1")],
        compute=compute,
        edges=[(i, i + 1) for i in range(n - 1)],
        xfer=np.ones(n),
        link_alpha=np.zeros((3, 3)),
        link_beta=np.ones((3, 3)) - np.eye(3),
        memory=np.zeros(n),
        is_param=is_param,
    )


def test_tf_default_uses_the_first_accelerator_and_cpu_fallback():
    p = _two_acc_problem(4, cpu_only=2)
    assert BASELINES["tf_default"](p).tolist() == [1, 1, 0, 1]


def test_human_puts_parameters_on_the_cpu():
    p = _two_acc_problem(4, params=(0,))
    assert BASELINES["human"](p).tolist() == [0, 1, 1, 1]


def test_round_robin_deals_in_topological_order():
    assert BASELINES["round_robin"](_two_acc_problem(5)).tolist() == [0, 1, 2, 0, 1]


def test_m_topo_gives_each_accelerator_one_contiguous_chunk():
    a = BASELINES["m_topo"](_two_acc_problem(6)).tolist()
    assert a == [1, 1, 1, 2, 2, 2]


def test_the_registry_is_every_placer_module_declaring_one_placer():
    import importlib
    import pkgutil

    import devplace.autoplacer.placers as package

    modules = [m.name for m in pkgutil.iter_modules(package.__path__) if not m.name.startswith("_")]
    declared = {importlib.import_module(f"{package.__name__}.{m}").PLACER.name for m in modules}
    assert declared == set(PLACERS) and len(modules) == len(PLACERS)
    assert ALL == [*PLACERS, "auto"]
    for placer in PLACERS.values():
        assert isinstance(placer, Placer)
        solution = placer.solve(chain(6), _budget(placer.name))  # one shape: a Solution
        assert solution.assignment.shape == (6,) and solution.optimal in (None, True, False)


def test_search_starts_from_exactly_the_portfolio_placers():
    assert set(BASELINES) == {name for name, p in PLACERS.items() if p.portfolio}
    assert set(PORTFOLIO_ORDER) <= set(BASELINES)  # ordering only: it adds nobody
    tried = run_search(random_layered(12, seed=1), budget_s=0.5).skipped
    assert set(tried) <= set(BASELINES)  # skipped ones are portfolio members too


def test_size_limits_live_with_their_placer():
    from devplace.autoplacer.placers import exhaustive as ex
    from devplace.autoplacer.placers import m_etf, m_sct
    from devplace.autoplacer.placers import milp as mi

    assert PLACERS["exhaustive"].max_groups == ex.MAX_EXHAUSTIVE_GROUPS
    assert PLACERS["milp"].max_ops == mi.MAX_MILP_OPS
    assert PLACERS["m_etf"].max_ops == m_etf.MAX_ETF_OPS
    assert PLACERS["m_sct"].max_ops == m_sct.MAX_SCT_OPS
    big = random_layered(ex.MAX_EXHAUSTIVE_GROUPS + 1, seed=0)
    for call in (lambda: exhaustive(big), lambda: PLACERS["exhaustive"](big)):
        with pytest.raises(AutoPlacementError, match="exhaustive is for at most 14 colocation"):
            call()


#: Recorded before the registry and the exact placers were restructured (commit 1809db5):
#: exhaustive's optimum, and the MILP's model value and its assignment's simulated makespan.
BEFORE = [
    (lambda: chain(8), 44.23766942401299, 44.237669424013006, 44.23766942401299),
    (lambda: fork_join(3, 2, seed=1), 34.93409196917903, 33.06320098894454, 40.06157650926059),
    (lambda: random_layered(9, seed=1), 27.363847848123605, 27.363847848123555, 27.363847848123605),
    (lambda: inception_module(0), 58.20043428015729, 54.977012674072874, 66.40689089529124),
]


@pytest.mark.parametrize(("build", "optimum", "milp_value", "milp_makespan"), BEFORE)
def test_exact_placers_give_the_results_they_gave_before(build, optimum, milp_value, milp_makespan):
    p = build()
    found = exhaustive(p)
    assert found.optimal and simulate(p, found.assignment).makespan == pytest.approx(optimum)
    r = milp_placement(p, time_limit=30)
    assert r.optimal and r.value == pytest.approx(milp_value, rel=1e-6)
    assert simulate(p, r.assignment).makespan == pytest.approx(milp_makespan, rel=1e-6)


def test_contiguous_with_an_op_the_cpu_cannot_run_computes_without_nan():
    # op 0 has no CPU kernel: its CPU prefix sum used to be inf, and inf - inf warned
    p = Problem(
        names=["a", "b", "c"],
        devices=[ProblemDevice("gpu", "acc"), ProblemDevice("cpu", "cpu")],
        compute=np.array([[1.0, np.inf], [2.0, 1.0], [3.0, 1.0]]),
        edges=[(0, 1), (1, 2)],
        xfer=np.ones(3),
        link_alpha=np.ones((2, 2)),
        link_beta=np.zeros((2, 2)),
        memory=np.zeros(3),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert contiguous(p).tolist() == [0, 1, 1]


def _textbook_heft(p: Problem) -> np.ndarray:
    """HEFT as Topcuoglu et al. write it, op by op on arrays: upward rank by its recurrence,
    ready times from every placed input, each slot's bookings scanned for the first hole."""
    w = np.where(p.allowed, p.compute, np.nan)
    mean_w = np.nanmean(w, axis=1)
    off = ~np.eye(p.d, dtype=bool)
    c = p.link_alpha[off].mean() + p.link_beta[off].mean() * p.xfer
    rank = np.zeros(p.n)
    for u in reversed(p.topo):
        rank[u] = mean_w[u] + (c[u] + max(rank[v] for v in p.succs[u]) if p.succs[u] else 0.0)
    state = Assigner(p)
    busy: list[list[list[tuple[float, float]]]] = [[[] for _ in range(x.slots)] for x in p.devices]
    finish = np.zeros(p.n)
    for op in np.lexsort((p.topo_index, -rank)).tolist():
        ready = data_ready(p, op, state.assignment, finish)
        best, best_t, best_s, best_lane = -1, np.inf, 0.0, 0
        for dv in np.flatnonzero(state.feasible_mask(op)).tolist():
            length = p.compute[op, dv]
            starts = []
            for lane in busy[dv]:
                t = ready[dv]
                for b0, b1 in sorted(lane):
                    if t + length <= b0:
                        break
                    t = max(t, b1)
                starts.append(t)
            s = min(starts)
            if s + length < best_t:
                best, best_t, best_s, best_lane = dv, s + length, s, starts.index(s)
        state.put(op, best)
        finish[op] = best_t
        if best_t > best_s:
            busy[best][best_lane].append((best_s, best_t))
    return state.result()


@st.composite
def slotted_problems(draw: st.DrawFn) -> Problem:
    """`problems()` with devices of one or two slots, random link latencies too."""
    p = draw(problems(max_ops=12))
    p.devices = [dataclasses.replace(x, slots=draw(st.integers(1, 2))) for x in p.devices]
    p.link_alpha = np.array(
        [[0.0 if i == j else draw(st.integers(0, 3)) for j in range(3)] for i in range(3)]
    )
    return p


@settings(max_examples=60, deadline=None)
@given(slotted_problems())
def test_heft_is_the_textbook_algorithm(p: Problem):
    """HEFT's list loop (ready times per input's arrival row, lanes as gap lists, the
    Assigner's list state) places every op where the plain version does, or fails alike."""
    try:
        expected = _textbook_heft(p)
    except InfeasibleError as err:
        with pytest.raises(InfeasibleError) as raised:
            heft(p)
        assert str(raised.value) == str(err)
        return
    np.testing.assert_array_equal(heft(p), expected)


def _longest_path_problem(n: int, edges: list[tuple[int, int]], seed: int) -> Problem:
    rng = np.random.default_rng(seed)
    compute = rng.uniform(0.0, 10.0, (n, 3))
    compute[rng.random(n) < 0.2, 1] = np.inf
    return Problem(
        names=[f"op{i}" for i in range(n)],
        devices=[ProblemDevice("cpu:0", "cpu"), ProblemDevice("acc:0"), ProblemDevice("acc:1")],
        compute=compute,
        edges=edges,
        xfer=rng.uniform(0.0, 5.0, n),
        link_alpha=np.full((3, 3), 0.5),
        link_beta=np.ones((3, 3)),
        memory=np.zeros(n),
    )


@pytest.mark.parametrize(
    "shape", ["random, shuffled numbering", "random, numbered in order", "one long chain"]
)
def test_lower_bound_and_upward_rank_are_their_recurrences(shape):
    """The block-wise vectorised longest paths give exactly what op by op gives: on random
    DAGs (the scaling benchmark's kind, also numbered out of topological order) and on a
    chain, too deep for the blocks (the op-by-op path)."""
    n = 3000
    rng = np.random.default_rng(1)
    if shape == "one long chain":
        edges = [(i, i + 1) for i in range(n - 1)]
    else:
        edges = [(int(u), v) for v in range(1, n) for u in rng.integers(0, v, size=min(3, v))]
        if shape == "random, shuffled numbering":
            perm = rng.permutation(n)
            edges = [(int(perm[u]), int(perm[v])) for u, v in edges]
    p = _longest_path_problem(n, edges, seed=2)
    assert (p.topo == list(range(n))) == (shape != "random, shuffled numbering")
    fastest = p.min_compute()
    finish = np.zeros(n)
    for v in p.topo:
        finish[v] = max((finish[u] for u in p.preds[v]), default=0.0) + fastest[v]
    slots = sum(x.slots for x in p.devices)
    assert p.lower_bound() == max(finish.max(), fastest.sum() / slots)
    mean_w = np.nanmean(np.where(p.allowed, p.compute, np.nan), axis=1)
    c = mean_comm(p)
    rank = np.zeros(n)
    for u in reversed(p.topo):
        rank[u] = mean_w[u] + (c[u] + max(rank[v] for v in p.succs[u]) if p.succs[u] else 0.0)
    np.testing.assert_array_equal(upward_rank(p), rank)
    blocked = p.longest_paths(lambda ops, m, has: np.where(has, m, 0.0) + fastest[ops])
    if shape == "one long chain":
        assert blocked is None  # PATH_ROUNDS rounds cannot settle a chain of PATH_BLOCK ops
    else:
        np.testing.assert_array_equal(blocked, finish)
