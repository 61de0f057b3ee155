"""Julia's and ADCME's rules in `devplace.bridge.julia_semantics`, checked against numpy.

DevPlace.jl sends these functions Julia's arguments (1-based index specs, `dims` from 1); the
expected values here are numpy's answer to the same question, written with numpy's own indexing
(never with the module under test). The Julia suite (`julia/DevPlace/test/indexing.jl`) checks
the same rules end to end from Julia.
"""

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import devplace as dp
from devplace.bridge import julia_semantics as js

tf = dp.tf


def value(t):
    """The value of a tensor, from a session on the current default graph."""
    with tf.Session() as sess:
        return sess.run(t)


def positions(spec, size):
    """The 0-based positions a Julia index spec selects, in numpy's words; None: dropped."""
    kind = spec[0]
    if kind == "i":
        return spec[1] - 1
    if kind == "c":
        return np.arange(size)
    if kind == "r":
        first, last, step = spec[1:]
        return np.arange(first, last + (1 if step > 0 else -1), step) - 1
    if kind == "v":
        return np.asarray(spec[1]) - 1
    return np.flatnonzero(spec[1])


def numpy_getindex(a, specs):
    """Julia's `a[specs...]`: the outer product of each dimension's positions, integers dropped."""
    picked = [np.atleast_1d(positions(s, n)) for s, n in zip(specs, a.shape, strict=True)]
    out = a[np.ix_(*picked)]
    dropped = tuple(d for d, s in enumerate(specs) if s[0] == "i")
    return out.reshape([n for d, n in enumerate(out.shape) if d not in dropped])


@st.composite
def index_for(draw, size):
    """A Julia index into a dimension of `size`, always in range."""
    kind = draw(st.sampled_from("icrvm"))
    if kind == "i":
        return ("i", draw(st.integers(1, size)))
    if kind == "c":
        return ("c",)
    if kind == "r":
        a, b = draw(st.integers(1, size)), draw(st.integers(1, size))
        step = draw(st.sampled_from([1, 2, -1, -2]))
        return ("r", a, b, step)
    if kind == "v":
        return ("v", np.array(draw(st.lists(st.integers(1, size), max_size=4)), dtype=np.int64))
    return ("m", np.array(draw(st.lists(st.booleans(), min_size=size, max_size=size))))


@st.composite
def array_and_index(draw):
    shape = draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
    a = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    return a, tuple(draw(index_for(n)) for n in shape)


@settings(max_examples=60, deadline=None)
@given(array_and_index())
def test_getindex_selects_what_julia_selects(case):
    a, specs = case
    with tf.Graph().as_default():
        got = value(js.getindex(tf.constant(a), specs))
    np.testing.assert_array_equal(got, numpy_getindex(a, specs))


def test_tensor_indices_count_from_one():
    a = np.array([1.0, 2.0, 3.0, 4.0])
    m = np.array([[11.0, 12.0, 13.0], [21.0, 22.0, 23.0]])
    t, tm = tf.constant(a), tf.constant(m)
    assert value(js.getindex(t, [("o", tf.constant(2))])) == a[1]
    np.testing.assert_array_equal(value(js.getindex(tm, [("o", tf.constant(1)), ("c",)])), m[0])
    np.testing.assert_array_equal(
        value(js.getindex(t, [("o", tf.constant([4, 1], dtype=tf.int32))])), a[[3, 0]]
    )
    np.testing.assert_array_equal(
        value(js.getindex(tm, [("c",), ("o", tf.constant([True, False, True]))])), m[:, [0, 2]]
    )
    with pytest.raises(tf.errors.InvalidArgumentError, match="4-element tensor.*size"):
        value(js.getindex(t, [("o", tf.constant(5))]))
    with pytest.raises(TypeError, match="integers or Bools"):
        js.getindex(t, [("o", tf.constant(1.0))])


def test_one_index_into_a_matrix_selects_rows_and_colon_is_column_major():
    m = np.arange(6.0).reshape(2, 3)
    tm = tf.constant(m)
    np.testing.assert_array_equal(value(js.getindex(tm, [("i", 2)])), m[1])
    np.testing.assert_array_equal(value(js.getindex(tm, [("v", np.array([2, 1]))])), m[[1, 0]])
    np.testing.assert_array_equal(value(js.getindex(tm, [("c",)])), m.ravel(order="F"))
    assert (
        js.lastindex(tm, 1, 1) == 2 and js.lastindex(tm, 2, 2) == 3 and js.lastindex(tm, 3, 3) == 1
    )


@pytest.mark.parametrize(
    ("specs", "index", "dim", "size"),
    [
        ([("i", 0)], 0, 1, 3),
        ([("i", 4)], 4, 1, 3),
        ([("r", 2, 5, 1)], 5, 1, 3),
        ([("r", 0, 2, 1)], 0, 1, 3),
        ([("r", 4, 1, -1)], 4, 1, 3),
        ([("v", np.array([1, 7]))], 7, 1, 3),
    ],
)
def test_out_of_range_is_an_index_error_naming_index_and_size(specs, index, dim, size):
    with pytest.raises(IndexError) as err:
        js.getindex(tf.constant([1.0, 2.0, 3.0]), specs)
    assert f"at index {index} in dimension {dim}, which has size {size}" in str(err.value)
    assert "3-element tensor" in str(err.value)


