"""Sessions: every option reaches the ConfigProto and does what it says."""

import gc
import inspect
import logging
import os
import pathlib
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from conftest import DEFAULT_DEVICE, GPUS, HAS_GPU, requires_gpu

import devplace as dp
from devplace.adapter.devices import runtime_device

tf = dp.tf


@pytest.mark.parametrize(
    ("kwargs", "check"),
    [
        ({"soft": True}, lambda c: c.allow_soft_placement),
        ({"log_placement": True}, lambda c: c.log_device_placement),
        ({"cpus": 3}, lambda c: c.device_count["CPU"] == 3),
        ({"gpus": 0}, lambda c: c.device_count["GPU"] == 0),
        (
            {"inter": 3},
            lambda c: c.inter_op_parallelism_threads == 3 and c.intra_op_parallelism_threads == 0,
        ),
        (
            {"intra": 5},
            lambda c: c.intra_op_parallelism_threads == 5 and c.inter_op_parallelism_threads == 0,
        ),
        ({"per_session_threads": True}, lambda c: c.use_per_session_threads),
        ({"allow_growth": True}, lambda c: c.gpu_options.allow_growth),
        (
            {"gpu_memory_fraction": 0.4},
            lambda c: abs(c.gpu_options.per_process_gpu_memory_fraction - 0.4) < 1e-9,
        ),
        ({"optimize": False}, lambda c: c.graph_options.rewrite_options.disable_meta_optimizer),
        ({"timeout": 2.5}, lambda c: c.operation_timeout_in_ms == 2500),
    ],
)
@pytest.mark.filterwarnings("ignore::devplace.GpuMemoryOptionsWarning")
def test_each_option_reaches_the_config(kwargs, check):
    sess = dp.Session(**kwargs)
    assert check(sess.config)
    defaults = dp.Session().config
    assert not check(defaults) or kwargs == {"gpus": 0}


def test_raw_config_is_the_base_the_options_apply_to():
    base = tf.ConfigProto(inter_op_parallelism_threads=2, intra_op_parallelism_threads=3)
    sess = dp.Session(config=base, intra=4)
    assert sess.config.inter_op_parallelism_threads == 2
    assert sess.config.intra_op_parallelism_threads == 4
    assert base.intra_op_parallelism_threads == 3  # the caller's proto is not modified


def test_logical_cpu_devices():
    cpus = ["/device:CPU:0", "/device:CPU:1", "/device:CPU:2"]
    assert dp.Session(cpus=3).devices() == cpus + GPUS


def test_gpus_zero_hides_every_gpu():
    assert dp.Session(gpus=0).devices() == ["/device:CPU:0"]


def test_options_at_their_default_leave_the_given_config_alone():
    base = tf.ConfigProto(allow_soft_placement=True, log_device_placement=False)
    base.gpu_options.allow_growth = True
    config = dp.Session(config=base, soft=False, allow_growth=None).config
    assert config.allow_soft_placement and config.gpu_options.allow_growth


def test_the_signature_and_docstring_list_every_option():
    from devplace.adapter.session_options import OPTIONS

    params = inspect.signature(dp.Session).parameters
    for option in OPTIONS:
        assert params[option.name].kind is inspect.Parameter.KEYWORD_ONLY
        assert params[option.name].default == option.default
        assert f"{option.name}={option.default!r} ({option.kind.expected})" in dp.Session.__doc__
    with pytest.raises(TypeError, match="positional"):
        dp.Session(2)


def test_the_docs_show_the_options_table_the_declarations_give():
    from devplace.adapter.session_options import options_table

    docs = pathlib.Path(__file__).parents[1] / "docs" / "placement.md"
    assert options_table() in docs.read_text(encoding="utf-8")


def test_bad_options_are_named_and_the_half_made_session_dies_quietly(capfd):
    with pytest.raises(
        dp.SessionOptionError, match=r"cpus must be an integer from 1 to 1024 .*, got -1"
    ):
        dp.Session(cpus=-1)
    with pytest.raises(TypeError, match="did you mean cpus=2"):
        dp.Session(cpu=2)
    gc.collect()  # the half-made session's __del__ runs quietly
    assert "Exception ignored" not in capfd.readouterr().err


def test_placement_log_is_captured_returned_and_logged(caplog, capfd):
    with dp.cpu(1):
        a = dp.Variable(3.0, name="a")
    c = tf.multiply(a, 4.0, name="c")
    sess = dp.Session(cpus=2, log_placement=True)
    with caplog.at_level(logging.INFO, logger="devplace.placement"):
        a.initializer.run(session=sess)
        assert dp.run(sess, c) == 12.0
    lines = dp.placement_log(sess)
    assert f"a: (VariableV2): {runtime_device('/cpu:1')}" in lines
    assert f"c: (Mul): {runtime_device(DEFAULT_DEVICE)}" in lines
    assert any("c: (Mul)" in r.getMessage() for r in caplog.records)
    assert "c: (Mul)" in capfd.readouterr().err  # echoed for the user to see


