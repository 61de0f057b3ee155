"""The shared simulator: hand-computed schedules and properties on random DAGs."""

from __future__ import annotations

import ast
import itertools
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from devplace.autoplacer import AutoPlacementError, Problem, ProblemDevice, simulate
from devplace.autoplacer.graph import link_time


def make(
    n: int,
    edges: list[tuple[int, int]],
    times: list[list[float]],
    devices: list[ProblemDevice] | None = None,
    xfer: list[float] | None = None,
    beta: float = 1.0,
    **kw: object,
) -> Problem:
    devices = devices or [ProblemDevice(f"acc:{i}") for i in range(len(times[0]))]
    d = len(devices)
    b = np.full((d, d), beta)
    np.fill_diagonal(b, 0.0)
    return Problem(
        names=[f"op{i}" for i in range(n)],
        devices=devices,
        compute=np.array(times, dtype=float),
        edges=edges,
        xfer=np.array(xfer if xfer is not None else [1.0] * n),
        link_alpha=np.zeros((d, d)),
        link_beta=b,
        memory=kw.pop("memory", np.zeros(n)),  # type: ignore[arg-type]
        **kw,  # type: ignore[arg-type]
    )


def test_chain_across_devices_pays_the_transfer():
    p = make(2, [(0, 1)], [[2, 2], [3, 3]], xfer=[5, 0])
    assert simulate(p, [0, 0]).makespan == 5
    s = simulate(p, [0, 1])
    assert s.makespan == 2 + 5 + 3
    assert s.transfers == 1 and s.transfer_time == 5


def test_one_device_runs_one_op_at_a_time():
    p = make(2, [], [[2, 2], [3, 3]])
    assert simulate(p, [0, 0]).makespan == 5
    assert simulate(p, [0, 1]).makespan == 3


def test_ready_first_then_smaller_topological_index():
    # op0 (long) on dev 1 feeds op2; op1 and op3 are ready at 0 on dev 0 with op2 later.
    p = make(4, [(0, 2)], [[9, 4], [1, 1], [1, 1], [2, 2]], xfer=[0, 0, 0, 0])
    s = simulate(p, [1, 0, 0, 0])
    assert s.start[1] == 0 and s.start[3] == 1  # both ready at 0: index order
    assert s.start[2] == 4  # ready at 4, device free at 3


def test_tensor_sent_once_per_destination_device():
    p = make(3, [(0, 1), (0, 2)], [[1, 1]] * 3, xfer=[4, 0, 0])
    s = simulate(p, [0, 1, 1])
    assert s.transfers == 1
    assert s.start[1] == 5 and s.finish[2] == 7


def test_serial_channel_queues_transfers_from_one_device():
    # op0 and op1 on dev 0 each send 4 units to op2 on dev 1.
    edges = [(0, 2), (1, 2)]
    times = [[1, 1], [1, 1], [1, 1]]
    serial = make(3, edges, times, xfer=[4, 4, 0], serial_links=True)
    free = make(3, edges, times, xfer=[4, 4, 0], serial_links=False)
    # op0 ends at 1, sends 1..5; op1 ends at 2, waits for the channel, sends 5..9.
    assert simulate(serial, [0, 0, 1]).start[2] == 9
    assert simulate(free, [0, 0, 1]).start[2] == 6


def test_devices_naming_one_channel_queue_their_transfers_together():
    # op0 on dev 0 and op1 on dev 1 each send 4 units to the other device's op2 / op3.
    edges = [(0, 3), (1, 2)]
    times = [[1, 1]] * 4
    own = [ProblemDevice("acc:0"), ProblemDevice("acc:1")]
    one = [ProblemDevice("acc:0", channel="host"), ProblemDevice("acc:1", channel="host")]
    separate = make(4, edges, times, devices=own, xfer=[4, 4, 0, 0], serial_links=True)
    shared = make(4, edges, times, devices=one, xfer=[4, 4, 0, 0], serial_links=True)
    a = [0, 1, 0, 1]  # both send at t=1
    assert simulate(separate, a).makespan == 6  # 1 + 4 + 1, in parallel
    assert simulate(shared, a).makespan == 10  # the second copy waits for the first
    free = make(4, edges, times, devices=one, xfer=[4, 4, 0, 0], beta=0.0, serial_links=True)
    assert simulate(free, a).makespan == 2  # free copies never wait for the channel


