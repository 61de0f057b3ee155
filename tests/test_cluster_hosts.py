"""A cluster across emulated hosts: each host a network namespace on a private bridge.

Every host runs `devplace cluster serve` for its task (one from a spec file, one from
TF_CONFIG, or both from a Slurm step's environment through TF's SlurmClusterResolver). The
chief, this test process, reaches them through its own link to the bridge, runs a graph across
them, checks the values and where each op ran, and then, with one host's server killed, gets an
error that names that task and its address within the session's timeout.

The bridge lives in a namespace of its own, so the machine's firewall never sees the hosts'
traffic and nothing leaves the machine. Namespaces, links and processes get names unique to
this run and are removed at the end, also when a test fails. Needs root and iproute2.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import psutil
import pytest

import devplace as dp
from devplace.cluster import ClusterSession, PeerUnavailableError, wait_ready

pytestmark = pytest.mark.timeout(300)

START_S = 150  # a server imports TF; several at once on a busy 2-core machine take a while
TIMEOUT = 8.0  # the chief's session timeout
SERVING = re.compile(
    r"serving \(pid (?P<pid>\d+); from (?P<source>[^;]+);.*started in (?P<s>[\d.]+) s"
)


def _ip(*args, check=True):
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30, check=check)


def _unavailable_reason():
    if sys.platform != "linux":
        return f"network namespaces need Linux, this is {sys.platform}"
    if os.geteuid() != 0:
        return "emulated hosts need root (ip netns add)"
    if shutil.which("ip") is None:
        return "emulated hosts need iproute2 (the ip program)"
    return None


class Hosts:
    """Network namespaces `h1`, `h2`, ... on a bridge in namespace `lan`; this process joined
    to the bridge as 10.213.N.1. Every name carries this run's tag."""

    def __init__(self, count):
        self.tag = f"dp{os.getpid() % 0xFFFFF:x}"
        self.lan = f"{self.tag}lan"
        self.names = [f"{self.tag}h{i}" for i in range(1, count + 1)]
        used = _ip("-4", "addr").stdout
        self.net = next(n for n in range(1, 255) if f"10.213.{n}." not in used)
        self.ips = [f"10.213.{self.net}.{i + 2}" for i in range(count)]
        self.chief_ip = f"10.213.{self.net}.1"
        self.procs = []

    def create(self):
        lan, tag = self.lan, self.tag
        _ip("netns", "add", lan)
        _ip("-n", lan, "link", "add", "br0", "type", "bridge")
        _ip("-n", lan, "link", "set", "br0", "up")
        links = [(None, f"{tag}c", self.chief_ip)]
        links += [
            (ns, f"{tag}v{i}", ip)
            for i, (ns, ip) in enumerate(zip(self.names, self.ips, strict=True))
        ]
        for ns, end, ip in links:
            if ns is not None:
                _ip("netns", "add", ns)
                _ip("-n", ns, "link", "set", "lo", "up")
            _ip("link", "add", end, "type", "veth", "peer", "name", f"{end}p")
            _ip("link", "set", f"{end}p", "netns", lan)
            _ip("-n", lan, "link", "set", f"{end}p", "master", "br0", "up")
            if ns is not None:
                _ip("link", "set", end, "netns", ns)
            where = ["-n", ns] if ns is not None else []
            _ip(*where, "addr", "add", f"{ip}/24", "dev", end)
            _ip(*where, "link", "set", end, "up")

    def remove(self):
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
        for ns in [*self.names, self.lan]:
            found = _ip("netns", "pids", ns, check=False).stdout.split()
            for pid in found:  # only processes inside this run's own namespaces
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except ProcessLookupError:
                    pass
            _ip("netns", "del", ns, check=False)
        _ip("link", "del", f"{self.tag}c", check=False)

    def serve(self, host, args, out, env=None):
        """Start `devplace cluster serve ARGS` in host `host` (0-based); output to `out`."""
        command = ["ip", "netns", "exec", self.names[host], sys.executable, "-m", "devplace"]
        with open(out, "w") as sink:
            proc = subprocess.Popen(
                [*command, "cluster", "serve", *args],
                stdout=sink,
                stderr=subprocess.STDOUT,
                env=dict(os.environ, **(env or {})),
                start_new_session=True,
            )
        self.procs.append(proc)
        return proc


@pytest.fixture(scope="module")
def hosts():
    reason = _unavailable_reason()
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
    assert not any(ns in _ip("netns", "list").stdout for ns in [*emulated.names, emulated.lan])


def _serving(proc, out):
    """Wait until `out` says serving; (server pid, source, start-up seconds)."""
    deadline = time.monotonic() + START_S
    while not (found := SERVING.search(out.read_text())):
        assert proc.poll() is None, f"serve exited with {proc.returncode}:\n{out.read_text()}"
        assert time.monotonic() < deadline, f"not serving after {START_S} s:\n{out.read_text()}"
        time.sleep(0.2)
    return int(found["pid"]), found["source"], float(found["s"])


def _stopped(proc, seconds=30):
    proc.wait(seconds)
    return proc.returncode


def test_a_graph_across_two_hosts_then_a_dead_host_is_named(hosts, tmp_path):
    spec = {"worker": [f"{hosts.ips[0]}:2222", f"{hosts.ips[1]}:2222"]}
    spec_file = tmp_path / "cluster.json"
    spec_file.write_text(json.dumps(spec))
    out0, out1 = tmp_path / "h1.out", tmp_path / "h2.out"
    first = hosts.serve(0, ["--spec", str(spec_file), "--job", "worker", "--cores", "1"], out0)
    tf_config = {"cluster": spec, "task": {"type": "worker", "index": 1}}
    second = hosts.serve(1, [], out1, env={"TF_CONFIG": json.dumps(tf_config)})
    pid0, source0, _ = _serving(first, out0)
    pid1, source1, _ = _serving(second, out1)
    assert source0 == f"spec file {spec_file}" and source1 == "TF_CONFIG"
    assert f"/job:worker/task:0 at {spec['worker'][0]} serving" in out0.read_text()
    # --cores 1: the first core this process may use, for every thread of the server
    assert psutil.Process(pid0).cpu_affinity() == sorted(os.sched_getaffinity(0))[:1]
    assert wait_ready(spec, 30) < 30

    # a second server for the same task on the same host: refused, naming the port's holder
    again = subprocess.run(
        ["ip", "netns", "exec", hosts.names[0], sys.executable, "-m", "devplace", "cluster"]
        + ["serve", "--spec", str(spec_file), "--job", "worker", "--task", "0"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert again.returncode == 1
    assert f"port 2222 is already in use on this host (by pid {pid0}" in again.stderr
    # the task of the other host: refused, naming both hosts' addresses
    elsewhere = subprocess.run(
        ["ip", "netns", "exec", hosts.names[0], sys.executable, "-m", "devplace", "cluster"]
        + ["serve", "--spec", str(spec_file), "--job", "worker", "--task", "1"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert elsewhere.returncode == 1
    assert f"address {spec['worker'][1]} is not this host's" in elsewhere.stderr
    assert hosts.ips[0] in elsewhere.stderr and "Hint" in elsewhere.stderr

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
