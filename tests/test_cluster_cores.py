"""Tasks pinned to cores: each server's every thread runs only on its own cores, its inter-op
pool has one thread per core, and asking for more cores than there are is refused."""

import os
import subprocess
import sys
import time
from collections import Counter

import psutil
import pytest

import devplace as dp
from devplace.cluster import LocalCluster, procs, read_state
from devplace.cluster import cores as core_sets

pytestmark = [
    pytest.mark.timeout(180),
    pytest.mark.skipif(
        not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2,
        reason="needs Linux CPU affinity and at least 2 usable cores",
    ),
]

USABLE = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []


def _thread_ids(pid):
    """(name, thread id) of every thread of process `pid`."""
    found = []
    for thread in psutil.Process(pid).threads():
        try:
            with open(f"/proc/{pid}/task/{thread.id}/comm") as comm:
                found.append((comm.read().strip(), thread.id))
        except FileNotFoundError:
            pass  # a thread that ended meanwhile
    return found


def _threads(pid):
    """(name, affinity) of every thread of process `pid`."""
    return [(name, sorted(os.sched_getaffinity(tid))) for name, tid in _thread_ids(pid)]


def _check_pinned(pid, cores):
    threads = _threads(pid)
    assert psutil.Process(pid).cpu_affinity() == cores
    assert len(threads) > 10  # TF's and gRPC's threads, not only the main one
    assert {tuple(affinity) for _, affinity in threads} == {tuple(cores)}
    # the inter-op pool ("tf_Compute" threads) has one thread per core, not one per machine
    # core, and one more that answers RPCs
    assert Counter(name for name, _ in threads)["tf_Compute"] == len(cores) + 1
    # compute threads run below the rest, so an RPC on a busy core is answered at once
    nice = [(name, os.getpriority(os.PRIO_PROCESS, tid)) for name, tid in _thread_ids(pid)]
    assert {n for name, n in nice if name == "tf_Compute"} == {core_sets.COMPUTE_NICENESS}
    assert {n for name, n in nice if name != "tf_Compute"} == {0}


@pytest.mark.parametrize(
    ("text", "parsed"),
    [("2", 2), (3, 3), ("0,2", [0, 2]), ("4-6", [4, 5, 6]), ("6-6", [6]), ([1, 0], [0, 1])],
)
def test_a_count_or_a_core_list(text, parsed):
    assert core_sets.parse(text) == parsed


@pytest.mark.parametrize("text", ["0", "-1", "a", "3-1", "1,,2", True])
def test_bad_core_text_is_refused_naming_it(text):
    with pytest.raises(core_sets.CoresError, match="cores: "):
        core_sets.parse(text)


def test_describe_writes_short_lists():
    assert core_sets.describe([6, 0, 1, 2, 3]) == "0-3,6"
    assert core_sets.parse(core_sets.describe([0, 2, 3])) == [0, 2, 3]


def test_more_cores_than_the_machine_has_are_refused_with_the_numbers():
    n = len(USABLE)
    with pytest.raises(core_sets.CoresError) as caught:
        LocalCluster(ps=1, workers=2, cores_per_task=n)
    said = str(caught.value)
    assert f"3 tasks x {n} cores each = {3 * n} cores" in said
    assert f"this machine has {n}" in said and "Hint" in said
    with pytest.raises(core_sets.CoresError, match=f"{n + 1} cores asked for.*has {n}"):
        core_sets.resolve(n + 1)
    with pytest.raises(core_sets.CoresError, match=f"core\\(s\\) {USABLE[-1] + 1} asked for"):
        core_sets.resolve([USABLE[-1] + 1])
    with pytest.raises(ValueError, match="cores_per_task must be an integer >= 1"):
        LocalCluster(ps=0, workers=1, cores_per_task=0)


@pytest.mark.slow
def test_each_server_runs_only_on_its_own_cores_and_computes():
    with LocalCluster(ps=0, workers=2, cores_per_task=1) as cluster:
        assert cluster.cores == {"worker/0": USABLE[:1], "worker/1": USABLE[1:2]}
        for role, cores in cluster.cores.items():
            _check_pinned(cluster.pids[role], cores)
        with dp.device("/job:worker/task:0/cpu:0"):
            a = dp.constant([[1.0, 2.0], [3.0, 4.0]], name="a")
        with dp.device("/job:worker/task:1/cpu:0"):
            y = dp.tf.matmul(a, a, name="y")
        with cluster.session(timeout=30) as sess:
            assert sess.run(y).tolist() == [[7.0, 10.0], [15.0, 22.0]]
            report = dp.placement(sess, y)
        assert "/job:worker/replica:0/task:1/" in report.actual("y")
        assert "/job:worker/replica:0/task:0/" in report.actual("a")


@pytest.mark.slow
def test_cluster_up_cores_per_task_pins_each_server(tmp_path):
    state, spec, out = tmp_path / "state.json", tmp_path / "spec.json", tmp_path / "up.out"
    command = [sys.executable, "-m", "devplace", "cluster", "up", "--ps", "0", "--workers", "2"]
    command += ["--cores-per-task", "1", "--state-file", str(state), "--spec-file", str(spec)]
    with open(out, "w") as sink:
        proc = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
    servers = []
    try:
        deadline = time.monotonic() + 120
        while "Stop with Ctrl-C" not in out.read_text() and proc.poll() is None:
            assert time.monotonic() < deadline, "`cluster up` not ready in 120 s"
            time.sleep(0.1)
        assert proc.poll() is None, out.read_text()
        servers = read_state(state).processes
        text = out.read_text()
        for index, role in enumerate(["worker/0", "worker/1"]):
            assert f"{role} pinned to cores {USABLE[index]}" in text
            (entry,) = [e for e in servers if e.role == role]
            _check_pinned(entry.pid, [USABLE[index]])
    finally:
        procs.stop(proc.pid, proc=proc, grace=10.0)
        for entry in servers:
            procs.stop(entry.pid, started=entry.started, grace=5.0)


@pytest.mark.slow
def test_cluster_up_refuses_too_many_cores_at_once(tmp_path):
    n = len(USABLE)
    done = subprocess.run(
        [sys.executable, "-m", "devplace", "cluster", "up", "--ps", "1", "--workers", "1"]
        + ["--cores-per-task", str(n), "--state-file", str(tmp_path / "state.json")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert f"2 tasks x {n} cores each = {2 * n} cores, but this machine has {n}" in done.stderr