def test_dma_transfers_hold_the_channel_for_alpha_only():
    # op0 and op1 on dev 0 each send 4 units (alpha 1 + 3 bytes' worth) to op2 on dev 1.
    def problem(dma: bool) -> Problem:
        devs = [ProblemDevice("acc:0", dma=dma), ProblemDevice("acc:1", dma=dma)]
        p = make(3, [(0, 2), (1, 2)], [[1, 1]] * 3, devices=devs, xfer=[3, 3, 0])
        p.link_alpha = np.ones((2, 2)) - np.eye(2)
        return p

    # whole hold: op0's copy 1..5, op1's 5..9; alpha only: op1's copy starts at 2, ends at 6
    assert simulate(problem(False), [0, 0, 1]).start[2] == 9
    assert simulate(problem(True), [0, 0, 1]).start[2] == 6
    chain = problem(True)
    assert simulate(chain, [0, 1, 1]).start[2] == 5  # alone, a copy still takes all its time


def test_shared_pool_limits_devices_running_at_once():
    devs = [ProblemDevice("cpu:0", "cpu", pool="cpu"), ProblemDevice("cpu:1", "cpu", pool="cpu")]
    pooled = make(2, [], [[3, 3], [3, 3]], devices=devs, pool_capacity={"cpu": 1})
    assert simulate(pooled, [0, 1]).makespan == 6
    wide = make(2, [], [[3, 3], [3, 3]], devices=devs, pool_capacity={"cpu": 2})
    assert simulate(wide, [0, 1]).makespan == 3


def test_slots_let_one_device_run_ops_together():
    devs = [ProblemDevice("cpu:0", "cpu", slots=2)]
    assert simulate(make(3, [], [[2], [2], [2]], devices=devs), [0, 0, 0]).makespan == 4


def test_memory_resident_and_live_outputs_against_caps():
    devs = [ProblemDevice("acc:0", memory=100), ProblemDevice("acc:1", memory=100)]
    p = make(
        3,
        [(0, 1), (1, 2)],
        [[1, 1]] * 3,
        devices=devs,
        memory=np.array([60.0, 30.0, 0.0]),
        out_bytes=np.array([5.0, 7.0, 0.0]),
    )
    s = simulate(p, [0, 0, 0])
    # Resident 90; at op1's start op0's output (5) and op1's (7) are both live.
    assert s.peak_memory[0] == pytest.approx(90 + 12)
    assert not s.feasible and "acc:0" in s.violations[0]
    s = simulate(p, [0, 1, 1])  # op0's output also lives on acc:1 once received
    assert s.peak_memory[0] == pytest.approx(60 + 5)
    assert s.peak_memory[1] == pytest.approx(30 + 5 + 7)
    assert s.feasible


def test_bad_assignment_names_the_problem():
    p = make(2, [(0, 1)], [[1, np.inf], [1, 1]])
    with pytest.raises(AutoPlacementError, match="op0"):
        simulate(p, [1, 0])
    with pytest.raises(AutoPlacementError, match="device 0..1"):
        simulate(p, [0])
    grouped = make(2, [(0, 1)], [[1, 1], [1, 1]], groups=np.array([7, 7]))
    with pytest.raises(AutoPlacementError, match="colocat"):
        simulate(grouped, [0, 1])


def test_cycle_is_rejected_with_the_ops_named():
    with pytest.raises(AutoPlacementError, match="cycle"):
        make(2, [(0, 1), (1, 0)], [[1], [1]])


