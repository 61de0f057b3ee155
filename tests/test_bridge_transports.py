"""DevPlace.jl's two transports chosen and refused for real: Python in Julia's own process where it
can serve, the host process with one line saying why where it cannot (Julia started without
GCC's unwinder first, a library that fails to load under RTLD_DEEPBIND, a Python without a
shared libpython), Ctrl-C in process (a long step, a Python loop), and a clean exit."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from bridge_julia import JuliaScript
from julia_runner import PROJECT, REPO, julia_env, require_julia

pytestmark = pytest.mark.slow

CHECK = """
using DevPlace
sess = Session()
println("VALUE ", run(sess, constant([1.0, 2.0]) * 3.0))
println("TRANSPORT ", DevPlace.transport())
println("PID ", DevPlace.host_pid() == getpid() ? "same" : "other")
println("UNWINDER ", DevPlace.unwinder_library())
"""

NOTICE = "DevPlace: Python runs in a process of its own, not in Julia's: "


def run_check(
    julia: list[str],
    tmp_path: Path,
    transport: str = "auto",
    env: dict[str, str] | None = None,
    code: str = CHECK,
) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "check.jl"
    script.write_text(code, encoding="utf-8")
    return subprocess.run(
        [*julia, f"--project={PROJECT}", str(script)],
        cwd=tmp_path,
        env=julia_env(transport, env),
        capture_output=True,
        text=True,
        timeout=600,
    )


def lines(done: subprocess.CompletedProcess[str], key: str) -> list[str]:
    return [line[len(key) + 1 :] for line in done.stdout.splitlines() if line.startswith(key + " ")]


def test_in_process_by_default_with_the_projects_julia(tmp_path: Path) -> None:
    done = run_check([require_julia()], tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert lines(done, "VALUE") == ["[3.0, 6.0]"]
    assert lines(done, "TRANSPORT") == ["inprocess"] and lines(done, "PID") == ["same"]
    assert NOTICE not in done.stderr, done.stderr


SITE = (
    CHECK
    + """
