"""`devplace cluster serve` on this machine: the three ways to name a task, every refusal with
its cause and fix, pinning, a clean stop on Ctrl-C and SIGTERM, and `devplace cluster wait`.

Emulated hosts on a private network are in test_cluster_hosts.py (root only); these run
anywhere, on loopback addresses.
"""

import ipaddress
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

import psutil
import pytest
from conftest import ignore_sigint

from devplace.cluster import TaskConfigError, wait_ready
from devplace.cluster.host_checks import (
    HostCheckError,
    check_address,
    check_port,
    public_addresses,
)
from devplace.cluster.probe import ClusterNotReadyError
from devplace.cluster.server import start_server
from devplace.cluster.serving import resolve_task
from devplace.cluster.task_config import from_slurm, from_tf_config

pytestmark = pytest.mark.timeout(240)

CLI = [sys.executable, "-m", "devplace", "cluster"]
SPEC = {"ps": ["127.0.0.1:2222"], "worker": ["127.0.0.1:2223", "127.0.0.1:2224"]}


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.slow
def test_help_shows_the_three_ways_to_name_the_task():
    done = subprocess.run([*CLI, "serve", "--help"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0
    for way in ("--spec FILE --job NAME --task I", "TF_CONFIG", "--from-slurm", "--cores K|LIST"):
        assert way in done.stdout


def test_a_task_from_a_spec_file(tmp_path):
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(SPEC))
    config = resolve_task(str(path), "worker", 1)
    assert (config.name, config.address) == ("/job:worker/task:1", "127.0.0.1:2224")
    assert config.source == f"spec file {path}"
    assert json.loads(config.spec_json()) == {
        "ps": {"0": "127.0.0.1:2222"},
        "worker": {"0": "127.0.0.1:2223", "1": "127.0.0.1:2224"},
    }


def test_a_task_from_tf_config(monkeypatch):
    config = {"cluster": SPEC, "task": {"type": "ps", "index": 0}}
    monkeypatch.setenv("TF_CONFIG", json.dumps(config))
    found = resolve_task()
    assert (found.name, found.address, found.source) == (
        "/job:ps/task:0",
        "127.0.0.1:2222",
        "TF_CONFIG",
    )


@pytest.mark.parametrize(
    ("tf_config", "says"),
    [
        (None, "TF_CONFIG is not set (or empty). Hint: name the task with --spec FILE"),
        ("{not json", "TF_CONFIG is not valid JSON"),
        (json.dumps({"cluster": SPEC}), 'TF_CONFIG needs a "cluster" and a "task" object'),
        (
            json.dumps({"cluster": SPEC, "task": {"type": "worker", "index": "1"}}),
            'TF_CONFIG\'s task must have a "type" (a job name) and an integer "index"',
        ),
        (
            json.dumps({"cluster": SPEC, "task": {"type": "worker", "index": 2}}),
            "TF_CONFIG has no task /job:worker/task:2; its tasks are /job:ps/task:0 at "
            "127.0.0.1:2222, /job:worker/task:0 at 127.0.0.1:2223, /job:worker/task:1 at "
            "127.0.0.1:2224. Hint: name one of those",
        ),
    ],
)
def test_a_bad_tf_config_is_refused_with_a_fix(tf_config, says):
    environ = {} if tf_config is None else {"TF_CONFIG": tf_config}
    with pytest.raises(TaskConfigError) as caught:
        from_tf_config(environ)
    assert says in str(caught.value)


@pytest.mark.parametrize(
    ("call", "says"),
    [
        (lambda: resolve_task(SPEC, "chief", 0), "spec has no task /job:chief/task:0"),
        (lambda: resolve_task(SPEC), "--spec {'ps'"),
        (lambda: resolve_task(None, "worker", 0), "--job and --task need --spec FILE"),
        (lambda: resolve_task(SPEC, "worker", from_slurm=True), "leave out --spec, --job"),
        (lambda: resolve_task("nope.json", "worker", 0), "neither JSON text nor a file"),
    ],
)
def test_a_task_that_is_not_in_the_spec_is_refused_with_a_fix(call, says):
    with pytest.raises(TaskConfigError) as caught:
        call()
    assert says in str(caught.value)


SLURM_STEP = {
    "SLURM_STEP_NUM_TASKS": "3",
    "SLURM_STEP_NODELIST": "node[07-08]",
    "SLURM_STEP_TASKS_PER_NODE": "2,1",
}


@pytest.mark.parametrize(
    ("rank", "jobs", "task"),
    [
        (0, None, ("worker", 0, "node07:8888")),
        (1, None, ("worker", 1, "node07:8889")),  # the second task on a node: the next port
        (2, None, ("worker", 2, "node08:8888")),
        (0, {"ps": 1, "worker": 2}, ("ps", 0, "node07:8888")),
        (2, {"ps": 1, "worker": 2}, ("worker", 1, "node08:8888")),
    ],
)
def test_a_task_from_a_slurm_step(monkeypatch, rank, jobs, task):
    for name, value in dict(SLURM_STEP, SLURM_PROCID=str(rank)).items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    config = from_slurm(jobs)
    assert (config.job, config.task, config.address) == task
    assert config.source == f"Slurm step (SLURM_PROCID={rank})"
    assert sum(len(t) for t in config.spec.values()) == 3


@pytest.mark.parametrize(
    ("visible", "rank", "then"),
    [
        ("0,1,2", 1, "1"),  # a GPU per task: the resolver gives rank 1 (node07's second) GPU 1
        ("0,1,2", 2, "0"),  # node08's only task: its GPU 0
        ("0", 1, "0"),  # fewer GPUs than tasks on node07: they share it, nothing is split
    ],
)
def test_a_slurm_step_on_gpu_nodes(monkeypatch, visible, rank, then):
    for name, value in dict(
        SLURM_STEP, SLURM_PROCID=str(rank), CUDA_VISIBLE_DEVICES=visible
    ).items():
        monkeypatch.setenv(name, value)
    config = from_slurm()
    assert (config.job, config.task) == ("worker", rank)
    assert os.environ["CUDA_VISIBLE_DEVICES"] == then


def test_outside_a_slurm_step_says_so(monkeypatch):
    for name in ("SLURM_PROCID", *SLURM_STEP):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(TaskConfigError, match="SLURM_PROCID not found.*Hint: run `devplace"):
        from_slurm()


def test_an_address_of_another_host_is_refused():
    check_address("127.0.0.1:2222")
    check_address("localhost:2222")
    with pytest.raises(HostCheckError, match=r"address 10\.255\.254\.253:2222 is not this host's"):
        check_address("10.255.254.253:2222")
    with pytest.raises(HostCheckError, match="cannot be resolved here.*Hint: write an IP"):
        check_address("no-such-host.invalid:2222")


def test_a_port_in_use_is_refused_naming_its_holder():
    with socket.create_server(("127.0.0.1", 0)) as holder:
        port = holder.getsockname()[1]
        with pytest.raises(HostCheckError) as caught:
            check_port(port)
    said = str(caught.value)
    assert f"port {port} is already in use on this host (by pid {os.getpid()}" in said
    assert "Hint" in said


@pytest.mark.slow
def test_a_server_on_a_port_in_use_names_the_task_the_port_and_a_way_out():
    with socket.create_server(("127.0.0.1", 0)) as holder:
        port = holder.getsockname()[1]
        spec = json.dumps({"ps": [f"127.0.0.1:{port}"]})
        with pytest.raises(HostCheckError) as caught:
            start_server(spec, "ps", 0)
        done = subprocess.run(
            [sys.executable, "-m", "devplace.cluster.server", "--spec", spec, "--job", "ps"],
            capture_output=True,
            text=True,
            timeout=150,
        )
    said = f"cannot start the server of /job:ps/task:0 at 127.0.0.1:{port}: port {port} is "
    assert said + "already in use on this host" in str(caught.value)
    assert "give this task another port in the spec (any free port" in str(caught.value)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert said in done.stderr and "gRPC" not in done.stderr.split(said)[1]


def test_public_addresses_are_those_beyond_private_networks():
    found = public_addresses(
        map(ipaddress.ip_address, ["127.0.0.1", "10.1.2.3", "192.168.1.1", "fe80::1", "8.8.8.8"])
    )
    assert found == ["8.8.8.8"]


def _wait_for(path, text, proc, seconds=150):
    deadline = time.monotonic() + seconds
    while text not in path.read_text():
        assert proc.poll() is None, path.read_text()
        assert time.monotonic() < deadline, path.read_text()
        time.sleep(0.2)
    return path.read_text()


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="CPU affinity needs Linux")
@pytest.mark.parametrize(
    ("stop", "preexec"),
    [(signal.SIGINT, None), (signal.SIGTERM, None), (signal.SIGINT, ignore_sigint)],
    ids=["ctrl-c", "sigterm", "ctrl-c-when-started-with-sigint-ignored"],
)
def test_serve_on_loopback_pins_answers_and_stops_cleanly(tmp_path, stop, preexec):
    port = _free_port()
    spec = {"worker": [f"127.0.0.1:{port}"]}
    out = tmp_path / "serve.out"
    with open(out, "w") as sink:
        proc = subprocess.Popen(
            [
                *CLI,
                "serve",
                "--cores",
                "1",
                "--wait",
                "60",
                "--write-spec",
                str(tmp_path / "spec.json"),
            ],
            stdout=sink,
            stderr=subprocess.STDOUT,
            env=dict(
                os.environ, TF_CONFIG=json.dumps({"cluster": spec, "task": {"type": "worker"}})
            ),
            preexec_fn=preexec,
        )
    try:
        text = _wait_for(out, "serving", proc)
        server = int(re.search(r"serving \(pid (\d+);", text)[1])
        assert f"/job:worker/task:0 at 127.0.0.1:{port} serving" in text
        assert psutil.Process(server).cpu_affinity() == sorted(os.sched_getaffinity(0))[:1]
        assert json.loads((tmp_path / "spec.json").read_text()) == {
            "worker": {"0": f"127.0.0.1:{port}"}
        }
        assert wait_ready(spec, 10) < 10
        _wait_for(out, "devplace: cluster ready, its one task answers", proc, 60)
        proc.send_signal(stop)
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert "devplace: /job:worker/task:0 stopped" in out.read_text()
    assert not psutil.pid_exists(server) or psutil.Process(server).status() == psutil.STATUS_ZOMBIE
    with pytest.raises(ClusterNotReadyError) as caught:
        wait_ready(spec, 0.5)
    assert caught.value.tasks == ["/job:worker/task:0"]


