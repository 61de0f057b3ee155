"""The servers benchmark's own logic: the towers split by hand, and how it judges autoplace
against the best single task (by medians, and round by round)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks/placement"))
import servers  # noqa: E402

from devplace.autoplacer.tf_graph import fetch_closure  # noqa: E402


def test_the_towers_split_by_hand_puts_tower_1_alone_on_task_1():
    graph, fetch, _, _ = servers.GRAPHS["two_tower_mlp"]()
    ops = fetch_closure(fetch, graph)
    on_1 = {op.name for op, d in zip(ops, servers.towers_apart(ops), strict=True) if d == 1}
    # 4 layers of tower 1: weights, biases, their reads, matmul, bias add, relu
    assert len(on_1) == 4 * 7
    assert {op.name for op in ops if op.type == "VariableV2"} & on_1 == {
        f"tower1_l{k}_{p}" for k in range(4) for p in "wb"
    }
    assert not {"x", "add", "y"} & on_1  # the fed input, the join and the head stay with task 0


def _row(label: str, rounds: list[float]) -> dict:
    return {
        "placement": label,
        "measured_us": sorted(rounds)[len(rounds) // 2],
        "measured_rounds_us": rounds,
        "predicted_us": 100.0,
        "assignment": [0] if label.startswith("single") else [1],
    }


def test_autoplace_is_slower_by_median_and_every_round_only_when_it_is():
    rows = [
        _row("single t0", [100.0, 100.0, 100.0]),
        _row("single t1", [90.0, 120.0, 130.0]),
        _row("autoplace (x)", [95.0, 110.0, 120.0]),  # slower by median, not every round
        _row("autoplace verify=2 (y)", [101.0, 105.0, 102.0]),  # slower in every round
    ]
    summary = servers.summary([{"graph": "g", "rows": rows}])["graphs"]["g"]
    assert summary["best_single_us"] == 100.0
    assert summary["autoplace speed-up"] < 1 and summary["autoplace verify=2 speed-up"] < 1
    assert summary["slower every round"] == ["autoplace verify=2"]
