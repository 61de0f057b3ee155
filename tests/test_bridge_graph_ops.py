"""DevPlace.jl's elementwise ops and constants (`devplace.bridge.graph_ops`) make the graph
TensorFlow's public functions make: the same GraphDef (names, attributes, inputs, devices,
colocation, control inputs) under every scope, the same values and gradients, and the public
function's own errors and ops wherever the direct way does not apply."""

import numpy as np
import pytest

import devplace as dp
from devplace.bridge import graph_ops

tf = dp.tf

FLOATS = [tf.float32, tf.float64]


def graph_def(build):
    """The GraphDef `build()` makes in a fresh graph, and the values of what it returns."""
    g = tf.Graph()
    with g.as_default():
        out = build()
        with tf.Session(graph=g) as sess:
            values = sess.run(out)
    return g.as_graph_def(), values


def under_scopes(make):
    """`make(x, y)` under a name scope, a device function, control dependencies and
    colocation, twice (so unique names are exercised)."""
    devices_seen = []

    def device_fn(op):
        devices_seen.append(op.type)
        return "/device:CPU:0"

    def build():
        x = tf.constant([0.25, 0.5], dtype=tf.float64, name="x")
        y = tf.constant([2.0, 4.0], dtype=tf.float64, name="y")
        dep = tf.no_op(name="dep")
        with tf.name_scope("outer"), tf.device(device_fn), tf.control_dependencies([dep]):
            first = make(x, y)
            with tf.colocate_with(x.op):
                second = make(first, y)
        return second

    gd, values = graph_def(build)
    return gd, values, devices_seen


@pytest.mark.parametrize("name", sorted(graph_ops.UNARY))
@pytest.mark.parametrize("dtype", FLOATS)
def test_each_elementwise_function_makes_the_graph_tfs_own_makes(name, dtype):
    fast = graph_ops.UNARY[name]
    public = getattr(tf, name)

    def build(fn):
        def make():
            x = tf.constant([0.25, 0.5, 0.75], dtype=dtype)
            with tf.name_scope("s"):
                return [fn(x), fn(fn(x))]

        return make

    fast_def, fast_values = graph_def(build(fast))
    public_def, public_values = graph_def(build(public))
    assert fast_def == public_def
    np.testing.assert_array_equal(fast_values, public_values)


@pytest.mark.parametrize("symbol", ["+", "-", "*", "/"])
def test_each_operator_makes_the_graph_tfs_own_makes_under_every_scope(symbol):
    import operator

    python_operator = {"+": operator.add, "-": operator.sub, "*": operator.mul}.get(
        symbol, operator.truediv
    )
    fast = graph_ops.binary(symbol, python_operator)
    fast_def, fast_values, fast_devices = under_scopes(fast)
    public_def, public_values, public_devices = under_scopes(python_operator)
    assert fast_def == public_def
    assert fast_devices == public_devices  # the device function saw the same ops, once each
    nodes = {n.name: n for n in fast_def.node}
    first, second = nodes["outer/" + fast.__name__], nodes["outer/" + fast.__name__ + "_1"]
    assert first.device == "/device:CPU:0"  # colocation sets the device functions aside
    assert "^dep" in first.input
    assert list(second.attr["_class"].list.s) == [b"loc:@x"]
    np.testing.assert_array_equal(fast_values, public_values)


@pytest.mark.parametrize("value", [0.5, -0.0, 0.0, 3, True, float("nan"), 1e300, 2 + 1j])
def test_a_constant_is_the_one_convert_to_tensor_makes(value):
    dtype = tf.complex128 if isinstance(value, complex) else tf.float64
    fast_def, fast_values = graph_def(lambda: [graph_ops.constant(value, dtype) for _ in range(2)])
    public_def, public_values = graph_def(
        lambda: [tf.convert_to_tensor(value, dtype=dtype) for _ in range(2)]
    )
    assert fast_def == public_def
    np.testing.assert_array_equal(fast_values, public_values)  # nan == nan here
    assert np.signbit(np.real(fast_values[0])) == np.signbit(np.real(value))


def test_constants_of_equal_but_different_values_stay_apart():
    with tf.Graph().as_default(), tf.Session() as sess:
        zero, negative_zero = (
            graph_ops.constant(0.0, tf.float64),
            graph_ops.constant(-0.0, tf.float64),
        )
        one, true = graph_ops.constant(1, tf.int64), graph_ops.constant(True, tf.bool)
        assert sess.run([1 / zero, 1 / negative_zero]) == [np.inf, -np.inf]
        assert sess.run([one, true]) == [1, True]


def test_bad_inputs_get_tensorflows_own_errors():
    with tf.Graph().as_default():
        ints = tf.constant([1, 2])
        with pytest.raises(TypeError) as public:
            tf.sin(ints)
        with pytest.raises(TypeError) as fast:
            graph_ops.UNARY["sin"](ints)
        assert str(fast.value) == str(public.value)

        a, b = tf.constant(1.0, tf.float32), tf.constant(1.0, tf.float64)
        with pytest.raises(TypeError) as public:
            a * b
        with pytest.raises(TypeError) as fast:
            graph_ops.binary("*", lambda x, y: x * y)(a, b)
        assert str(fast.value) == str(public.value)

        with pytest.raises(TypeError) as public:
            tf.convert_to_tensor(0.5, dtype=tf.int32)
        with pytest.raises(TypeError) as fast:
            graph_ops.constant(0.5, tf.int32)
        assert str(fast.value) == str(public.value)


def test_where_tensorflow_makes_other_ops_its_own_function_is_called():
    import operator

    with tf.Graph().as_default() as g, tf.Session() as sess:
        z = tf.constant([3 + 4j])
        assert graph_ops.UNARY["abs"](z).op.type == "ComplexAbs"
        assert graph_ops.UNARY["round"](tf.constant([2])).op.type == "Const"  # ints: itself
        quotient = graph_ops.binary("/", operator.truediv)(tf.constant(3), tf.constant(2))
        assert quotient.dtype == tf.float64 and sess.run(quotient) == 1.5  # ints are cast
        v = tf.Variable([0.5], dtype=tf.float64)
        s = graph_ops.UNARY["sin"](v)  # a variable is read first, as tf.sin does
        sess.run(v.initializer)
        np.testing.assert_allclose(sess.run(s), np.sin([0.5]))
        named = graph_ops.UNARY["exp"](tf.constant(1.0), name="mine")
        assert named.op.name == "mine"
        assert len(g.get_operations()) > 0


def test_inside_a_while_loop_the_body_gets_tensorflows_own_ops():
    def body(i, x):
        return i + 1, graph_ops.binary("*", lambda a, b: a * b)(graph_ops.UNARY["cos"](x), x)

    with tf.Graph().as_default(), tf.Session() as sess:
        _, x = tf.while_loop(
            lambda i, x: i < 3, body, [tf.constant(0), tf.constant(0.5, tf.float64)]
        )
        expected = 0.5
        for _ in range(3):
            expected = np.cos(expected) * expected
        np.testing.assert_allclose(sess.run(x), expected)


def test_gradients_flow_through_the_direct_ops():
    with tf.Graph().as_default(), tf.Session() as sess:
        x = tf.constant([0.3, 1.2], dtype=tf.float64)
        y = graph_ops.binary("*", lambda a, b: a * b)(graph_ops.UNARY["sin"](x), x)
        (dy,) = tf.gradients(y, x)
        xs = np.array([0.3, 1.2])
        np.testing.assert_allclose(sess.run(dy), np.cos(xs) * xs + np.sin(xs))
