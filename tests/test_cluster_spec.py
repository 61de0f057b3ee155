"""Cluster specs, device strings, the liveness probe and the state file (no TF servers)."""

import json
import socket
import subprocess
import sys
import threading
import time

import pytest

import devplace as dp
from devplace.cluster import (
    ClusterSpecError,
    address,
    as_spec,
    device,
    devices,
    jobs,
    netns,
    procs,
    read_spec,
    spec_dict,
    target,
    task_at,
    tasks,
    write_spec,
)
from devplace.cluster.probe import ALIVE, GONE, SILENT, probe
from devplace.cluster.state import ClusterState, ProcessEntry, read_state, stop_cluster
from devplace.core.atomic import FileWriteError

pytestmark = pytest.mark.timeout(60)

SPEC = {"ps": ["127.0.0.1:2222", "127.0.0.1:2223"], "worker": ["127.0.0.1:2224"]}


def test_spec_from_every_plain_form(tmp_path):
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(SPEC))
    tf_config = tmp_path / "tf_config.json"
    tf_config.write_text(json.dumps({"cluster": SPEC, "task": {"type": "ps", "index": 0}}))
    for form in (SPEC, json.dumps(SPEC), str(path), path, tf_config, dp.tf.train.ClusterSpec(SPEC)):
        assert spec_dict(form) == SPEC
    assert jobs(SPEC) == ["ps", "worker"]
    assert tasks(SPEC, "ps") == [0, 1]
    assert address(SPEC, "ps", 1) == "127.0.0.1:2223"
    assert target(SPEC) == "grpc://127.0.0.1:2224"
    assert task_at(SPEC, "grpc://127.0.0.1:2223") == ("ps", 1)
    assert task_at(SPEC, "127.0.0.1:9") is None


def test_sparse_job_keeps_its_task_indices():
    sparse = as_spec({"worker": {0: "127.0.0.1:2000", 2: "127.0.0.1:2002"}})
    assert sparse.task_indices("worker") == [0, 2]
    assert address(sparse, "worker", 2) == "127.0.0.1:2002"
    with pytest.raises(ClusterSpecError, match="has tasks \\[0, 2\\]"):
        spec_dict(sparse)


def test_write_then_read_round_trips(tmp_path):
    path = write_spec(SPEC, tmp_path / "cluster.json")
    assert json.loads(path.read_text()) == SPEC
    assert read_spec(path).as_dict() == SPEC
    assert [p.name for p in tmp_path.iterdir()] == ["cluster.json"]  # no temporary file left


def test_writing_into_a_missing_folder_names_it(tmp_path):
    with pytest.raises(FileWriteError, match=f"folder '{tmp_path / 'sub'}' does not exist"):
        write_spec(SPEC, tmp_path / "sub" / "cluster.json")
    assert not (tmp_path / "sub").exists()


@pytest.mark.parametrize(
    ("bad", "says"),
    [
        ({}, "empty"),
        ({"ps": []}, "job 'ps' has no tasks"),
        ({"ps": "127.0.0.1:2222"}, "must list its task addresses"),
        ({"ps": ["127.0.0.1"]}, r"/job:ps/task:0 has address '127.0.0.1'.*host:port"),
        ({"ps": ["a:1", "127.0.0.1:99999"]}, r"/job:ps/task:1 at '127.0.0.1:99999'.*1..65535"),
        ({"ps": ["127.0.0.1:1"], "worker": ["127.0.0.1:1"]}, "share the address 127.0.0.1:1"),
        ({"p s": ["127.0.0.1:1"]}, "job name 'p s' is not an identifier"),
        ({"ps": {"x": "127.0.0.1:1"}}, "task index 'x'"),
        ("{not json", "not valid JSON"),
        ("/no/such/spec.json", "neither JSON text nor a file that exists"),
        (42, "an int is not a spec"),
    ],
)
def test_malformed_specs_say_what_is_wrong(bad, says):
    with pytest.raises(ClusterSpecError, match=says):
        as_spec(bad)


