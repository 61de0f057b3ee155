"""Calibration of profiles against their measured untraced steps, and verify's rule for
trusting a measured candidate over the predicted-best single device."""

from __future__ import annotations

import numpy as np
import pytest

from devplace.autoplacer import AutoPlacementError, DeviceProfiles, Problem, ProblemDevice
from devplace.autoplacer.calibration import calibrate
from devplace.autoplacer.placers.single import all_on
from devplace.autoplacer.simulator import simulate
from devplace.autoplacer.verify import VERIFY_ROUNDS, decide, verify_rounds

T0, T1 = "/job:w/replica:0/task:0/device:CPU:0", "/job:w/replica:0/task:1/device:CPU:0"
OPS = {"a": 10.0, "b": 30.0, "c": 20.0}


def _profiles(step: float | None, shared: bool = True) -> DeviceProfiles:
    ops = {name: {"us": us, "type": "Op"} for name, us in OPS.items()}
    return DeviceProfiles(
        {T0: ops} if shared else {T0: ops, T1: ops},
        shared={T1: T0} if shared else None,
        steps=None if step is None else {T0: step},
    )


def _chain(step_cost: float = 100.0) -> Problem:
    """a -> b -> c on two one-slot tasks, the profiled times on both."""
    return Problem(
        names=list(OPS),
        devices=[ProblemDevice(T0, "cpu", host="/job:w/task:0"), ProblemDevice(T1, "cpu")],
        compute=np.array([[us, us] for us in OPS.values()]),
        edges=[(0, 1), (1, 2)],
        xfer=np.zeros(3),
        link_alpha=np.zeros((2, 2)),
        link_beta=np.zeros((2, 2)),
        memory=np.zeros(3),
        step_cost=step_cost,
    )


@pytest.mark.parametrize("step, offset", [(190.0, 10.0), (130.0, -10.0), (160.0, 0.0)])
def test_each_op_gets_the_offset_that_makes_the_single_step_the_measured_one(step, offset):
    # one task runs a, b, c in turn: 100 fixed + 60 of ops, + 3 offsets = the measured step
    problem = calibrate(_chain(), _profiles(step))
    assert problem.op_offsets == {
        T0: pytest.approx(offset, abs=0.01),
        T1: pytest.approx(offset, abs=0.01),
    }
    np.testing.assert_allclose(problem.compute, _chain().compute + offset, atol=1e-3)
    assert simulate(problem, [0, 0, 0]).makespan == pytest.approx(step, abs=0.05)


def test_a_slow_profile_is_scaled_below_the_offset_floor_and_no_op_costs_less_than_nothing():
    # the offset floor: minus the 10th percentile of the times (10, 20, 30 on both) = -10
    # 135 = 100 fixed + 35 of ops: o = -25 / 3 is above the floor, an offset alone
    problem = calibrate(_chain(), _profiles(135.0))
    assert problem.op_offsets[T0] == pytest.approx(-25 / 3, abs=0.01)
    assert problem.op_scales[T0] == 1.0
    # 115 = 100 fixed + 15 of ops: below the floor, so offset -10 and a scale s with
    # max(10s - 10, 0) + (30s - 10) + (20s - 10) = 15: s = 0.7 (a at 0, not below)
    slow = calibrate(_chain(), _profiles(115.0))
    assert slow.op_offsets[T0] == pytest.approx(-10.0)
    assert slow.op_scales == {T0: pytest.approx(0.7, abs=1e-3), T1: pytest.approx(0.7, abs=1e-3)}
    np.testing.assert_allclose(slow.compute[:, 0], [0.0, 11.0, 4.0], atol=0.01)
    assert simulate(slow, [0, 0, 0]).makespan == pytest.approx(115.0, abs=0.05)
    # a step faster than the fixed costs alone: every op free, the fixed costs lowered to fit
    free = calibrate(_chain(), _profiles(50.0))
    assert np.all(free.compute == 0.0) and free.step_cost == pytest.approx(50.0)
    assert simulate(free, [0, 0, 0]).makespan == pytest.approx(50.0)


def test_without_a_measured_step_nothing_changes():
    problem = _chain()
    assert calibrate(problem, None) is problem
    assert calibrate(problem, _profiles(None)) is problem
    # a profile of its own for T1 without a step: only T0's column is calibrated
    own = DeviceProfiles({T0: {"a": {"us": 1.0}}, T1: {"a": {"us": 1.0}}}, steps={T0: 190.0})
    out = calibrate(problem, own)
    assert set(out.op_offsets) == {T0}
    np.testing.assert_array_equal(out.compute[:, 1], problem.compute[:, 1])


def test_steps_are_checked_and_saved(tmp_path):
    with pytest.raises(AutoPlacementError, match="steps names devices without a profile"):
        DeviceProfiles({T0: {}}, steps={T1: 5.0})
    with pytest.raises(AutoPlacementError, match="step time of .* must be a number"):
        DeviceProfiles({T0: {}}, steps={T0: 0.0})
    path = _profiles(190.0).save(tmp_path / "p.json")
    loaded = DeviceProfiles.load(path)
    assert loaded.steps == {T0: 190.0} and loaded.shared == {T1: T0}


def test_the_single_device_baseline_is_the_one_all_on_builds():
    # calibration matches the placement autoplace scores as "single:<device>"
    problem = calibrate(_chain(), _profiles(190.0))
    assert simulate(problem, all_on(problem, [0])).makespan == pytest.approx(190.0, abs=0.05)


