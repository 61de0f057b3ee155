"""Calibration of profiles against their measured untraced steps, and verify's rule for
trusting a measured candidate over the predicted-best single device."""

from __future__ import annotations

import numpy as np
import pytest

from devplace.autoplacer import AutoPlacementError, DeviceProfiles, Problem, ProblemDevice
from devplace.autoplacer.api import faster_every_round
from devplace.autoplacer.calibration import calibrate
from devplace.autoplacer.placers.single import all_on
from devplace.autoplacer.simulator import simulate

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


def test_an_op_never_costs_less_than_nothing():
    # 115 = 100 fixed + 15 of ops: o = -17.5 leaves a at 0 (not -7.5), b at 12.5, c at 2.5
    problem = calibrate(_chain(), _profiles(115.0))
    (offset,) = set(problem.op_offsets.values())
    assert offset == pytest.approx(-17.5, abs=0.01)
    assert problem.compute.min() == 0.0
    assert simulate(problem, [0, 0, 0]).makespan == pytest.approx(115.0, abs=0.05)
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


def test_a_candidate_replaces_the_incumbent_only_when_faster_in_every_round():
    rounds = {
        "single": [100.0, 100.0, 100.0],
        "lucky": [60.0, 70.0, 130.0],  # best median, but slower once
        "steady": [90.0, 95.0, 99.0],
    }
    assert faster_every_round(rounds, "single") == "steady"
    del rounds["steady"]
    assert faster_every_round(rounds, "single") == "single"
    rounds["fast"], rounds["faster"] = [80.0, 80.0, 80.0], [70.0, 75.0, 90.0]
    assert faster_every_round(rounds, "single") == "faster"  # least median among those
    assert faster_every_round({"single": [1.0]}, "single") == "single"