@st.composite
def dag_and_assignment(draw: st.DrawFn) -> tuple[Problem, list[int]]:
    n = draw(st.integers(1, 9))
    d = draw(st.integers(1, 3))
    edges = [
        (u, v) for u, v in itertools.combinations(range(n), 2) if draw(st.booleans()) and v - u < 4
    ]
    times = [[draw(st.integers(0, 9)) for _ in range(d)] for _ in range(n)]
    xfer = [draw(st.integers(0, 6)) for _ in range(n)]
    serial = draw(st.booleans())
    p = make(n, edges, times, xfer=xfer, serial_links=serial)
    return p, [draw(st.integers(0, d - 1)) for _ in range(n)]


@settings(max_examples=150, deadline=None)
@given(dag_and_assignment())
def test_schedules_are_valid_and_bounded(case: tuple[Problem, list[int]]):
    p, a = case
    s = simulate(p, a)
    for u, v in p.edges:
        assert s.start[v] >= s.finish[u] + (0 if a[u] == a[v] else p.comm(u, a[u], a[v])) - 1e-9
    for dv in range(p.d):
        spans = sorted((s.start[i], s.finish[i]) for i in range(p.n) if a[i] == dv)
        for (_, end), (begin, _) in itertools.pairwise(spans):
            assert begin >= end - 1e-9
    busy = sum(p.compute[i, a[i]] for i in range(p.n)) + s.transfer_time
    assert p.lower_bound() - 1e-9 <= s.makespan <= busy + 1e-9


def test_another_hosts_devices_start_their_first_op_after_the_start_delay():
    devices = [
        ProblemDevice("m", "cpu", host="t0"),
        ProblemDevice("r", "cpu", host="t1"),
        ProblemDevice("local", "cpu"),  # no host: the client's own process, never held back
    ]
    # three independent ops of 100, one per device
    p = make(3, [], [[100.0] * 3] * 3, devices=devices, master_host="t0", host_start_delay=300.0)
    s = simulate(p, [0, 1, 2])
    assert s.start.tolist() == [0.0, 300.0, 0.0] and s.makespan == 400.0
    assert simulate(p, [0, 0, 2]).makespan == 200.0  # nothing on t1: no delay
    with pytest.raises(AutoPlacementError, match="host_start_delay"):
        make(1, [], [[1.0]], host_start_delay=-1.0)


AUTOPLACER = Path(__file__).resolve().parents[1] / "python/devplace/autoplacer"


def _link_formulas(path: Path) -> list[str]:
    """`alpha + beta * x` written out in a module (a sum with a product of a `beta` name)."""

    def mentions_beta(node: ast.AST) -> bool:
        return "beta" in ast.unparse(node)

    return [
        f"{path.relative_to(AUTOPLACER)}:{node.lineno}"
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Add)
        and any(
            isinstance(side, ast.BinOp) and isinstance(side.op, ast.Mult) and mentions_beta(side)
            for side in (node.left, node.right)
        )
    ]


def test_the_link_formula_is_written_once():
    found = [f for p in sorted(AUTOPLACER.rglob("*.py")) for f in _link_formulas(p)]
    # graph.link_time itself, and HEFT's loop, where a call per op and device would cost
    assert [f.split(":")[0] for f in found] == ["graph.py", "placers/heft.py"], found
    assert link_time(np.array([1.0, 2.0]), 0.5, 4.0).tolist() == [3.0, 4.0]


def test_the_simulator_names_its_event_kinds():
    # no bare -1 or -2 in the simulator but where its named constants are defined
    tree = ast.parse((AUTOPLACER / "simulator.py").read_text())
    named = {
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        and all(isinstance(t, ast.Name) and t.id.isupper() for t in node.targets)
    } | {
        node.body[-1].lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and node.name == "_partition_start"
    }
    bare = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and node.operand.value in (1, 2)
        and node.lineno not in named
    ]
    assert bare == []