def test_masks_and_unknown_sizes_are_checked_too():
    with pytest.raises(IndexError, match="Bool mask of length 2"):
        js.getindex(tf.constant([1.0, 2.0, 3.0]), [("m", np.array([True, False]))])
    x = tf.placeholder(tf.float64, shape=[None])
    picked = js.getindex(x, [("r", 2, 3, 1)])
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(picked, {x: [1.0, 2.0, 3.0]}), [2.0, 3.0])
        with pytest.raises(tf.errors.InvalidArgumentError, match="at index 2:3 in dimension 1"):
            sess.run(picked, {x: [1.0, 2.0]})


def test_python_sequences_are_never_wrapped_or_clamped():
    assert js.getindex([5, 6, 7], [("i", 3)]) == 7
    assert js.getindex([5, 6, 7], [("r", 2, 3, 1)]) == [6, 7]
    for specs in ([("i", 0)], [("i", 4)], [("r", 2, 4, 1)]):
        with pytest.raises(IndexError):
            js.getindex([5, 6, 7], specs)
    assert js.getindex({"a": 1}, [("k", "a")]) == 1


def test_setindex_refuses_a_tensor_clearly():
    with pytest.raises(TypeError, match=r"^setindex!: 2-element tensor 'Const:0'.*scatter_update"):
        js.setindex(tf.constant([1.0, 2.0]), 3.0, [("i", 1)])
    items = [5, 6]
    js.setindex(items, 60, [("i", 2)])
    assert items == [5, 60]


def test_items_refuses_a_tensor_clearly():
    assert js.items((1, 2)) == [1, 2]
    with pytest.raises(TypeError, match=r"^iterate: 2-element tensor 'Const:0'.*Hint"):
        js.items(tf.constant([1.0, 2.0]))


def test_mul_as_adcme():
    a = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    y, z = np.array([2.0, 4.0]), np.array([1.0, 10.0, 100.0])
    np.testing.assert_array_equal(value(js.mul(tf.constant(a), z)), a @ z)
    np.testing.assert_array_equal(value(js.mul(y, tf.constant(y)[None, :])), np.outer(y, y))
    np.testing.assert_array_equal(value(js.mul(tf.constant(z), z)), z * z)
    batch = np.arange(12.0).reshape(2, 2, 3)
    np.testing.assert_array_equal(
        value(js.mul(tf.constant(batch), batch.transpose(0, 2, 1))),
        batch @ batch.transpose(0, 2, 1),
    )
    with pytest.raises(ValueError, match="one row"):
        js.mul(tf.constant(y), a)
    with pytest.raises(ValueError, match="ranks"):
        js.mul(tf.placeholder(tf.float64), a)


def test_solve_as_adcme():
    a = np.array([[4.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 2.0]])
    b = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(value(js.solve(tf.constant(a), b)), np.linalg.solve(a, b))
    rhs = np.array([[1.0, 0.0], [2.0, 1.0], [3.0, 5.0]])
    np.testing.assert_allclose(value(js.solve(a, tf.constant(rhs))), np.linalg.solve(a, rhs))
    tall = np.array([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0]])
    np.testing.assert_allclose(
        value(js.solve(tf.constant(tall), b)), np.linalg.lstsq(tall, b, rcond=None)[0]
    )
    batch = np.stack([a, 2 * a])
    many = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    expected = np.stack([np.linalg.solve(batch[i], many[i]) for i in range(2)])
    np.testing.assert_allclose(value(js.solve(tf.constant(batch), many)), expected)


@pytest.mark.parametrize("reduction", sorted(js.REDUCTIONS))
def test_reductions_drop_dims_as_adcme(reduction):
    a = np.arange(1.0, 25.0).reshape(2, 3, 4)
    numpy = {"sum": np.sum, "prod": np.prod, "maximum": np.max, "minimum": np.min}
    fn = numpy.get(reduction, np.mean)
    for dims in (1, 3, [1, 3], [1, 2, 3]):
        axes = tuple(np.atleast_1d(dims) - 1)
        got = value(js.reduce(reduction, tf.constant(a), dims))
        np.testing.assert_allclose(got, fn(a, axis=axes))
        kept = value(js.reduce(reduction, tf.constant(a), dims, keepdims=True))
        np.testing.assert_allclose(kept, fn(a, axis=axes, keepdims=True))
    past = r"dims must be dimensions from 1 to 3 \(the tensor has 3\), got 4"
    with pytest.raises(ValueError, match=past):
        js.reduce(reduction, tf.constant(a), 4)


def test_reshape_forms_as_adcme():
    a = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(value(js.reshape_rows(tf.constant(a), [3, 2])), a.reshape(3, 2))
    np.testing.assert_array_equal(
        value(js.reshape(tf.constant(a), [3, None])), a.reshape((3, 2), order="F")
    )


