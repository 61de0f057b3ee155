"""`devplace cluster up|down` with real processes, stopped by PID also when a test fails."""

import contextlib
import json
import os
import signal
import subprocess
import sys
import time

import pytest
from conftest import ignore_sigint

import devplace as dp
from devplace.cluster import procs, read_state

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

CLI = [sys.executable, "-m", "devplace", "cluster"]


def _wait_for(predicate, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError(f"{what} within {seconds} s")


@contextlib.contextmanager
def _cluster_up(tmp_path, **popen):
    """`devplace cluster up` running, as (process, state file, spec file, output file); its
    stdout is a file, read while it runs. Stopped by PID afterwards, also when a test fails."""
    state, spec, out = tmp_path / "state.json", tmp_path / "spec.json", tmp_path / "up.out"
    with open(out, "w") as sink:
        proc = subprocess.Popen(
            [
                *CLI,
                "up",
                "--ps",
                "1",
                "--workers",
                "1",
                "--state-file",
                str(state),
                "--spec-file",
                str(spec),
            ],
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            **popen,
        )
    servers = []
    try:
        _wait_for(
            lambda: "Stop with Ctrl-C" in out.read_text() or proc.poll() is not None,
            120,
            "`cluster up` ready",
        )
        assert proc.poll() is None, out.read_text()
        servers = read_state(state).processes
        yield proc, state, spec, out
    finally:
        procs.stop(proc.pid, proc=proc, grace=10.0)
        for entry in servers:
            procs.stop(entry.pid, started=entry.started, grace=5.0)


@pytest.fixture
def up(tmp_path):
    """Start `devplace cluster up` and yield (process, state file, spec file, output file)."""
    with _cluster_up(tmp_path) as started:
        yield started


def test_up_prints_and_writes_the_spec_and_down_stops_it(up):
    proc, state_file, spec_file, out = up
    spec = json.loads(spec_file.read_text())
    assert set(spec) == {"ps", "worker"} and len(spec["ps"]) == len(spec["worker"]) == 1
    text = out.read_text()
    assert json.dumps(spec, indent=2) in text
    assert f"session target: grpc://{spec['worker'][0]}" in text
    state = read_state(state_file)
    assert state.owner.pid == proc.pid and state.stop_owner
    servers = [e for e in state.processes if e.role in ("ps/0", "worker/0")]
    assert len(servers) == 2 and all(procs.alive(e.pid, e.started) for e in servers)

    with dp.Session(target=f"grpc://{spec['worker'][0]}", timeout=20) as sess:
        with dp.device("/job:ps/task:0/cpu:0"):
            y = dp.constant(4.0) * 2.0
        assert sess.run(y) == 8.0

    again = subprocess.run(
        [*CLI, "up", "--state-file", str(state_file)], capture_output=True, text=True, timeout=60
    )
    assert again.returncode == 1 and "already up" in again.stderr

    start = time.monotonic()
    down = subprocess.run(
        [*CLI, "down", "--state-file", str(state_file)], capture_output=True, text=True, timeout=60
    )
    assert down.returncode == 0, down.stderr
    assert "stopped devplace cluster up" in down.stdout
    assert proc.wait(timeout=30) == 0
    assert time.monotonic() - start < 30
    assert not any(procs.alive(e.pid, e.started) for e in state.processes)
    assert not state_file.exists()
    assert out.read_text().rstrip().endswith("devplace cluster: stopped")


def _ctrl_c_stops_every_server(proc, state_file, out):
    state = read_state(state_file)
    os.kill(proc.pid, signal.SIGINT)
    assert proc.wait(timeout=30) == 0
    assert not any(procs.alive(e.pid, e.started) for e in state.processes)
    assert not state_file.exists()
    assert "devplace cluster: stopped" in out.read_text()


def test_ctrl_c_stops_every_server(up):
    proc, state_file, _, out = up
    _ctrl_c_stops_every_server(proc, state_file, out)


def test_ctrl_c_stops_it_also_when_started_with_sigint_ignored(tmp_path):
    with _cluster_up(tmp_path, preexec_fn=ignore_sigint) as (proc, state_file, _, out):
        _ctrl_c_stops_every_server(proc, state_file, out)


def test_down_without_a_cluster_says_so(tmp_path):
    done = subprocess.run(
        [*CLI, "down", "--state-file", str(tmp_path / "none.json")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert "no cluster is up" in done.stderr


@pytest.mark.parametrize(
    "flag, name, says",
    [
        ("--spec-file", "missing/spec.json", "folder '{tmp}/missing' does not exist"),
        ("--spec-file", "spec.yaml", "the file is JSON, its name must end in .json"),
        ("--state-file", "ro/state.json", "folder '{tmp}/ro' is not writable"),
        ("--state-file", "taken.json", "is a folder, not a file"),
    ],
)
def test_up_refuses_an_output_path_it_cannot_write_before_starting(tmp_path, flag, name, says):
    (tmp_path / "ro").mkdir(mode=0o500)
    (tmp_path / "taken.json").mkdir()
    others = {"--spec-file": "spec.json", "--state-file": "state.json"}
    others[flag] = name
    argv = [f for flag_, path in others.items() for f in (flag_, str(tmp_path / path))]
    if os.geteuid() == 0 and "ro/" in name:
        pytest.skip("root writes into a read-only folder")
    done = subprocess.run([*CLI, "up", *argv], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"devplace cluster: error: {flag} '{tmp_path / name}'")
    assert says.format(tmp=tmp_path) in line
    assert not (tmp_path / "state.json").exists() and not (tmp_path / "spec.json").exists()
