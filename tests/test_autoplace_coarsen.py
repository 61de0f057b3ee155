"""Coarsening: chains and feeders merged into units, branches kept apart, and `auto` placing
the units of a four-branch graph as the best 2-way grouping."""

from __future__ import annotations

import numpy as np

from devplace.autoplacer import Problem, ProblemDevice, simulate, strategies
from devplace.autoplacer.coarsen import can_merge, coarsen, units
from devplace.autoplacer.strategies import Choice, choose


def branches(depths: list[int], groups: list[int] | None = None) -> Problem:
    """An input op, one chain per branch (each layer: a cheap weight feeding a 1000 µs op),
    and a join; on two one-slot devices of two hosts with a 50 µs link."""
    names, edges, times = ["x"], [], [1.0]
    ends = []
    for b, depth in enumerate(depths):
        prev = 0
        for k in range(depth):
            names += [f"b{b}/w{k}", f"b{b}/op{k}"]
            w, op = len(names) - 2, len(names) - 1
            times += [0.0, 1000.0]
            edges += [(w, op), (prev, op)]
            prev = op
        ends.append(prev)
    names.append("join")
    times.append(1.0)
    edges += [(e, len(names) - 1) for e in ends]
    n = len(names)
    devices = [ProblemDevice(f"/job:w/task:{i}/device:CPU:0", "cpu", host=f"t{i}") for i in (0, 1)]
    return Problem(
        names=names,
        devices=devices,
        compute=np.array([[t, t] for t in times]),
        edges=edges,
        xfer=np.ones(n),
        link_alpha=np.full((2, 2), 50.0) - np.diag([50.0, 50.0]),
        link_beta=np.zeros((2, 2)),
        memory=np.zeros(n),
        groups=None if groups is None else np.array(groups),
        master_host="t0",
    )


def test_each_branch_is_one_unit_and_fan_in_and_fan_out_stay_apart():
    problem = branches([3, 2])
    label = units(problem)
    by_name = dict(zip(problem.names, label.tolist(), strict=True))
    assert len(set(label.tolist())) == 4  # x, two branches, the join
    assert {by_name[x] for x in problem.names if x.startswith("b0/")} == {by_name["b0/op0"]}
    assert {by_name[x] for x in problem.names if x.startswith("b1/")} == {by_name["b1/op0"]}
    assert len({by_name["x"], by_name["b0/op0"], by_name["b1/op0"], by_name["join"]}) == 4


def test_costly_source_branches_stay_apart_and_colocation_groups_stay_whole():
    # two chains fed by nothing (sources) into one join: sources, but too costly to be feeders
    problem = branches([2, 2])
    sources = Problem(**{**_fields(problem), "edges": [e for e in problem.edges if e[0] != 0]})
    assert len(set(units(sources).tolist())) == 4  # x alone, two branches, the join
    groups = list(range(problem.n))
    groups[problem.names.index("join")] = groups[problem.names.index("x")]  # colocated
    coloc = branches([2, 2], groups=groups)
    label = units(coloc)
    assert label[coloc.names.index("join")] == label[coloc.names.index("x")]


def _fields(problem: Problem) -> dict:
    keys = ("names", "devices", "compute", "edges", "xfer", "link_alpha", "link_beta", "memory")
    return {k: getattr(problem, k) for k in keys}


def test_auto_places_the_units_of_four_unequal_branches_as_the_best_grouping():
    problem = branches([9, 7, 6, 5])
    coarse = coarsen(problem)
    assert len(set(coarse.groups.tolist())) == 6
    choice = choose(problem, "auto", 0.8)
    a = choice.assignment
    side = {b: int(a[problem.names.index(f"b{b}/op0")]) for b in range(4)}
    assert side[0] == side[3] != side[1] == side[2]  # 9 + 5 against 7 + 6 layers
    # every op of a branch with its branch
    for b in range(4):
        assert {int(a[i]) for i, x in enumerate(problem.names) if x.startswith(f"b{b}/")} == {
            side[b]
        }
    assert simulate(problem, a).makespan < 14 * 1000 + 200
    assert choice.placer.endswith(" on units")  # found on the units, kept over the ops' search