def test_placement_log_needs_the_option():
    with pytest.raises(ValueError, match="log_placement=True"):
        dp.placement_log(dp.Session())


def test_int32_variable_pinned_to_a_gpu_is_a_placement_error_naming_op_device_and_hint():
    # With a GPU the book's error (int32 VariableV2 has no GPU kernel); without, no GPU at all.
    with dp.gpu(0):
        i = dp.Variable(3, name="i")
    sess = dp.Session()
    with pytest.raises(dp.DevicePlacementError) as info:
        sess.run(i.initializer)
    err = info.value
    assert isinstance(err, tf.errors.InvalidArgumentError)  # what the book catches
    assert err.op_name == "i"
    assert err.requested == "/device:GPU:0"
    assert err.available == sess.devices() == ["/device:CPU:0", *GPUS]
    reason = "no kernel for that device type" if HAS_GPU else "no GPU"
    assert reason in str(err)
    assert "soft=True" in str(err) and "'i'" in str(err)


def test_missing_logical_device_is_a_placement_error():
    with dp.cpu(5):
        x = dp.constant(1.0, name="x")
    with pytest.raises(dp.DevicePlacementError, match="no such device") as info:
        dp.Session(cpus=2).run(x)
    assert info.value.available == ["/device:CPU:0", "/device:CPU:1", *GPUS]
    assert "soft=True" in str(info.value)


def test_missing_job_with_soft_placement_on_says_what_else_to_do():
    with dp.device("/job:nope/task:0"):
        y = tf.add(dp.constant(1.0), 1.0, name="y")
    with pytest.raises(dp.DevicePlacementError) as info:
        dp.Session(soft=True).run(y)
    message = str(info.value)
    assert "this session has no /job:nope/task:0" in message
    assert "soft=True" not in message
    assert "dp.ClusterSession" in message


def test_soft_placement_runs_the_books_int32_variable_on_the_cpu():
    with dp.gpu(0):
        i = dp.Variable(3, name="i")
    sess = dp.Session(soft=True)
    sess.run(i.initializer)
    assert dp.run(sess, i) == 3
    assert i.device == "/device:GPU:0"  # the request is kept ...
    op = dp.placement(sess, i)["i"]
    assert (op.requested, op.actual, op.moved) == ("/device:GPU:0", "/device:CPU:0", True)


def test_optimize_false_keeps_ops_grappler_would_fold():
    x = tf.multiply(dp.constant(2.0), dp.constant(3.0), name="folded")
    y = tf.add(x, 1.0, name="y")
    optimized = dp.placement(dp.Session(), y)
    faithful = dp.placement(dp.Session(optimize=False), y)
    assert "folded" in optimized.optimized_away
    assert "folded" not in faithful.optimized_away
    assert faithful.actual("folded") == DEFAULT_DEVICE


def test_timeout_bounds_a_blocking_op():
    queue = tf.FIFOQueue(1, tf.float32)
    take = queue.dequeue()
    sess = dp.Session(timeout=0.5)
    start = time.monotonic()
    with pytest.raises(tf.errors.DeadlineExceededError):
        sess.run(take)
    assert time.monotonic() - start < 10


def test_run_returns_python_numbers_and_arrays():
    x = dp.placeholder(tf.float32, [None])
    total = dp.reduce_sum(x)
    sess = dp.Session()
    result = dp.run(sess, {"total": total, "both": [x, total]}, {x: [1.0, 2.0]})
    assert result["total"] == 3.0 and type(result["total"]) is float
    np.testing.assert_array_equal(result["both"][0], [1.0, 2.0])
    assert type(result["both"][1]) is float


def test_init_initialises_variables():
    v = dp.Variable(tf.ones([2]), name="v")
    sess = dp.Session()
    dp.init(sess)
    np.testing.assert_array_equal(dp.run(sess, v), [1.0, 1.0])


def test_op_without_any_kernel_here_is_a_placement_error_without_soft_hint():
    with dp.cpu(0):
        y = tf.raw_ops.InfeedDequeue(dtype=tf.float32, shape=[2], name="infeed")  # TPU only
    with pytest.raises(dp.DevicePlacementError, match="has no kernel for the op on CPU") as info:
        dp.Session(soft=True).run(y)
    assert info.value.op_name == "infeed"
    assert info.value.requested == "/device:CPU:0"
    assert "soft=True" not in str(info.value)