sys = pyimport("sys")
println("EXECUTABLE ", sys.executable)
println("PREFIX ", sys.prefix)
println("PTH ", pyimport("os").environ.get("DEVPLACE_TEST_PTH", "not run"))
"""
)


def test_in_process_python_starts_as_the_interpreter_does_where_its_path_needs_quoting(
    tmp_path: Path,
) -> None:
    """A virtual environment whose path has a quote, a space and a letter outside ASCII: in
    process, Python's executable, prefix and path are that environment's, and its own `.pth`
    files run (not those of the Python it was made from), as in the host process."""
    venv = tmp_path / "it's a vënv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(REPO / ".venv" / "bin" / "python")
    shutil.copy(REPO / ".venv" / "pyvenv.cfg", venv / "pyvenv.cfg")
    real_site = next((REPO / ".venv" / "lib").glob("python3*/site-packages"))
    site = venv / "lib" / real_site.parent.name / "site-packages"
    site.mkdir(parents=True)
    (site / "real.pth").write_text(f"{real_site}\n", encoding="utf-8")
    (site / "marker.pth").write_text(
        "import os, sys; os.environ['DEVPLACE_TEST_PTH'] = sys.prefix\n", encoding="utf-8"
    )
    python = str(venv / "bin" / "python")
    for transport in ("inprocess", "process"):
        done = run_check([require_julia()], tmp_path, transport, {"DEVPLACE_PYTHON": python}, SITE)
        assert done.returncode == 0, done.stderr[-3000:]
        assert lines(done, "VALUE") == ["[3.0, 6.0]"]
        assert lines(done, "TRANSPORT") == [transport]
        assert lines(done, "EXECUTABLE") == [python]
        assert lines(done, "PREFIX") == lines(done, "PTH") == [str(venv)]


def raw_julia() -> tuple[str, dict[str, str]]:
    """The Julia binary behind the project's launcher, and the library path it needs, without
    the launcher's preload of GCC's unwinder."""
    done = subprocess.run(
        [require_julia(), "-e", 'print(joinpath(Sys.BINDIR, "julia"), "\\n", '
         'get(ENV, "LD_LIBRARY_PATH", ""))'],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    binary, library_path = done.stdout.split("\n")
    env = {"LD_LIBRARY_PATH": library_path} if library_path else {}
    return binary, env


def test_without_gccs_unwinder_first_the_host_process_serves_and_says_why(tmp_path: Path) -> None:
    binary, env = raw_julia()
    saved = os.environ.pop("LD_PRELOAD", None)
    try:
        done = run_check([binary], tmp_path, env=env)
        asked = run_check([binary], tmp_path, transport="inprocess", env=env)
    finally:
        if saved is not None:
            os.environ["LD_PRELOAD"] = saved
    assert done.returncode == 0, done.stderr[-3000:]
    assert lines(done, "VALUE") == ["[3.0, 6.0]"]
    unwinder = lines(done, "UNWINDER")[0]
    if "libgcc_s" in os.path.basename(unwinder) or not unwinder:
        # this Julia itself puts GCC's unwinder first: nothing to fall back from
        assert lines(done, "TRANSPORT") == ["inprocess"]
        return
    assert lines(done, "TRANSPORT") == ["process"] and lines(done, "PID") == ["other"]
    assert done.stderr.count(NOTICE) == 1, done.stderr
    assert f"C++ exceptions would unwind through {unwinder}" in done.stderr
    assert "LD_PRELOAD=libgcc_s.so.1" in done.stderr
    # asked for explicitly, in process is an error saying why, with the way out
    assert asked.returncode != 0
    assert "DevPlace cannot run Python in Julia's process: C++ exceptions" in asked.stderr
    assert "set_transport(:process)" in asked.stderr


SHIM = """
# A TensorFlow that misbehaves when imported in Julia's process (under RTLD_DEEPBIND), else the
# real TensorFlow.
import ctypes, os, sys, time
if sys.getdlopenflags() & os.RTLD_DEEPBIND:
    {misbehave}
_here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _here]
del sys.modules["tensorflow"]
import tensorflow
"""


def shimmed_tensorflow(tmp_path: Path, misbehave: str) -> str:
    """A PYTHONPATH whose TensorFlow runs `misbehave` (a line of Python) first when imported in
    Julia's process."""
    shim = tmp_path / "shim" / "tensorflow"
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text(SHIM.format(misbehave=misbehave), encoding="utf-8")
    return os.pathsep.join(p for p in (str(shim.parent), os.environ.get("PYTHONPATH")) if p)


def test_a_library_failing_under_deepbind_leaves_tensorflow_to_the_host_process(
    tmp_path: Path,
) -> None:
    # a library that cannot load so, as CUDA's might on a GPU machine (OSError)
    path = shimmed_tensorflow(tmp_path, 'ctypes.CDLL("libdevplace_test_cudnn.so.9")')
    done = run_check([require_julia()], tmp_path, env={"PYTHONPATH": path})
    assert done.returncode == 0, done.stderr[-3000:]
    assert lines(done, "VALUE") == ["[3.0, 6.0]"]
    assert lines(done, "TRANSPORT") == ["process"] and lines(done, "PID") == ["other"]
    assert done.stderr.count(NOTICE) == 1, done.stderr
    assert "TensorFlow did not load in Julia's process (OSError: libdevplace_test_cudnn.so.9" in (
        done.stderr
    )
    # asked for explicitly, in process is an error on the first call, also where the start in
    # the background (while the script sleeps, as a REPL waits) found the failure first
    waits = CHECK.replace(
        "using DevPlace\n",
        "using DevPlace\nt = time()\n"
        "while isempty(DevPlace.Transports.REFUSED[]) && time() - t < 120\n"
        "    sleep(0.1)\nend\n",
    )
    for code in (CHECK, waits):
        asked = run_check([require_julia()], tmp_path, "inprocess", {"PYTHONPATH": path}, code=code)
        assert asked.returncode != 0 and not lines(asked, "VALUE"), asked.stdout
        assert "DevPlace cannot run Python in Julia's process: TensorFlow did not load" in (
            asked.stderr
        )
        assert "set_transport(:process)" in asked.stderr


