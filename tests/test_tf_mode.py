"""devplace and the rest of a process's TensorFlow: the documented graph-mode switch at
devplace's first use, clear messages when eager code then fails, and TF's load messages sorted
(noise dropped, GPU reasons kept)."""

import os
import subprocess
import sys

import pytest
from conftest import HAS_GPU

import devplace as dp
from devplace.adapter._tf import GPU_MESSAGES, EagerExecutionError


def python(code: str) -> subprocess.CompletedProcess:
    """Run `code` in a fresh interpreter (the mode switch is process-wide)."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_first_use_switches_to_graph_mode_and_eager_calls_say_why():
    done = python(
        "import devplace as dp, tensorflow as tf\n"
        "print(tf.executing_eagerly(), tf.constant(1.0).numpy())\n"
        "sess = dp.Session()\n"
        "print(tf.executing_eagerly())\n"
        "t = tf.constant(2.0)\n"
        "print(hasattr(t, 'numpy'))\n"
        "print(sess.run(t * 3))\n"
        "t.numpy()\n"
    )
    assert done.returncode == 1
    assert done.stdout.split() == ["True", "1.0", "False", "False", "6.0"]
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("devplace.adapter._tf.EagerExecutionError: Const:0 is a graph tensor")
    assert "dp.run(sess, tensor)" in last and "docs/design.md" in last


def test_eager_error_is_a_devplace_error_and_an_attribute_error():
    t = dp.constant(1.0)
    with pytest.raises(EagerExecutionError, match="switched TensorFlow to TF1 graph mode") as err:
        t.numpy()
    assert isinstance(err.value, dp.Error) and isinstance(err.value, AttributeError)
    assert getattr(t, "numpy", None) is None


@pytest.mark.slow
def test_eager_code_run_before_the_switch_gets_a_warning():
    done = python(
        "import warnings, devplace as dp, tensorflow as tf\n"
        "print(tf.constant(1.5).numpy())\n"
        "with warnings.catch_warnings(record=True) as seen:\n"
        "    warnings.simplefilter('always')\n"
        "    dp.constant(1.0)\n"
        "print([str(w.message) for w in seen if w.category is RuntimeWarning])\n"
    )
    assert done.returncode == 0, done.stderr
    first, warned = done.stdout.splitlines()
    assert first == "1.5"
    assert "eager TensorFlow code already ran" in warned and "graph mode" in warned


@pytest.mark.slow
def test_import_prints_no_load_noise():
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    done = subprocess.run(
        [sys.executable, "-c", "import devplace as dp; dp.Session().close()"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    for noise in ("oneDNN", "cpu_feature_guard", "absl::InitializeLog", "cuInit", "cuda drivers"):
        assert noise not in done.stderr


@pytest.mark.skipif(
    HAS_GPU or not dp.tf.test.is_built_with_cuda() or os.path.exists("/proc/driver/nvidia"),
    reason="needs TensorFlow's CUDA build on a machine without an NVIDIA driver",
)
def test_gpu_messages_keep_tensorflows_reason_for_no_gpu():
    assert any("Could not find cuda drivers" in m for m in GPU_MESSAGES), GPU_MESSAGES
    assert not any(m.startswith(("I0000", "E0000")) for m in GPU_MESSAGES)


@pytest.mark.slow
@pytest.mark.parametrize(
    "first_use", ["dp.constant(1.0)", "dp.Session()", "from devplace import tf"]
)
def test_the_eager_code_warning_points_at_the_users_line(tmp_path, first_use):
    script = tmp_path / "user_script.py"
    script.write_text(
        f"import devplace as dp, tensorflow as tf\ntf.constant(1.5).numpy()\n{first_use}\n"
    )
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert f"{script}:3: RuntimeWarning: eager TensorFlow code already ran" in done.stderr