def test_adjoint_transposes_each_matrix_of_a_batch():
    c = (np.arange(12.0) + 1j * np.arange(12.0)).reshape(2, 2, 3)
    np.testing.assert_array_equal(value(js.adjoint(tf.constant(c))), c.transpose(0, 2, 1).conj())
    assert value(js.adjoint(tf.constant(2.0))) == 2.0
    np.testing.assert_array_equal(value(js.adjoint(tf.constant([1.0, 2.0]))), [[1.0, 2.0]])


def test_get_collection_matches_names_as_adcme():
    v = tf.Variable(np.ones(10), name="my_collect1")
    w = tf.Variable(np.ones(2), name="other")
    assert js.get_collection("my_collect") == [v]
    assert js.get_collection() == [v, w]
    assert js.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES) == [v, w]
    assert js.get_collection("nothing_like_it") == []


def test_broadcast_lines_up_leading_dimensions_as_julia():
    column = np.arange(3.0)
    matrix = np.ones((3, 3))
    got = value(js.broadcast("+", tf.constant(column), tf.constant(matrix)))
    np.testing.assert_allclose(got, column[:, None] + matrix)


def test_broadcast_falls_back_to_adcmes_trailing_rule_where_only_it_fits():
    # ADCME's own test/optim.jl adds a 10-vector to a 20x30x10 array (tf.add's rule).
    vector = np.arange(10.0)
    block = np.ones((2, 3, 10))
    got = value(js.broadcast("+", tf.constant(vector), tf.constant(block)))
    np.testing.assert_allclose(got, vector + block)


def test_broadcast_that_fits_neither_way_keeps_tensorflows_error():
    with pytest.raises(ValueError, match="[Dd]imensions must be equal|Incompatible shapes"):
        js.broadcast("+", tf.constant(np.ones(4)), tf.constant(np.ones((2, 3))))


def test_zero_based_is_the_one_rule_for_every_kind_of_julia_index():
    assert js.zero_based(1) == 0 and js.zero_based(np.int32(3)) == 2
    np.testing.assert_array_equal(js.zero_based(np.array([1, 4])), [0, 3])
    np.testing.assert_array_equal(js.zero_based(np.array([True, False, True])), [0, 2])
    assert js.zero_based(0) == -1  # unchecked: the caller knows the size (check_bounds)
    np.testing.assert_array_equal(value(js.zero_based(tf.constant([1, 3]))), [0, 2])
    np.testing.assert_array_equal(value(js.zero_based(tf.constant([False, True]))), [1])
    with pytest.raises(TypeError, match="integers or Bools"):
        js.zero_based(tf.constant([1.0]))
    with pytest.raises(TypeError, match="integers or Bools"):
        js.zero_based(np.array([1.5]))


@pytest.mark.parametrize(
    ("dims", "axis"), [(1, 0), (3, 2), ((1, 3), [0, 2]), ([2], [1]), (np.array([1, 2]), [0, 1])]
)
def test_axes_turns_dims_from_one_into_axis_from_zero(dims, axis):
    assert js.axes("sum", dims, 3) == axis


@pytest.mark.parametrize(
    ("dims", "error", "text"),
    [
        (0, ValueError, "sum: dims must be dimensions from 1 to 3 (the tensor has 3), got 0"),
        (-1, ValueError, "got -1"),
        (4, ValueError, "got 4"),
        ((1, 4), ValueError, "got (1, 4)"),
        (True, TypeError, "sum: dims must be a dimension or a tuple of dimensions"),
        ((1, True), TypeError, "a dimension or a tuple of dimensions"),
        ("1", TypeError, "got '1'"),
    ],
)
def test_bad_dims_are_one_clear_error_whatever_the_function(dims, error, text):
    with pytest.raises(error) as caught:
        js.axes("sum", dims, 3)
    assert text in str(caught.value) and "Hint: sum(x; dims=1)" in str(caught.value)
    assert isinstance(caught.value, dp.Error)
    # the same check, the same words, for a reduction and a TensorFlow function given `dims`
    a = tf.constant(np.ones((2, 3, 4)))
    for call in (
        lambda d: js.reduce("sum", a, d),
        lambda d: js.call_with_dims("sum", tf.reduce_sum, a, dims=d),
    ):
        with pytest.raises(error, match=re.escape(text)):
            call(dims)


def test_call_with_dims_refuses_axis_and_knows_a_new_dimension():
    a = tf.constant(np.ones((2, 3)))
    with pytest.raises(ValueError, match="not TensorFlow's `axis`"):
        js.call_with_dims("softmax", tf.nn.softmax, a, axis=0)
    assert js.call_with_dims("stack", tf.stack, [a, a], dims=3).shape.as_list() == [2, 3, 2]
    with pytest.raises(ValueError, match=r"from 1 to 2 \(the tensor has 2\), got 3"):
        js.call_with_dims("concat", tf.concat, [a, a], dims=3)