def test_unknown_job_or_task_is_named():
    with pytest.raises(ClusterSpecError, match="no job 'chief'; its jobs are ps, worker"):
        target(SPEC, "chief")
    with pytest.raises(ClusterSpecError, match="job 'worker' has no task 3"):
        address(SPEC, "worker", 3)


def test_remote_device_strings():
    # the device type left to TensorFlow, as replica_device_setter leaves it
    assert device("ps") == "/job:ps/task:0"
    assert device("worker", 1, "gpu", 0) == "/job:worker/task:1/device:GPU:0"
    assert devices(SPEC, "ps") == ["/job:ps/task:0", "/job:ps/task:1"]
    assert devices(SPEC, "ps", "cpu") == [
        "/job:ps/task:0/device:CPU:0",
        "/job:ps/task:1/device:CPU:0",
    ]
    assert dp.canonical_device("/job:ps/task:0/cpu:0") == device("ps", 0, "CPU")
    with pytest.raises(ClusterSpecError, match="job name 'a/b'"):
        device("a/b")


def test_probe_tells_gone_from_silent_from_not_grpc():
    with socket.create_server(("127.0.0.1", 0)) as closed:
        port = closed.getsockname()[1]
    found = probe(f"127.0.0.1:{port}", timeout=1.0)
    assert found.state == GONE and found.seconds < 1.0

    with socket.create_server(("127.0.0.1", 0)) as silent:  # accepts, never answers
        start = time.monotonic()
        found = probe(f"grpc://127.0.0.1:{silent.getsockname()[1]}", timeout=0.5)
        assert found.state == SILENT
        assert 0.4 < time.monotonic() - start < 2.0

    with socket.create_server(("127.0.0.1", 0)) as talker:

        def answer() -> None:
            conn, _ = talker.accept()
            with conn:
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")

        thread = threading.Thread(target=answer, daemon=True)
        thread.start()
        found = probe(f"127.0.0.1:{talker.getsockname()[1]}", timeout=1.0)
        thread.join(timeout=5)
        assert found.state == GONE and "not as an HTTP/2" in found.detail
    assert found.state != ALIVE


@pytest.mark.slow
def test_netns_support_is_reported_with_a_reason():
    ok, reason = netns.supported()
    assert isinstance(ok, bool)
    assert ok or reason


@pytest.mark.slow
def test_state_file_stops_its_processes_by_pid(tmp_path):
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        state = ClusterState(
            owner=ProcessEntry("python", 1, procs.start_time(1)),  # never signalled
            processes=[ProcessEntry("ps/0", sleeper.pid, procs.start_time(sleeper.pid))],
            spec=SPEC,
        )
        path = state.write(tmp_path / "state.json")
        assert read_state(path).processes[0].pid == sleeper.pid
        start = time.monotonic()
        assert stop_cluster(path) == ["ps/0"]
        assert sleeper.wait(timeout=10) is not None
        assert time.monotonic() - start < 10
        assert not path.exists()
        assert read_state(path) is None
    finally:
        sleeper.kill()
        sleeper.wait(timeout=10)


@pytest.mark.slow
def test_state_file_leaves_a_reused_pid_alone(tmp_path):
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        stale = ProcessEntry("ps/0", sleeper.pid, procs.start_time(sleeper.pid) - 1)
        path = ClusterState(owner=stale, processes=[stale], stop_owner=True).write(
            tmp_path / "state.json"
        )
        assert stop_cluster(path) == []
        assert sleeper.poll() is None
    finally:
        sleeper.kill()
        sleeper.wait(timeout=10)


def test_damaged_state_file_is_reported(tmp_path):
    path = tmp_path / "state.json"
    path.write_text("{")
    with pytest.raises(ValueError, match="damaged"):
        read_state(path)