def test_coarsening_is_skipped_only_where_it_would_merge_nothing():
    assert can_merge(branches([3, 2]))  # feeders (weights) to start from
    problem = branches([3, 2])
    fan = Problem(**{**_fields(problem), "edges": [(0, v) for v in range(1, problem.n)]})
    assert not can_merge(fan)  # one fan-out: no chain, no feeder
    assert len(set(units(fan).tolist())) == fan.n
    groups = np.arange(fan.n)
    groups[1] = 0
    assert can_merge(Problem(**{**_fields(fan), "groups": groups}))  # a colocation group


def test_auto_keeps_its_other_result_as_the_runner_up(monkeypatch):
    problem = branches([3, 2])
    n = problem.n
    # the units' search splits the branches; the ops' search puts everything on task 0, which
    # is slower: the units' result wins, the ops' is the runner-up
    split = np.array([0] * 7 + [1] * 4 + [0])
    results = iter(
        [Choice(split, "search (from heft)"), Choice(np.zeros(n, dtype=np.int64), "search")]
    )
    monkeypatch.setattr(strategies, "_auto", lambda *a, **k: next(results))
    choice = strategies.choose(problem, "auto", 0.5)
    assert choice.placer == "search (from heft) on units"
    assert choice.runner_up is not None and choice.runner_up[0] == "search"
    np.testing.assert_array_equal(choice.assignment, split)
    assert not choice.runner_up[1].any()


def test_verify_measures_both_of_autos_results_also_when_one_device_is_the_pick():
    from devplace.autoplacer import api

    problem = branches([3, 2])
    on_units = np.array([0] * 7 + [1] * 4 + [0])  # the branches apart: the units' optimum
    on_ops = on_units.copy()
    on_ops[1:3] = 1
    choice = Choice(on_units, "exhaustive on units", runner_up=("search", on_ops))
    singles = api._singles(problem)
    first = next(iter(singles))
    # a noisy profile made one device the predicted best: it is the pick, yet the units'
    # exact solution and the ops' result are measured against it, right after the pick
    measured = api._to_verify(problem, singles[first], first, 1, choice, singles)
    assert list(measured)[:3] == [first, "exhaustive on units", "search"]
    np.testing.assert_array_equal(measured["exhaustive on units"], on_units)
    np.testing.assert_array_equal(measured["search"], on_ops)
    assert set(singles) < set(measured)


def test_near_groupings_move_or_swap_one_unit_and_come_fastest_first():
    from devplace.autoplacer.strategies import near_groupings

    problem = branches([3, 3, 2, 2])
    labels = units(problem)
    # branches 0+2 | 1+3 (5000 µs a side); x and the join with branch 0's side
    pick = np.array([0] + [0] * 6 + [1] * 6 + [0] * 4 + [1] * 4 + [0])
    assert len(set(labels.tolist())) == 6 and simulate(problem, pick).makespan < 6000
    near = near_groupings(problem, pick, count=50)
    times = [simulate(problem, a).makespan for a in near]
    assert times == sorted(times) and len(near) == len({a.tobytes() for a in near})
    for a in near:
        moved = {int(u) for u in labels[a != pick]}
        assert 1 <= len(moved) <= 2  # one unit moved, or two swapped
        assert all(len(set(a[labels == u].tolist())) == 1 for u in moved)  # units whole
    # the other balanced grouping (0+3 | 1+2) is one swap away, predicted as fast as the pick
    swapped = pick.copy()
    swapped[labels == labels[13]], swapped[labels == labels[17]] = 1, 0
    assert any(np.array_equal(a, swapped) for a in near)
    assert simulate(problem, swapped).makespan == simulate(problem, pick).makespan
    assert len(near_groupings(problem, pick)) == 2  # NEAR by default: the two fastest
    assert [simulate(problem, a).makespan for a in near_groupings(problem, pick)] == times[:2]
    split = pick.copy()
    split[1] = 1  # a branch split: not a grouping of the units
    assert near_groupings(problem, split) == []
