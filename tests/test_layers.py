"""Batch normalisation: values, its update ops, and binding them to the training op."""

import numpy as np
import pytest

import devplace as dp

tf = dp.tf
rng = np.random.default_rng(1)
BATCH = rng.normal(3.0, 2.0, size=(32, 4)).astype(np.float32)


def test_training_mode_normalises_with_batch_statistics():
    x = dp.placeholder(tf.float32, [None, 4])
    y = dp.bn(x, training=True)
    sess = dp.Session()
    dp.init(sess)
    out = dp.run(sess, y, {x: BATCH})
    expected = (BATCH - BATCH.mean(0)) / np.sqrt(BATCH.var(0) + 1e-3)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)


def test_updates_are_registered_and_move_the_averages():
    x = dp.placeholder(tf.float32, [None, 4])
    y = dp.batch_norm(x, training=True, momentum=0.9)
    updates = dp.get_collection(dp.UPDATE_OPS)
    assert [op.type for op in updates] == ["AssignSub", "AssignSub"]
    loss = dp.reduce_sum(y)
    train = dp.with_updates(tf.train.GradientDescentOptimizer(0.0).minimize(loss))
    sess = dp.Session()
    dp.init(sess)
    dp.run(sess, train, {x: BATCH})
    mean = next(v for v in tf.global_variables() if "moving_mean" in v.name)
    np.testing.assert_allclose(dp.run(sess, mean), 0.1 * BATCH.mean(0), rtol=1e-4)


def test_inference_mode_uses_moving_statistics():
    x = dp.placeholder(tf.float32, [None, 4])
    y = dp.bn(x, training=False, center=False, scale=False)
    sess = dp.Session()
    dp.init(sess)
    np.testing.assert_allclose(dp.run(sess, y, {x: BATCH}), BATCH / np.sqrt(1 + 1e-3), rtol=1e-5)


def test_training_flag_may_be_a_tensor():
    x = dp.placeholder(tf.float32, [None, 4])
    training = dp.placeholder(tf.bool, [])
    y = dp.bn(x, training=training)
    sess = dp.Session()
    dp.init(sess)
    train_out = dp.run(sess, y, {x: BATCH, training: True})
    infer_out = dp.run(sess, y, {x: BATCH, training: False})
    assert abs(train_out.mean()) < 1e-4
    assert infer_out.mean() > 1.0


def test_seed_pattern_updates_on_the_cpu_bound_to_train_op():
    x = dp.placeholder(tf.float32, [None, 4])
    with dp.device(dp.assign_to_device("/device:CPU:1", ps_device="/device:CPU:0")):
        y = dp.bn(x)
        loss = dp.reduce_sum(dp.square(y))
        train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
    with dp.cpu(0):
        update_ops = dp.get_collection(tf.GraphKeys.UPDATE_OPS)
        step = dp.with_updates(train, update_ops)
    sess = dp.Session(cpus=2, optimize=False)
    dp.init(sess)
    report = dp.placement(sess, step, {x: BATCH})
    assert {report.actual(op.name) for op in update_ops} == {"/device:CPU:0"}
    assert report.actual("batch_norm/batchnorm/mul") == "/device:CPU:1"


def test_unknown_channel_count_is_an_error():
    x = dp.placeholder(tf.float32, [None, None])
    with pytest.raises(ValueError, match="known size along axis -1") as info:
        dp.bn(x)
    assert "Placeholder" in str(info.value) and "Hint:" in str(info.value)


@pytest.mark.parametrize(
    "x, axis, fragment",
    [
        (1.0, -1, "x must be a tensor with a batch axis and a channel axis"),
        ([1.0, 2.0], -1, r"rank >= 2"),
        ([[1.0, 2.0]], 2, "axis must be from -2 to 1 for x of rank 2, got 2"),
    ],
)
def test_inputs_without_batch_and_channel_axes_are_named(x, axis, fragment):
    with pytest.raises(ValueError, match=fragment) as info:
        dp.bn(x, axis=axis)
    assert isinstance(info.value, dp.Error) and "Hint:" in str(info.value)


def test_momentum_outside_zero_to_one_is_named():
    with pytest.raises(ValueError, match=r"momentum must be in \[0, 1\), got 1.5"):
        dp.bn(dp.placeholder(tf.float32, [None, 4]), momentum=1.5)
