"""run_profile(repeat=N): medians over N traced runs, the median run's trace, a progress bar."""

import math
import statistics

import pytest
from trace_builders import two_device_graph

import devplace as dp
from devplace.facts.trace import read_trace


def test_step_time_is_the_median_and_the_trace_is_the_median_run():
    z = two_device_graph(shape=(50, 50))
    sess = dp.Session(cpus=2, optimize=False)
    prof = dp.run_profile(sess, z, repeat=7, progress=False)
    assert len(prof.step_times_us) == 7
    assert prof.step_time_us == statistics.median(prof.step_times_us)
    # the kept metadata (and so the saved trace) is the run with the median step time
    assert prof.run.step_time_us == sorted(prof.step_times_us)[3]
    assert read_trace(prof.trace).makespan_us == prof.run.step_time_us
    assert read_trace(prof.trace).devices == ["/device:CPU:0", "/device:CPU:1"]
    assert set(prof.op_stats) >= {"y", "z"}
    assert prof.op_stats["y"].device == "/device:CPU:1"
    assert prof.values == pytest.approx(2500 * math.sin(1.0), rel=1e-5)


def test_progress_bar_shows_when_asked_and_not_otherwise(capsys):
    z = two_device_graph(shape=(50, 50))
    sess = dp.Session(cpus=2, optimize=False)
    dp.run_profile(sess, z, repeat=3, progress=True)
    err = capsys.readouterr().err
    assert "run_profile" in err and "3/3" in err
    dp.run_profile(sess, z, repeat=3, progress=False)
    assert "run_profile" not in capsys.readouterr().err
