"""A normal run prints none of TensorFlow's C++ log, in Python and in Julia; errors still carry
TensorFlow's words, the placement log and GPU diagnosis still work, and `DEVPLACE_TF_LOG=1`
shows the raw log.

Each case runs in a fresh process (TensorFlow loads once per process, and what it prints while
loading is the point), with the environment of a user who set neither `TF_CPP_MIN_LOG_LEVEL`
nor `DEVPLACE_TF_LOG`.
"""

import ast
import os
import re
import subprocess
import sys

import pytest
from conftest import GPUS, HAS_GPU
from julia_runner import REPO, TRANSPORTS, run_julia

# absl's prefix ("I0000 00:00:1795461485.725425    6349 profiler_session.cc:117] "), its
# pre-InitializeLog banner, and cpu_feature_guard's unprefixed second line.
TF_LOG = re.compile(
    r"^[IWEF]\d{4} \d\d:\d\d:[\d.]+ +\d+ \S+:\d+\] "
    r"|absl::InitializeLog|^To enable the following instructions",
    re.MULTILINE,
)

# The import order that used to load TensorFlow before devplace could quiet it: a name whose
# module imports TensorFlow internals, taken first.
PROFILE_SCRIPT = """
from devplace import run_profile, save_profile
import devplace as dp

with dp.cpu(0):
    a = dp.constant(2.0)
    b = a * 3.0
sess = dp.Session()
profile = run_profile(sess, b, repeat=3)
print("value", profile.values, "runs", len(profile.step_times_us))
save_profile({path!r})
logged = dp.Session(log_placement=True)
logged.run(b)
print("placement", len(dp.placement_log(logged)))
"""


def user_env(**extra: str) -> dict[str, str]:
    """The environment of a user who set nothing about TensorFlow's log."""
    env = {
        k: v for k, v in os.environ.items() if k not in ("TF_CPP_MIN_LOG_LEVEL", "DEVPLACE_TF_LOG")
    }
    return env | extra


def python(args: list[str], **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=user_env(**extra),
    )


def tf_log(done: subprocess.CompletedProcess) -> list[str]:
    """TensorFlow's log lines on the process's stdout and stderr."""
    return [line for line in (done.stdout + "\n" + done.stderr).splitlines() if TF_LOG.search(line)]


def test_only_devplace_tf_imports_tensorflow():
    # A module importing TensorFlow when it loads may load it before devplace.adapter._tf can
    # quiet it (the demo printed 58 lines that way): TF internals come from devplace.adapter._tf.
    # Imports inside functions run after their module's imports, devplace.adapter._tf among them.
    package = REPO / "python" / "devplace"
    direct = []
    for path in sorted(package.rglob("*.py")):
        if path == package / "adapter" / "_tf.py":
            continue
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            names = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            if any(name.split(".")[0] == "tensorflow" for name in names):
                direct.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert direct == [], "import these from devplace.adapter._tf instead"


@pytest.mark.slow
def test_devplace_demo_prints_no_tensorflow_log(tmp_path):
    done = python(["-m", "devplace", "demo", "--out", str(tmp_path / "demo"), "--repeat", "1"])
    assert done.returncode == 0, done.stderr
    assert tf_log(done) == []
    assert "cross-device transfers" in done.stdout
    assert (tmp_path / "demo" / "colocate.png").stat().st_size > 0


@pytest.mark.slow
def test_script_with_run_profile_prints_no_tensorflow_log_and_keeps_the_placement_log(tmp_path):
    trace = tmp_path / "timeline.json"
    done = python(["-c", PROFILE_SCRIPT.format(path=str(trace))])
    assert done.returncode == 0, done.stderr
    assert tf_log(done) == []
    assert "value 6.0 runs 3" in done.stdout
    assert trace.stat().st_size > 0
    # log_placement still captures TF's placement lines, and echoes them (the log asked for).
    assert "placement 3" in done.stdout
    assert re.search(r"^mul: \(Mul\): /job:localhost/\S+/device:CPU:0$", done.stderr, re.M)


@pytest.mark.slow
def test_devplace_tf_log_shows_tensorflows_raw_log(tmp_path):
    done = python(["-c", PROFILE_SCRIPT.format(path=str(tmp_path / "t.json"))], DEVPLACE_TF_LOG="1")
    assert done.returncode == 0, done.stderr
    lines = tf_log(done)
    assert any("absl::InitializeLog" in line for line in lines), done.stderr
    # TF's profiler says so at each of the three traced runs.
    assert sum("Profiler session started" in line for line in lines) >= 3, done.stderr


