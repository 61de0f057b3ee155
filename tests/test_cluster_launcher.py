"""The launcher's own guarantees: bad input, a start that fails, no orphans when its owner dies."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from devplace.cluster import ClusterStartError, LocalCluster, procs

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


def test_a_start_past_its_deadline_names_the_servers_and_leaves_nothing(tmp_path):
    start = time.monotonic()
    with pytest.raises(ClusterStartError, match=r"worker/0 not ready after 0.5 s") as caught:
        LocalCluster(ps=0, workers=1, workdir=tmp_path, start_timeout=0.5).start()
    assert "start_timeout" in str(caught.value)
    assert time.monotonic() - start < 20
    assert _processes_mentioning(str(tmp_path)) == []


def test_servers_do_not_outlive_a_killed_owner(tmp_path):
    owner_code = textwrap.dedent(
        """
        import json, sys, time
        from devplace.cluster import LocalCluster
        cluster = LocalCluster(ps=0, workers=1, workdir=sys.argv[1]).start()
        print(json.dumps(cluster.pids), flush=True)
        time.sleep(120)
        """
    )
    owner = subprocess.Popen(
        [sys.executable, "-c", owner_code, str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    pids = {}
    try:
        pids = json.loads(owner.stdout.readline() or "{}")
        assert "worker/0" in pids
        started = {role: procs.start_time(pid) for role, pid in pids.items()}
        os.kill(owner.pid, signal.SIGKILL)
        owner.wait(timeout=10)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(
            procs.alive(pid, started[role]) for role, pid in pids.items()
        ):
            time.sleep(0.1)
        assert not any(procs.alive(pid, started[role]) for role, pid in pids.items())
    finally:
        owner.kill()
        owner.wait(timeout=10)
        for pid in _processes_mentioning(str(tmp_path)):
            procs.stop(pid, grace=2.0)