def test_tensorflow_loading_past_the_start_timeout_leaves_it_to_the_host_process(
    tmp_path: Path,
) -> None:
    """The start-up's bound holds whether the background start or the first call waits for the
    import (the script sleeps first, as a REPL waits for input): one bound, not one each."""
    path = shimmed_tensorflow(tmp_path, "time.sleep(120)")  # two minutes in Julia's process
    code = (
        CHECK.replace(
            "using DevPlace\n",
            "using DevPlace\nDevPlace.START_TIMEOUT[] = 20.0\nt = time()\nsleep(2)\n",
        )
        + 'println("SECONDS ", round(Int, time() - t))\n'
    )
    done = run_check([require_julia()], tmp_path, env={"PYTHONPATH": path}, code=code)
    assert done.returncode == 0, done.stderr[-3000:]
    assert lines(done, "VALUE") == ["[3.0, 6.0]"]
    assert lines(done, "TRANSPORT") == ["process"]
    assert done.stderr.count(NOTICE) == 1, done.stderr
    assert "(loading TensorFlow took longer than 20 s)" in done.stderr
    assert int(lines(done, "SECONDS")[0]) < 36  # 20 s, then the host's start; not 40 s


def static_python() -> tuple[str, str]:
    """A Python of the venv's version (so the venv's packages load in it) other than the venv's,
    and the shared libpython it would be loaded from; skip if this machine has none."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for candidate in (f"/usr/bin/{version}", f"/usr/local/bin/{version}"):
        if not os.access(candidate, os.X_OK):
            continue
        done = subprocess.run(
            [candidate, "-c", "import os, sysconfig as s; print(os.path.join("
             "s.get_config_var('LIBDIR'), s.get_config_var('LDLIBRARY')))"],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        library = os.path.realpath(done.stdout.strip())
        linked = subprocess.run(["ldd", candidate], capture_output=True, text=True).stdout
        if done.returncode == 0 and "libpython" not in linked and os.path.isfile(library):
            return candidate, library
    pytest.skip(f"no statically linked {version} besides the venv's on this machine")


def test_a_python_without_a_shared_libpython_is_served_by_the_host_process(
    tmp_path: Path,
) -> None:
    """A statically linked Python whose shared library is hidden (a private mount namespace
    puts /dev/null over it): nothing to load into Julia's process."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("needs root and unshare(1) for a private mount namespace")
    python, library = static_python()
    site = next((REPO / ".venv" / "lib").glob("python3*/site-packages"))
    env = {"DEVPLACE_PYTHON": python, "PYTHONPATH": str(site)}
    script = tmp_path / "check.jl"
    script.write_text(CHECK, encoding="utf-8")
    command = (
        f"mount --bind /dev/null {library} && exec {require_julia()} --project={PROJECT} {script}"
    )
    done = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c", command],
        cwd=tmp_path,
        env=julia_env("auto", env),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert lines(done, "VALUE") == ["[3.0, 6.0]"]
    assert lines(done, "TRANSPORT") == ["process"] and lines(done, "PID") == ["other"]
    assert done.stderr.count(NOTICE) == 1, done.stderr
    assert f"`{python}` (Python " in done.stderr and "has no shared libpython" in done.stderr


EXIT = """
using DevPlace
sess = Session()
run_profile(sess, constant(2.0) * 3)
pyimport("atexit").register(pybuiltin("print"), "PYTHON ATEXIT"; flush = true)
atexit(() -> (println("JULIA ATEXIT ", run(sess, constant(1.0) + 1)); flush(stdout)))
println("PID ", getpid()); flush(stdout)
"""


