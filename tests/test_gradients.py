"""Gradients: values, and colocation checked against the devices that actually ran them."""

import numpy as np
import pytest
from conftest import DEFAULT_DEVICE

import devplace as dp

tf = dp.tf


def forward_on_two_devices():
    """The seeds' graph on logical devices: a, b = sin(a) on CPU:1; c = cos(b) on CPU:0."""
    with dp.cpu(1):
        a = dp.Variable(1.0, name="a")
        b = dp.sin(a, name="b")
    with dp.cpu(0):
        c = dp.cos(b, name="c")
    return a, b, c


def grad_ops(report, prefix):
    return {op.name: op.actual for op in report.ops if op.name.startswith(prefix)}


@pytest.mark.parametrize("colocate", [True, False])
def test_seed_gradient_value_and_devices(colocate):
    a, b, c = forward_on_two_devices()
    g = dp.gradients(c, a, colocate=colocate)
    sess = dp.Session(cpus=2, optimize=False)
    dp.init(sess)
    assert dp.run(sess, g) == pytest.approx(-np.sin(np.sin(1.0)) * np.cos(1.0), rel=1e-6)
    report = dp.placement(sess, g + c)
    prefix = g.op.name.split("/")[0] + "/"
    ran = grad_ops(report, prefix)
    sin_grad = [name for name in ran if name.startswith(prefix + "b_grad/")]
    assert sin_grad, ran
    # Uncolocated gradient ops carry no device request: they run on the default device.
    expected = "/device:CPU:1" if colocate else DEFAULT_DEVICE
    assert {ran[name] for name in sin_grad} == {expected}


def test_colocated_gradients_move_fewer_bytes_across_devices():
    a, b, c = forward_on_two_devices()
    counts = {}
    for colocate in (True, False):
        g = dp.gradients(c, a, colocate=colocate)
        sess = dp.Session(cpus=2, optimize=False)
        dp.init(sess)
        counts[colocate] = dp.placement(sess, g).transfer_count
    assert counts[True] != counts[False]


def test_list_of_xs_gives_a_list():
    x = dp.Variable(2.0)
    y = dp.Variable(3.0)
    gx, gy = dp.gradients(x * y, [x, y])
    sess = dp.Session()
    dp.init(sess)
    assert dp.run(sess, [gx, gy]) == [3.0, 2.0]


def test_jacobian_of_vector_output_with_colocation():
    with dp.cpu(1):
        x = dp.Variable([1.0, 2.0, 3.0], name="x")
        y = tf.multiply(x, x, name="y")  # dy_i/dx_j = 2 x_i delta_ij
    with dp.cpu(0):
        z = tf.identity(y, name="z")
    jac = dp.gradients(z, x, colocate=True)
    assert jac.shape.as_list() == [3, 3]
    sess = dp.Session(cpus=2, optimize=False)
    dp.init(sess)
    np.testing.assert_allclose(dp.run(sess, jac), np.diag([2.0, 4.0, 6.0]))
    report = dp.placement(sess, jac)
    mul_grads = [op for op in report.ops if "y_grad" in op.name and op.op_type == "Mul"]
    assert mul_grads and {op.actual for op in mul_grads} == {"/device:CPU:1"}


def test_jacobian_needs_static_shape():
    x = dp.placeholder(tf.float32, [None])
    with pytest.raises(ValueError, match="a tensor of static shape for a Jacobian"):
        dp.gradients(x * 2.0, x)


def test_colocate_must_be_boolean():
    x = dp.Variable(1.0)
    with pytest.raises(TypeError, match="colocate must be True or False, got 'yes'"):
        dp.gradients(x, x, colocate="yes")
