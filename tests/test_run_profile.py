"""run_profile and save_profile: traces written, per-op statistics, and the error paths."""

import json

import pytest

import devplace as dp
import devplace.profile as profile_module

tf = dp.tf


def test_save_profile_without_a_profile_is_an_error(monkeypatch, tmp_path):
    monkeypatch.setattr(profile_module, "_last", None)
    with pytest.raises(RuntimeError, match="call run_profile"):
        dp.save_profile(tmp_path / "x.json")


def test_profile_is_a_chrome_trace_of_the_devices_used(tmp_path):
    with dp.cpu(1):
        a = dp.Variable(1.0, name="a")
        b = dp.sin(a, name="b")
    with dp.cpu(0):
        c = dp.cos(b, name="c")
    sess = dp.Session(cpus=2, optimize=False)
    dp.init(sess)
    prof = dp.run_profile(sess, c)
    assert prof.values == pytest.approx(0.6663667453928805)
    path = dp.save_profile(tmp_path / "true.json")
    trace = json.loads(open(path).read())
    names = {
        e["args"]["name"]
        for e in trace["traceEvents"]
        if e.get("ph") == "M" and e.get("name") == "process_name"
    }
    assert any("device:CPU:0 Compute" in n for n in names)
    assert any("device:CPU:1 Compute" in n for n in names)
    assert prof.op_stats["b"].device == "/device:CPU:1"
    assert prof.op_stats["c"].device == "/device:CPU:0"
    assert prof.op_stats["b"].op_type == "Sin"


def test_repeat_keeps_medians_over_runs():
    x = tf.random.normal([200, 200], seed=3)
    y = tf.matmul(x, x, name="y")
    sess = dp.Session()
    prof = dp.run_profile(sess, y, repeat=5, progress=False)
    assert prof.runs == 5 and len(prof.step_times_us) == 5
    assert prof.op_stats["y"].output_bytes == 200 * 200 * 4
    assert prof.op_stats["y"].duration_us > 0
    assert min(prof.step_times_us) <= prof.step_time_us <= max(prof.step_times_us)


@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
def test_repeat_must_be_positive(bad):
    with pytest.raises(ValueError, match="repeat must be a positive integer"):
        dp.run_profile(dp.Session(), dp.constant(1.0), repeat=bad)