@pytest.mark.parametrize("transport", ["inprocess", "process"])
def test_a_clean_exit_runs_julias_hooks_then_pythons_and_leaves_nothing(
    tmp_path: Path, transport: str
) -> None:
    script = tmp_path / "exit.jl"
    script.write_text(EXIT, encoding="utf-8")
    started = time.monotonic()
    done = subprocess.run(
        [require_julia(), f"--project={PROJECT}", str(script)],
        cwd=tmp_path,
        env=julia_env(transport),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert time.monotonic() - started < 240
    out = [line for line in done.stdout.splitlines() if "ATEXIT" in line]
    # Julia's own hooks first, Python still there for them; then Python's exit functions (the
    # host's stdout is Julia's stderr)
    if transport == "inprocess":
        assert out == ["JULIA ATEXIT 2.0", "PYTHON ATEXIT"], done.stdout
    else:
        assert out == ["JULIA ATEXIT 2.0"] and "PYTHON ATEXIT" in done.stderr, done.stderr
    pid = next(line.split()[1] for line in done.stdout.splitlines() if line.startswith("PID "))
    assert not list(Path("/dev/shm").glob(f"devplace-{pid}-*"))
    assert done.stderr.count("Error") == 0, done.stderr


INTERRUPTED = """
SETUP
sess = Session()
println("TRANSPORT ", DevPlace.transport()); flush(stdout)
t = time()
try
    println("STARTED"); flush(stdout)
    CALL
    println("FINISHED")
catch err
    println("CAUGHT ", typeof(err), " after ", round(time() - t, digits = 1), " s")
end
println("AFTER ", run(sess, constant(2.0) * 3.0))
"""


def seconds_to_ctrl_c(tmp_path: Path, setup: str, call: str, *args: str) -> float:
    """Run `call` in process, send Ctrl-C a second after it started: the seconds it took to
    throw `InterruptException` (the session computes after it, and Julia exits cleanly)."""
    code = INTERRUPTED.replace("SETUP", setup).replace("CALL", call)
    julia = JuliaScript(code, tmp_path / "run", *args, transport="inprocess")
    try:
        assert julia.expect("TRANSPORT ", timeout=300) == "inprocess"
        julia.expect("STARTED")
        time.sleep(1.0)
        julia.proc.send_signal(signal.SIGINT)
        caught = julia.expect("CAUGHT ", timeout=60)
        assert caught.startswith("InterruptException after ")
        assert julia.expect("AFTER ") == "6.0"
        assert julia.finish() == 0, julia.output()
    finally:
        if julia.proc.poll() is None:
            julia.proc.kill()
    assert "FINISHED" not in julia.output()
    return float(caught.split()[-2])


def test_ctrl_c_in_process_ends_a_long_step_when_it_returns_and_the_session_stays(
    tmp_path: Path,
) -> None:
    # one TensorFlow step of 3 s (a py_func sleeping) is never cut short; its op is built
    # before the clock starts (building is Julia code between requests, where Ctrl-C lands at
    # once: on a loaded machine the build alone can outlast the second before the Ctrl-C)
    setup = "slow = sleep_for(constant(3.0))"
    assert seconds_to_ctrl_c(tmp_path, setup, "run(sess, slow)") >= 2.5


SPIN = """import time


def spin(s):
    t = time.time()
    while time.time() - t < s:
        pass
"""


def test_ctrl_c_in_process_stops_python_code_that_never_calls_julia(tmp_path: Path) -> None:
    (tmp_path / "spin.py").write_text(SPIN, encoding="utf-8")
    setup = 'pyimport("site").addsitedir(ARGS[1]); spin = pyimport("spin").spin'
    # not the whole minute the loop would take
    assert seconds_to_ctrl_c(tmp_path, setup, "spin(60.0)", str(tmp_path)) < 20
