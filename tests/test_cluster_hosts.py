"""A cluster across emulated hosts: each host a network namespace on a private bridge.

Every host runs `devplace cluster serve` for its task (one from a spec file, one from
TF_CONFIG, or both from a Slurm step's environment through TF's SlurmClusterResolver). The
chief, this test process, reaches them through its own link to the bridge, runs a graph across
them, checks the values and where each op ran, and then, with one host's server killed, gets an
error that names that task and its address within the session's timeout.

The hosts (tests/emulated_hosts.py) are network namespaces on a bridge of their own: nothing
leaves the machine. Namespaces, links and processes get names unique to this run and are
removed at the end, also when a test fails. Needs root and iproute2.
"""

import json
import os
import re
import signal
import subprocess
import sys
import time

import psutil
import pytest
from emulated_hosts import Hosts, ip, unavailable_reason

import devplace as dp
from devplace.cluster import ClusterSession, PeerUnavailableError, wait_ready

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

START_S = 150  # a server imports TF; several at once on a busy 2-core machine take a while
TIMEOUT = 8.0  # the chief's session timeout
SERVING = re.compile(
    r"serving \(pid (?P<pid>\d+); from (?P<source>[^;]+);.*started in (?P<s>[\d.]+) s"
)


@pytest.fixture(scope="module")
def hosts():
    reason = unavailable_reason()
    if reason:
        pytest.skip(reason)
    emulated = Hosts(2)
    try:
        emulated.create()
    except subprocess.CalledProcessError as err:
        emulated.remove()
        pytest.skip(f"cannot make network namespaces here: {err.stderr.strip()}")
    try:
        yield emulated
    finally:
        emulated.remove()
    assert not any(ns in ip("netns", "list").stdout for ns in [*emulated.names, emulated.lan])


def _serving(proc, out):
    """Wait until `out` says serving; (server pid, source, start-up seconds)."""
    deadline = time.monotonic() + START_S
    while not (found := SERVING.search(out.read_text())):
        assert proc.poll() is None, f"serve exited with {proc.returncode}:\n{out.read_text()}"
        assert time.monotonic() < deadline, f"not serving after {START_S} s:\n{out.read_text()}"
        time.sleep(0.2)
    return int(found["pid"]), found["source"], float(found["s"])


