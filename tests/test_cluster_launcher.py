"""The launcher's own guarantees: bad input, a start that fails, no orphans when its owner dies."""

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from devplace.cluster import ClusterStartError, LocalCluster, netns, procs

pytestmark = pytest.mark.timeout(120)


def _processes_mentioning(text):
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if text in cmdline and procs.alive(int(entry.name)):
                found.append(int(entry.name))
    return found


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"ps": -1}, "ps must be an integer >= 0"),
        ({"workers": 0}, "workers must be an integer >= 1"),
        ({"cpus": True}, "cpus must be an integer >= 1"),
        ({"ps": "2"}, "ps must be an integer >= 0, got '2'"),
    ],
)
def test_bad_sizes_are_refused(kwargs, says):
    with pytest.raises(ValueError, match=says):
        LocalCluster(**kwargs)


def test_not_started_cluster_says_so():
    with pytest.raises(ClusterStartError, match="not started"):
        _ = LocalCluster().spec


@pytest.mark.slow
def test_a_start_past_its_deadline_names_the_servers_and_leaves_nothing(tmp_path):
    start = time.monotonic()
    with pytest.raises(ClusterStartError, match=r"worker/0 not ready after 0.5 s") as caught:
        LocalCluster(ps=0, workers=1, workdir=tmp_path, start_timeout=0.5).start()
    assert "start_timeout" in str(caught.value)
    assert time.monotonic() - start < 20
    assert _processes_mentioning(str(tmp_path)) == []


@pytest.mark.slow
def test_nothing_outlives_a_killed_owner_even_a_stopped_server():
    """SIGKILL of the launcher, with ps/0 stopped (SIGSTOP, so its exit-with-parent thread
    cannot run): the reaper kills every server and removes the work folder, within a bound."""
    owner_code = textwrap.dedent(
        """
        import json, time
        from devplace.cluster import LocalCluster
        cluster = LocalCluster(ps=1, workers=1).start()
        print(json.dumps([cluster.pids, str(cluster.workdir)]), flush=True)
        time.sleep(120)
        """
    )
    owner = subprocess.Popen([sys.executable, "-c", owner_code], stdout=subprocess.PIPE, text=True)
    pids, workdir = {}, None
    try:
        pids, workdir = json.loads(owner.stdout.readline() or "[{}, null]")
        assert {"ps/0", "worker/0"} <= set(pids) and Path(workdir).is_dir()
        assert Path(workdir).name.startswith("devplace-cluster-")
        ours = _processes_mentioning(workdir)
        assert set(pids.values()) - {pids.get("forwarder")} <= set(ours)
        assert len(ours) > len(pids) - ("forwarder" in pids)  # the reaper too
        started = {pid: procs.start_time(pid) for pid in [*pids.values(), *ours]}
        os.kill(pids["ps/0"], signal.SIGSTOP)
        os.kill(owner.pid, signal.SIGKILL)
        owner.wait(timeout=10)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and (
            any(procs.alive(pid, when) for pid, when in started.items()) or Path(workdir).exists()
        ):
            time.sleep(0.1)
        assert [pid for pid, when in started.items() if procs.alive(pid, when)] == []
        assert not Path(workdir).exists()
    finally:
        owner.kill()
        owner.wait(timeout=10)
        owner.stdout.close()
        for pid in pids.values():
            procs.kill_group(pid)
        if workdir:
            for pid in _processes_mentioning(workdir):
                procs.stop(pid, grace=2.0)
            shutil.rmtree(workdir, ignore_errors=True)


@pytest.mark.slow
def test_without_a_namespace_it_warns_once_and_isolate_true_refuses(tmp_path):
    """No `nsenter` on PATH: no namespace. The launch falls back with one clear warning;
    isolate=True refuses. Run inside a throwaway namespace where the OS allows it, so the
    ports this exposes reach nothing (elsewhere every cluster of the suite is exposed anyway)."""
    script = textwrap.dedent(
        """
        import warnings
        import devplace as dp
        from devplace.cluster import ClusterStartError, InsecureClusterWarning, LocalCluster
        try:
            LocalCluster(ps=0, workers=1, isolate=True).start()
        except ClusterStartError as err:
            assert "no loopback-only network namespace here" in str(err), err
            assert "nsenter" in str(err), err
        else:
            raise AssertionError("isolate=True started without a namespace")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for isolate in (None, False):
                with LocalCluster(ps=0, workers=1, isolate=isolate) as cluster:
                    assert not cluster.isolated and "forwarder" not in cluster.pids
                    with cluster.session(timeout=20) as sess:
                        assert sess.run(dp.constant(2.0) * 3.0) == 6.0
        exposed = [w for w in caught if issubclass(w.category, InsecureClusterWarning)]
        assert len(exposed) == 1, exposed
        said = str(exposed[0].message)
        assert "EVERY network interface" in said and "nsenter" in said, said
        print("ok")
        """
    )
    python = [sys.executable, "-c", "exec(open(0).read())"]
    if netns.supported()[0]:
        python = [
            shutil.which("unshare"),
            "-n",
            sys.executable,
            "-c",
            "from devplace.cluster.netns import loopback_up; loopback_up(); exec(open(0).read())",
        ]
    bare = str(tmp_path / "bin")  # a PATH without nsenter (the interpreter is run by full path)
    done = subprocess.run(
        python,
        input=script,
        capture_output=True,
        text=True,
        timeout=100,
        env=dict(os.environ, PATH=bare),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().endswith("ok")


#: A script that leaves its sessions open (one with TF's 60 s remote timeout); with "killed" its
#: servers die under them first, as a cluster stopped from elsewhere does.
OPEN_SESSIONS = """
import sys, time
import devplace as dp, devplace.cluster as dpc

with dpc.LocalCluster(ps=1, workers=1, start_timeout=120) as cluster:
    with dp.device("/job:ps/task:0/cpu:0"):
        w = dp.Variable(1.0)
    sess = cluster.session(timeout=60)
    dp.init(sess)
    other = dp.Session(target=cluster.target("ps", 0))
    print(dp.run(sess, w * 2), dp.run(other, w + 1))
    if sys.argv[1] == "killed":
        cluster.kill("ps", 0)
        cluster.kill("worker", 0)
print("done", flush=True)
"""


@pytest.mark.slow
@pytest.mark.parametrize("how", ["stopped", "killed"])
def test_open_sessions_never_hold_the_interpreter_when_the_cluster_is_gone(tmp_path, how):
    # Was: TF closed each session at exit by asking its gone master, for the whole timeout
    # (docs/cluster.md's example sat 17.1 s, 7.4 s of it after its last line).
    script = tmp_path / "open_sessions.py"
    script.write_text(OPEN_SESSIONS)
    proc = subprocess.Popen(
        [sys.executable, str(script), how],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        lines = [proc.stdout.readline() for _ in range(2)]
        done = time.monotonic()
        assert proc.wait(timeout=90) == 0, proc.stderr.read()
        took = time.monotonic() - done
    finally:
        proc.kill()
    assert lines == ["2.0 2.0\n", "done\n"], proc.stderr.read()
    assert took < 6.0  # the interpreter's own teardown (TF's included) takes 1-3 s here