@requires_gpu
def test_a_pinned_op_runs_on_the_gpu_by_the_run_metadata():
    with dp.cpu(0):
        x = dp.constant([1.0, 2.0], name="x")
    with dp.gpu(0):
        y = dp.sin(x, name="y")
    report = dp.placement(dp.Session(optimize=False), y)
    assert report.actual("y") == "/device:GPU:0"
    assert report.actual("x") == "/device:CPU:0"
    assert report.transfer_count >= 1


def run_python(script, env=None):
    """Run `script` in a fresh Python process (GPU memory options are fixed per process)."""
    environment = {k: v for k, v in os.environ.items() if k != "TF_FORCE_GPU_ALLOW_GROWTH"}
    environment.update(env or {})
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        timeout=300,
        env=environment,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


MEMORY_WARNINGS = """
    import warnings
    import devplace as dp

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dp.Session(allow_growth=True)  # the first session fixes the process's options
        dp.Session()  # asks for nothing: no warning
        dp.Session(allow_growth=True)  # agrees: no warning
        dp.Session(allow_growth=False, gpu_memory_fraction=0.5)
        dp.Session(allow_growth=False, gpu_memory_fraction=0.5)  # the same again: no warning
    for w in caught:
        print(w.category.__name__, w.message)
"""


@pytest.mark.slow
def test_gpu_memory_options_a_later_session_cannot_get_warn_once_naming_both():
    lines = run_python(MEMORY_WARNINGS)
    assert len(lines) == 1, lines
    assert lines[0].startswith("GpuMemoryOptionsWarning this Session asks for ")
    assert "asks for allow_growth=False, gpu_memory_fraction=0.5" in lines[0]
    assert "already has allow_growth=True, gpu_memory_fraction=TensorFlow default" in lines[0]
    assert "Hint:" in lines[0]


@pytest.mark.slow
def test_tf_force_gpu_allow_growth_overrides_allow_growth_and_the_warning_says_so():
    script = """
        import warnings
        import devplace as dp

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            dp.Session(allow_growth=False)
        print(*(w.message for w in caught))
    """
    (line,) = run_python(script, {"TF_FORCE_GPU_ALLOW_GROWTH": "true"})
    assert "asks for allow_growth=False" in line
    assert "TF_FORCE_GPU_ALLOW_GROWTH=true overrides allow_growth" in line


GPU_MEMORY = """
    import warnings
    import devplace as dp

    warnings.simplefilter("ignore")
    tf = dp.tf
    for fraction in {fractions}:
        sess = dp.Session(gpu_memory_fraction=fraction, optimize=False)  # nothing folded
    print(next(d.memory_limit_bytes for d in sess.list_devices() if d.device_type == "GPU"))
    with dp.gpu(0):
        block = tf.reduce_sum(tf.zeros([{size} // 4096, 1024]))  # {size} bytes on the GPU
    try:
        sess.run(block)
        print("allocated")
    except tf.errors.ResourceExhaustedError:
        print("out of memory")
"""


@requires_gpu
def test_gpu_memory_fraction_acts_and_is_fixed_by_the_first_session():
    # 5% of the GPU, then a session asking for 10% that allocates 7.5%: TF keeps the 5%.
    limit, outcome = run_python(GPU_MEMORY.format(fractions=(0.05,), size=4096))
    size = int(1.5 * int(limit))
    later = run_python(GPU_MEMORY.format(fractions=(0.05, 0.1), size=size))
    fresh = run_python(GPU_MEMORY.format(fractions=(0.1,), size=size))
    assert outcome == fresh[1] == "allocated"  # the option acts in a fresh process ...
    assert later[1] == "out of memory"  # ... but not after the first session fixed 5%
    assert int(fresh[0]) / int(limit) == pytest.approx(2.0, rel=0.1)


def test_a_session_whose_graph_is_no_longer_the_default_says_so():
    """As after ADCME's `reset_default_graph()`: the old session names the cause and the fix."""
    tf = dp.tf
    with tf.Graph().as_default():
        a = tf.constant(1.0)
        old = dp.Session()
    with tf.Graph().as_default():
        b = tf.constant(2.0)
        with pytest.raises(ValueError, match="no longer the default graph") as err:
            old.run(b)
        assert isinstance(err.value, dp.Error) and "new Session()" in str(err.value)
        assert dp.run(old, a) == 1.0  # its own graph still runs
        with tf.Graph().as_default():
            c = tf.constant(3.0)
        with pytest.raises(ValueError, match="not an element of this graph"):
            dp.Session().run(c)  # a session of the default graph: TensorFlow's own message
