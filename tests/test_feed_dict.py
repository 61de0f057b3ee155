"""`feed_dict=`, as TF1 programs spell it, wherever devplace takes `feed=`; both at once is an
error naming them."""

import inspect

import numpy as np
import pytest

import devplace as dp

tf = dp.tf

#: Every public function that feeds placeholders, and a call of it after `(sess, fetches)`.
FEEDING = ["run", "run_profile", "placement", "tensorboard", "profile_devices", "autoplace"]


@pytest.fixture
def doubled():
    """`y = 2 x` for a fed `x`, and a session."""
    x = dp.placeholder(tf.float32, [3], name="x")
    return x, 2.0 * x, dp.Session()


@pytest.mark.parametrize("name", FEEDING)
def test_every_feeding_function_shows_feed_dict_in_its_signature(name):
    parameters = inspect.signature(getattr(dp, name)).parameters
    assert "feed" in parameters and parameters["feed_dict"].default is None


def test_run_and_run_profile_compute_with_feed_dict(doubled):
    x, y, sess = doubled
    value = np.array([1.0, 2.0, 3.0], np.float32)
    np.testing.assert_array_equal(dp.run(sess, y, feed_dict={x: value}), 2 * value)
    profile = dp.run_profile(sess, y, feed_dict={x: value}, repeat=2)
    np.testing.assert_array_equal(profile.values, 2 * value)
    assert profile.runs == 2


def test_placement_and_tensorboard_run_the_fed_graph(doubled, tmp_path):
    x, y, sess = doubled
    report = dp.placement(sess, y, feed_dict={x: [1.0, 2.0, 3.0]})
    assert y.op.name in report.table()
    log = dp.tensorboard(sess, y, tmp_path / "tb", feed_dict={x: [1.0, 2.0, 3.0]})
    np.testing.assert_array_equal(log.run.values, [2.0, 4.0, 6.0])


def test_profile_devices_and_autoplace_feed_the_session(doubled):
    x, y, sess = doubled
    feed = {x: [1.0, 2.0, 3.0]}
    profiles = dp.profile_devices(sess, y, ["/cpu:0"], feed_dict=feed, repeat=1)
    assert y.op.name in profiles.profiles["/device:CPU:0"]
    p = dp.autoplace(y, ["/cpu:0"], session=sess, feed_dict=feed, verify=1, runs=2)
    assert set(p.devices.values()) == {"/device:CPU:0"} and p.measured


def test_fed_placeholders_are_not_reported_as_optimized_away():
    x = dp.placeholder(tf.float32, [], name="X")
    training = dp.placeholder(tf.bool, [], name="training")
    hidden = 3.0 * x  # fed too: its own op does not run
    y = tf.where(training, hidden, -hidden)
    report = dp.placement(dp.Session(), y, feed_dict={x: 2.0, training: True, hidden: 5.0})
    assert report.optimized_away == []
    # fed ops show as the feeds that took their place, marked fed; X, not needed, not at all
    assert {op.name for op in report.ops if op.fed} == {"training", "mul"}
    assert "X" not in {op.name for op in report.ops}
    with pytest.raises(KeyError, match="no op named 'X' ran"):
        report.actual("X")


def test_an_unfed_placeholder_still_fails_as_in_tensorflow(doubled):
    _, y, sess = doubled
    with pytest.raises(tf.errors.InvalidArgumentError, match="x"):
        dp.run(sess, y, feed_dict=None)


@pytest.mark.parametrize("as_positional", [True, False])
def test_feed_and_feed_dict_at_once_is_an_error_naming_both(doubled, as_positional):
    x, y, sess = doubled
    feed = {x: [1.0, 2.0, 3.0]}
    args = (sess, y, feed) if as_positional else (sess, y)
    kwargs = {} if as_positional else {"feed": feed}
    with pytest.raises(TypeError, match=r"run_profile: feed_dict must be left out when feed") as e:
        dp.run_profile(*args, **kwargs, feed_dict=feed)
    assert isinstance(e.value, dp.Error) and "Hint" in str(e.value)