def _refused(hosts, host, *args):
    """Run `devplace cluster serve ARGS` in a host; it must refuse (status 1): its stderr."""
    done = subprocess.run(
        ["ip", "netns", "exec", hosts.names[host], sys.executable, "-m", "devplace", "cluster"]
        + ["serve", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    return done.stderr


def _stopped(proc, seconds=30):
    proc.wait(seconds)
    return proc.returncode


def test_a_graph_across_two_hosts_then_a_dead_host_is_named(hosts, tmp_path):
    spec = {"worker": [f"{hosts.ips[0]}:2222", f"{hosts.ips[1]}:2222"]}
    spec_file = tmp_path / "cluster.json"
    spec_file.write_text(json.dumps(spec))
    out0, out1 = tmp_path / "h1.out", tmp_path / "h2.out"
    # host 2 also has an address beyond private networks (shared address space, RFC 6598)
    public = f"100.64.213.{hosts.net}"
    ip("-n", hosts.names[1], "addr", "add", f"{public}/32", "dev", "lo")
    first = hosts.serve(0, ["--spec", str(spec_file), "--job", "worker", "--cores", "1"], out0)
    tf_config = {"cluster": spec, "task": {"type": "worker", "index": 1}}
    second = hosts.serve(1, [], out1, env={"TF_CONFIG": json.dumps(tf_config)})
    pid0, source0, _ = _serving(first, out0)
    pid1, source1, _ = _serving(second, out1)
    assert source0 == f"spec file {spec_file}" and source1 == "TF_CONFIG"
    assert f"/job:worker/task:0 at {spec['worker'][0]} serving" in out0.read_text()
    assert "warning" not in out0.read_text()
    assert (
        "devplace cluster serve: warning: devplace: /job:worker/task:1's TF server listens on "
        f"every interface of this host, also on the public address(es) {public}, port 2222, "
        "with no authentication"
    ) in out1.read_text()
    # --cores 1: the first core this process may use, for every thread of the server
    assert psutil.Process(pid0).cpu_affinity() == sorted(os.sched_getaffinity(0))[:1]
    assert wait_ready(spec, 30) < 30

    # a second server for the same task on the same host: refused, naming the port's holder
    again = _refused(hosts, 0, "--spec", str(spec_file), "--job", "worker", "--task", "0")
    assert f"port 2222 is already in use on this host (by pid {pid0}" in again
    # the task of the other host: refused, naming both hosts' addresses
    elsewhere = _refused(hosts, 0, "--spec", str(spec_file), "--job", "worker", "--task", "1")
    assert f"address {spec['worker'][1]} is not this host's" in elsewhere
    assert hosts.ips[0] in elsewhere and "Hint" in elsewhere

    with dp.device("/job:worker/task:0/cpu:0"):
        a = dp.constant([[1.0, 2.0], [3.0, 4.0]], name="a")
    with dp.device("/job:worker/task:1/cpu:0"):
        b = dp.tf.matmul(a, a, name="b")
    with dp.device("/job:worker/task:0/cpu:0"):
        c = dp.tf.add(b, 1.0, name="c")
    sess = ClusterSession(spec, "worker", 0, timeout=TIMEOUT, optimize=False)  # no folding
    assert sess.run(c).tolist() == [[8.0, 11.0], [16.0, 23.0]]
    report = dp.placement(sess, c)
    assert "/job:worker/replica:0/task:0/" in report.actual("a")
    assert "/job:worker/replica:0/task:1/" in report.actual("b")
    assert "/job:worker/replica:0/task:0/" in report.actual("c")

    # host 2's server dies: its `serve` says so, and the chief's error names it
    os.kill(pid1, signal.SIGKILL)
    assert _stopped(second) == 1
    assert "/job:worker/task:1's server exited on its own with status -9" in out1.read_text()
    start = time.monotonic()
    with pytest.raises(PeerUnavailableError) as caught:
        sess.run(c)
    took = time.monotonic() - start
    assert took < TIMEOUT
    assert f"task /job:worker/task:1 at {spec['worker'][1]} is gone" in str(caught.value)
    assert caught.value.tasks == ["/job:worker/task:1"]
    # a plain session knows its master only: it says the master answers and how to find out
    with dp.Session(target=f"grpc://{spec['worker'][0]}", timeout=TIMEOUT) as plain:
        with pytest.raises(dp.tf.errors.DeadlineExceededError) as caught:
            plain.run(c)
    said = str(caught.value)
    assert f"the task at {spec['worker'][0]} is alive" not in said  # not a liveness claim
    assert f"took longer than the timeout of {TIMEOUT:g} s" in said
    assert spec["worker"][0] in said and "ClusterSession" in said
    sess.close()

    # SIGTERM: serving stops cleanly, and with it the server
    first.send_signal(signal.SIGTERM)
    assert _stopped(first) == 0
    assert "/job:worker/task:0 stopped" in out0.read_text()
    assert not psutil.pid_exists(pid0) or psutil.Process(pid0).status() == psutil.STATUS_ZOMBIE
    # a plain session on the dead master names its address, within the timeout and the probe
    start = time.monotonic()
    with dp.Session(target=f"grpc://{spec['worker'][0]}", timeout=TIMEOUT) as plain:
        with pytest.raises(dp.tf.errors.DeadlineExceededError) as caught:
            plain.run(a)
    assert time.monotonic() - start < TIMEOUT + 2
    assert f"the task at {spec['worker'][0]} is gone" in str(caught.value)
    assert "devplace cluster serve" in str(caught.value)


def test_a_slurm_step_on_two_hosts(hosts, tmp_path):
    """The environment `srun -N2 -n2` sets, read by TF's SlurmClusterResolver."""
    nodes = f"10.213.{hosts.net}.[2-3]"
    step = {
        "SLURM_JOB_ID": "4242",
        "SLURM_STEP_ID": "0",
        "SLURM_JOB_NODELIST": nodes,
        "SLURM_STEP_NODELIST": nodes,
        "SLURM_NNODES": "2",
        "SLURM_NTASKS": "2",
        "SLURM_STEP_NUM_TASKS": "2",
        "SLURM_TASKS_PER_NODE": "1(x2)",
        "SLURM_STEP_TASKS_PER_NODE": "1(x2)",
        "SLURM_LOCALID": "0",
    }
    expected = {"ps": [f"{hosts.ips[0]}:2300"], "worker": [f"{hosts.ips[1]}:2300"]}
    args = ["--from-slurm", "--slurm-jobs", "ps=1,worker=1", "--port-base", "2300"]
    started = []
    for rank in (0, 1):
        out = tmp_path / f"rank{rank}.out"
        env = dict(step, SLURM_PROCID=str(rank), SLURM_NODEID=str(rank))
        spec_file = tmp_path / f"spec{rank}.json"
        proc = hosts.serve(rank, [*args, "--write-spec", str(spec_file)], out, env=env)
        started.append((proc, out, spec_file))
    for rank, (proc, out, spec_file) in enumerate(started):
        _, source, _ = _serving(proc, out)
        assert source == f"Slurm step (SLURM_PROCID={rank})"
        assert {k: list(v.values()) for k, v in json.loads(spec_file.read_text()).items()} == (
            expected
        )
    assert "/job:ps/task:0 at" in started[0][1].read_text()
    assert "/job:worker/task:0 at" in started[1][1].read_text()

    with dp.device("/job:ps/task:0/cpu:0"):
        w = dp.Variable(3.0, name="w")
    with dp.device("/job:worker/task:0/cpu:0"):
        y = dp.tf.multiply(w, 2.0, name="y")
    with ClusterSession(started[0][2], "worker", 0, timeout=TIMEOUT, optimize=False) as sess:
        dp.init(sess)
        assert sess.run(y) == 6.0
        report = dp.placement(sess, y)
    assert "/job:ps/replica:0/task:0/" in report.actual("w")
    assert "/job:worker/replica:0/task:0/" in report.actual("y")
    for proc, out, _ in started:
        proc.send_signal(signal.SIGINT)  # Ctrl-C
        assert _stopped(proc) == 0, out.read_text()