CHECK_NUMERICS_SCRIPT = """
import sys, numpy as np, devplace as dp
tf = dp.tf
with dp.device({device!r}):
    x = dp.placeholder(tf.float32, [2])
    checked = tf.debugging.check_numerics(x, "x is bad")
with dp.cpu(0):
    said = tf.print("printed by a run", output_stream=sys.stderr)
sess = dp.Session()
sess.run(said)
print("after that run", file=sys.stderr)
dp.run(sess, checked, {{x: np.array([1.0, np.nan])}})
"""


@pytest.mark.slow
@pytest.mark.parametrize("level", [None, "0"], ids=["default", "TF_CPP_MIN_LOG_LEVEL=0"])
@pytest.mark.parametrize("device", ["/device:CPU:0", *GPUS])
def test_a_failing_check_numerics_prints_only_the_error(device, level):
    # On a GPU, TF's kernel logs `E0000 ... abnormal_detected_host ...` as it fails; a failed
    # step logs `Local rendezvous is aborting` (WARNING, shown at level 0). Both are held
    # back; the exception keeps TF's words, and what a run prints itself still comes out.
    extra = {"TF_CPP_MIN_LOG_LEVEL": level} if level else {}
    done = python(["-c", CHECK_NUMERICS_SCRIPT.format(device=device)], **extra)
    assert done.returncode == 1
    assert tf_log(done) == []
    assert "abnormal_detected_host" not in done.stderr
    assert "rendezvous" not in done.stderr
    assert "InvalidArgumentError" in done.stderr
    assert "x is bad : Tensor had NaN values" in done.stderr
    assert done.stderr.index("printed by a run") < done.stderr.index("after that run")


@pytest.mark.slow
@pytest.mark.skipif(HAS_GPU, reason="checks the no-GPU diagnosis; this machine has a GPU")
def test_gpu_diagnosis_still_quotes_tensorflow():
    done = python(["-m", "devplace", "devices"])
    assert done.returncode == 0, done.stderr
    assert tf_log(done) == []
    assert "no GPU:" in done.stdout
    # TensorFlow's own words, without its log prefix (what it says depends on the build).
    if "CPU-only build" not in done.stdout:
        assert "TensorFlow: " in done.stdout, done.stdout


JULIA_QUIET = """
using DevPlace
println(stderr, "julia's stderr before")
sess = Session()
println(run(sess, constant(1.0) + 1))
run_profile(sess, constant(2.0) * 3)
println(stderr, "julia's stderr after")
"""


@pytest.mark.slow
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_julia_session_prints_no_tensorflow_log_and_keeps_julias_stderr(monkeypatch, transport):
    for name in ("TF_CPP_MIN_LOG_LEVEL", "DEVPLACE_TF_LOG"):
        monkeypatch.delenv(name, raising=False)
    done = run_julia(["-e", JULIA_QUIET], cwd=REPO, timeout=300, transport=transport)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "2.0"
    assert tf_log(done) == []
    assert done.stderr.splitlines() == ["julia's stderr before", "julia's stderr after"]


THREADS_SCRIPT = """
import sys, threading, numpy as np, devplace as dp
tf = dp.tf
x = dp.placeholder(tf.float32, [2])
checked = tf.debugging.check_numerics(x, "x is bad")
y = tf.multiply(dp.constant(3.0), 2.0, name="y")
quiet, logged = dp.Session(), dp.Session(log_placement=True)

def steps(sess):
    for _ in range(100):
        try:
            sess.run(checked, {x: np.array([1.0, np.nan])})
        except tf.errors.InvalidArgumentError:
            pass
        assert sess.run(y) == 6.0

threads = [threading.Thread(target=steps, args=(s,)) for s in (quiet, logged, quiet)]
for t in threads:
    t.start()
for t in threads:
    t.join(120)
print("logged", sorted(line.split(":")[0] for line in dp.placement_log(logged)))
print("stderr still goes to the console", file=sys.stderr)
"""


@pytest.mark.slow
def test_sessions_in_threads_keep_the_log_off_and_the_placement_log_on():
    # Quiet runs share one redirection of fd 2; a log_placement run captures inside it, so
    # whichever ends first, each puts back what it found.
    done = python(["-c", THREADS_SCRIPT], TF_CPP_MIN_LOG_LEVEL="0")
    assert done.returncode == 0, done.stderr
    assert tf_log(done) == []
    logged = ast.literal_eval(done.stdout.splitlines()[-1].removeprefix("logged "))
    assert {"CheckNumerics", "Placeholder", "y"} <= set(logged)
    assert done.stderr.splitlines()[-1] == "stderr still goes to the console"