@pytest.mark.slow
def test_cluster_wait_names_the_tasks_that_do_not_answer(tmp_path):
    port = _free_port()
    with socket.create_server(("127.0.0.1", 0)) as silent:  # accepts, never answers HTTP/2
        spec = {"ps": [f"127.0.0.1:{port}"], "worker": [f"127.0.0.1:{silent.getsockname()[1]}"]}
        done = subprocess.run(
            [*CLI, "wait", json.dumps(spec), "--timeout", "1"],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 1
    assert "cluster not ready after 1 s: 2 of 2 tasks do not answer" in done.stderr
    assert f"/job:ps/task:0 at 127.0.0.1:{port} is gone" in done.stderr
    assert f"/job:worker/task:0 at {spec['worker'][0]} is silent" in done.stderr


@pytest.mark.slow
def test_serve_wait_names_the_tasks_that_never_answer_and_stops(tmp_path):
    spec = {"worker": [f"127.0.0.1:{_free_port()}", f"127.0.0.1:{_free_port()}"]}
    done = subprocess.run(
        [*CLI, "serve", "--spec", json.dumps(spec), "--job", "worker", "--wait", "2"],
        capture_output=True,
        text=True,
        timeout=200,
    )
    assert done.returncode == 1
    assert f"/job:worker/task:0 at {spec['worker'][0]} serving" in done.stdout
    assert (
        "cluster not ready after 2 s: 1 of 2 tasks do not answer: /job:worker/task:1 at "
        f"{spec['worker'][1]} is gone"
    ) in done.stderr
    with pytest.raises(ClusterNotReadyError):  # its own server was stopped on the way out
        wait_ready({"worker": spec["worker"][:1]}, 0.5)
