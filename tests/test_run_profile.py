"""run_profile and save_profile: traces written, per-op statistics, and the error paths."""

import json
import threading

import pytest

import devplace as dp
import devplace.facts.profile as profile_module
import devplace.facts.traced as traced

tf = dp.tf


def test_save_profile_without_a_profile_is_an_error(monkeypatch, tmp_path):
    monkeypatch.setattr(profile_module, "_last", None)
    with pytest.raises(profile_module.NoProfileError, match="call run_profile"):
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


def test_two_threads_profiling_at_once_take_turns():
    x = tf.reshape(tf.range(40_000, dtype=tf.float32), [200, 200]) / 40_000
    y = dp.reduce_sum(tf.matmul(x, x), name="y")
    sess = dp.Session()
    expected = dp.run(sess, y)
    results, errors = [], []

    def work():
        try:
            for _ in range(15):
                results.append(dp.run_profile(sess, y, repeat=3, progress=False).values)
        except Exception as err:  # TF's "Another profiling session active" before the lock
            errors.append(err)

    threads = [threading.Thread(target=work) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert not any(t.is_alive() for t in threads)
    assert errors == []
    assert results == pytest.approx([expected] * 30, rel=1e-4)


def test_a_traced_run_that_cannot_get_its_turn_says_what_to_do(monkeypatch):
    monkeypatch.setattr(traced, "TRACE_WAIT_S", 0.05)
    y = dp.constant(1.0)
    with traced._TRACE_LOCK:  # another thread's traced run, never finishing
        with pytest.raises(
            traced.TraceBusyError, match="another thread .* profile from one thread"
        ):
            dp.run_profile(dp.Session(), y)


def test_a_failed_save_leaves_the_previous_trace_whole(tmp_path, monkeypatch):
    sess = dp.Session()
    path = tmp_path / "keep.json"
    dp.save_profile(path, dp.run_profile(sess, dp.constant(1.0, name="first")))
    before = path.read_text()
    profile = dp.run_profile(sess, dp.constant(2.0, name="second"))

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(json, "dump", full_disk)
    with pytest.raises(OSError, match="keep.json.*No space left on device"):
        dp.save_profile(path, profile)
    assert path.read_text() == before
    assert [p.name for p in tmp_path.iterdir()] == ["keep.json"]


def test_report_exports_are_replaced_whole_or_not_at_all(tmp_path):
    with dp.cpu(1):
        y = dp.sin(dp.constant(1.0), name="y")
    report = dp.placement(dp.Session(cpus=2, optimize=False), y)
    report.to_json(tmp_path / "p.json")
    report.to_csv(tmp_path / "p.csv")
    assert json.loads((tmp_path / "p.json").read_text())["ops"]
    with pytest.raises(OSError, match="nowhere.*does not exist"):
        report.to_csv(tmp_path / "nowhere" / "p.csv")