def test_a_candidate_replaces_the_incumbent_only_on_significant_evidence():
    rounds = {
        "single": [100.0] * 5,
        "lucky": [60.0, 70.0, 130.0, 65.0, 120.0],  # best median, slower twice
        "steady": [90.0, 95.0, 99.0, 97.0, 96.0],  # faster in 5 of 5: chance 1/32
    }
    chosen, chance = decide(rounds, "single")
    assert chosen == "steady"
    assert chance["steady"] == pytest.approx(1 / 32)
    assert chance["lucky"] == pytest.approx(16 / 32)  # at least 3 of 5 by chance
    del rounds["steady"]
    assert decide(rounds, "single")[0] == "single"
    rounds["fast"], rounds["faster"] = [80.0] * 5, [70.0, 75.0, 90.0, 71.0, 72.0]
    assert decide(rounds, "single")[0] == "faster"  # least median among those
    # medians within TIE (5%) of the least are alike: the first in order wins, not the noise
    alike = {"single": [100.0] * 5, "pick": [72.0, 73.0, 71.0, 74.0, 72.5], "other": [70.0] * 5}
    assert decide(alike, "single")[0] == "pick"
    alike["other"] = [68.0] * 5  # 72.5 > 68 x 1.05: measured faster, not noise
    assert decide(alike, "single")[0] == "other"
    assert decide({"single": [1.0]}, "single") == ("single", {})
    # 7 of 8 rounds faster is evidence too (chance 9/256), 6 of 8 is not (37/256)
    assert decide({"single": [10.0] * 8, "c": [9.0] * 7 + [11.0]}, "single")[0] == "c"
    assert decide({"single": [10.0] * 8, "c": [9.0] * 6 + [11.0] * 2}, "single")[0] == "single"


def test_verify_measures_more_rounds_only_while_the_evidence_is_open():
    times = {0: iter([100.0] * 11), 1: iter([90.0, 110.0] + [90.0] * 9), 2: iter([200.0] * 11)}
    placements = {"single": [0], "split": [1], "slow": [2]}
    verdict = verify_rounds(placements, lambda a: next(times[a[0]]), "single")
    # after 5 rounds "split" won 4 of 5 (not yet evidence); one more win makes 5 of 6, not
    # yet (chance 7/64); 7 of 8 is (9/256)
    assert len(verdict.rounds["single"]) == 8
    assert verdict.chosen == "split"
    assert verdict.spread == pytest.approx(1.0)  # median over the three placements
    assert verdict.reason.startswith("verify (8 interleaved rounds, spread 1.00x): chose split")
    steady = {0: iter([100.0] * 5), 1: iter([120.0] * 5)}
    kept = verify_rounds({"single": [0], "b": [1]}, lambda a: next(steady[a[0]]), "single")
    assert len(kept.rounds["single"]) == VERIFY_ROUNDS and kept.chosen == "single"
    assert "kept single (100 µs median); no candidate was faster" in kept.reason
    slow = {0: iter([20_000.0] * 5), 1: iter([25_000.0] * 5)}  # durations as formatting writes them
    kept = verify_rounds({"single": [0], "b": [1]}, lambda a: next(slow[a[0]]), "single")
    assert "kept single (20 ms median); no candidate was faster" in kept.reason


def test_verify_rounds_of_labels_sharing_a_placement_stay_in_step():
    # auto's pick is often one of the single devices: two labels, one assignment, measured
    # once per round; more rounds (the evidence open, as above) keep every label's count equal
    times = {0: iter([100.0] * 11), 1: iter([90.0, 110.0] + [90.0] * 9)}
    placements = {"single": [0], "auto": [0], "split": [1]}
    verdict = verify_rounds(placements, lambda a: next(times[a[0]]), "single")
    assert {len(t) for t in verdict.rounds.values()} == {8}
    assert verdict.rounds["auto"] == verdict.rounds["single"]
    assert verdict.chosen == "split"


def test_what_a_step_spends_outside_its_ops_stays_out_of_the_ops_times():
    # a, b, c (60 µs) on T0; the untraced step 190 µs, its ops' traced span 70 µs: the step
    # spends 120 µs outside its ops, 20 µs beyond the 100 µs fixed cost. That goes into the
    # fixed cost (a split does not shrink it), and the ops get the offset that fits the rest
    # (60 + 3 offsets = 70): 10/3 each, where without the span they took all 30 µs.
    def profiles(span: float | None) -> DeviceProfiles:
        ops = {name: {"us": us, "type": "Op"} for name, us in OPS.items()}
        spans = None if span is None else {T0: span}
        return DeviceProfiles({T0: ops}, shared={T1: T0}, steps={T0: 190.0}, spans=spans)

    problem = calibrate(_chain(), profiles(70.0))
    assert problem.step_cost == pytest.approx(120.0)
    assert problem.op_offsets[T0] == pytest.approx(10 / 3, abs=0.01)
    assert simulate(problem, [0, 0, 0]).makespan == pytest.approx(190.0, abs=0.05)
    without = calibrate(_chain(), profiles(None))
    assert without.step_cost == 100.0 and without.op_offsets[T0] == pytest.approx(10.0, abs=0.01)
    # a span longer than the step less its fixed costs leaves the fixed cost as it was
    assert calibrate(_chain(), profiles(150.0)).step_cost == 100.0


def test_spans_are_checked_and_saved(tmp_path):
    with pytest.raises(AutoPlacementError, match="spans names devices without a profile"):
        DeviceProfiles({T0: {}}, spans={T1: 5.0})
    with pytest.raises(AutoPlacementError, match=r"span of .* must be a number of µs >= 0"):
        DeviceProfiles({T0: {}}, spans={T0: -1.0})
    saved = DeviceProfiles({T0: {}}, steps={T0: 9.0}, spans={T0: 7.0}).save(tmp_path / "p.json")
    assert DeviceProfiles.load(saved).spans == {T0: 7.0}
