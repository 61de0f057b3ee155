"""Device scopes and device functions: op.device at build time and the devices actually used."""

import pytest
from conftest import DEFAULT_DEVICE, requires_gpu

import devplace as dp
from devplace.adapter.devices import MAX_INDEX

tf = dp.tf


def test_seed_variable_and_sin_read_as_the_seeds_show():
    with dp.device(dp.assign_to_device("/device:GPU:0")):
        a = dp.Variable(1.0)
        b = dp.sin(a)
    assert a.op.type == "VariableV2"
    assert a.device == "/device:CPU:0"
    assert b.device == "/device:GPU:0"


def test_cpu_and_gpu_scopes_default_to_index_zero():
    with dp.cpu():
        a = dp.constant(1.0)
    with dp.gpu():
        b = dp.constant(1.0)
    with dp.cpu(2):
        c = dp.constant(1.0)
    assert (a.device, b.device, c.device) == ("/device:CPU:0", "/device:GPU:0", "/device:CPU:2")


@pytest.mark.parametrize(
    ("bad", "error"),
    [(-1, dp.DeviceSpecError), (MAX_INDEX + 1, dp.DeviceSpecError), (10**30, dp.DeviceSpecError)]
    + [(bad, TypeError) for bad in (1.5, "0", True, None)],
)
def test_scope_index_must_be_an_integer_up_to_the_stated_maximum(bad, error):
    with pytest.raises(error, match=f"integer index from 0 to {MAX_INDEX}") as raised:
        dp.gpu(bad)
    assert repr(bad) in str(raised.value)  # the input as given, not a device string made of it


def test_inner_scope_wins_and_partial_specs_merge():
    with dp.device("/job:worker/device:GPU:0"):
        with dp.cpu(1):
            a = dp.constant(1.0)
        b = dp.constant(1.0)
    assert a.device == "/job:worker/device:CPU:1"
    assert b.device == "/job:worker/device:GPU:0"


def test_function_scope_inside_string_scope():
    with dp.device("/job:worker"):
        with dp.device(dp.assign_to_device("/device:GPU:1", "/device:CPU:0")):
            v = dp.Variable(1.0)
            s = dp.sin(v)
    assert v.device == "/job:worker/device:CPU:0"
    assert s.device == "/job:worker/device:GPU:1"


def test_none_clears_the_enclosing_scope():
    with dp.gpu(0):
        with dp.device(None):
            a = dp.constant(1.0)
    assert a.device == ""


def test_malformed_scope_string_fails_when_the_scope_opens():
    with pytest.raises(dp.DeviceSpecError, match="'/gpu:x'"):
        with dp.device("/gpu:x"):
            pass


def test_device_function_returning_garbage_names_op_and_function():
    def broken(op):
        return "/gpu:first"

    with pytest.raises(dp.DeviceSpecError, match=r"broken returned it for op 'c'"):
        with dp.device(broken):
            dp.constant(1.0, name="c")


def test_tf_device_accepts_plain_functions():
    with tf.device(lambda op: "/cpu:0"):
        a = dp.constant(1.0)
    assert a.device == "/cpu:0"


def test_ps_ops_cover_variable_like_ops():
    for op_type in (
        "Variable",
        "VariableV2",
        "AutoReloadVariable",
        "VarHandleOp",
        "MutableHashTableV2",
    ):
        assert op_type in dp.PS_OPS


def test_assign_to_device_sees_resource_variables_too():
    with dp.device(dp.assign_to_device("/device:CPU:1")):
        v = tf.get_variable("r", [2], use_resource=True)
        w = v * 2.0
    assert v.op.type == "VarHandleOp"
    assert v.op.device == "/device:CPU:0"
    assert w.device == "/device:CPU:1"


def test_assign_to_device_accepts_node_defs_like_the_seed_function():
    fn = dp.assign_to_device("/gpu:0", "/cpu:0")
    node = tf.NodeDef(name="v", op="VariableV2")
    assert fn(node) == "/device:CPU:0"
    assert fn(tf.NodeDef(name="s", op="Sin")) == "/device:GPU:0"


def test_variables_on_cpu_is_the_books_function():
    with dp.device(dp.variables_on_cpu):
        a = dp.Variable(3.0)
        b = dp.constant(4.0)
        c = a * b
    assert (a.device, b.device, c.device) == ("/device:CPU:0", "/device:GPU:0", "/device:GPU:0")


def test_by_op_type_places_by_type_and_runs_there():
    with dp.device(dp.by_op_type({"VariableV2": "/cpu:1", "Mul": "/cpu:2"})):
        a = dp.Variable(3.0, name="a")
        c = tf.multiply(a, 4.0, name="c")
        d = tf.add(c, 1.0, name="d")
    assert d.device == ""
    sess = dp.Session(cpus=3)
    dp.init(sess)
    report = dp.placement(sess, d)
    assert report.actual("a") == "/device:CPU:1"
    assert report.actual("c") == "/device:CPU:2"
    assert report.actual("d") == DEFAULT_DEVICE
    assert dp.run(sess, d) == 13.0


def test_by_op_type_needs_a_mapping():
    with pytest.raises(TypeError, match="by_op_type: placements must be a dict") as info:
        dp.by_op_type("MatMul")
    assert "'MatMul'" in str(info.value) and "Hint:" in str(info.value)


def test_round_robin_cycles_variables_and_leaves_other_ops():
    with dp.cpu(0):
        with dp.device(dp.round_robin(["/cpu:1", "/cpu:2"])):
            vs = [dp.Variable(float(i), name=f"v{i}") for i in range(4)]
            total = tf.add_n(vs, name="total")
    assert [v.device for v in vs] == ["/device:CPU:1", "/device:CPU:2"] * 2
    assert total.device == "/device:CPU:0"
    sess = dp.Session(cpus=3)
    dp.init(sess)
    report = dp.placement(sess, total)
    assert [report.actual(f"v{i}") for i in range(4)] == ["/device:CPU:1", "/device:CPU:2"] * 2
    assert dp.run(sess, total) == 6.0


def test_round_robin_needs_devices():
    with pytest.raises(ValueError, match="round_robin: devices must be at least one device"):
        dp.round_robin([])


def test_greedy_by_bytes_balances_variable_bytes():
    greedy = dp.greedy_by_bytes(["/cpu:0", "/cpu:1"])
    with dp.device(greedy):
        big = dp.Variable(tf.zeros([1000]), name="big")  # 4000 bytes
        small = [dp.Variable(tf.zeros([10]), name=f"s{i}") for i in range(3)]
    assert big.device == "/device:CPU:0"
    assert [s.device for s in small] == ["/device:CPU:1"] * 3
    assert greedy.load == {"/device:CPU:0": 4000, "/device:CPU:1": 120}


@requires_gpu
def test_variables_on_cpu_runs_the_rest_on_the_gpu():
    with dp.device(dp.variables_on_cpu):
        a = dp.Variable(3.0, name="a")
        c = tf.multiply(a, 4.0, name="c")
    sess = dp.Session(optimize=False)
    dp.init(sess)
    report = dp.placement(sess, c)
    assert report.actual("a") == "/device:CPU:0"
    assert report.actual("c") == "/device:GPU:0"
    assert dp.run(sess, c) == 12.0
