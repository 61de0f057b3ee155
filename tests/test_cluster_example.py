"""The cluster examples run end to end on real servers, their own or a running cluster's."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from devplace.cluster import LocalCluster

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "python"
EXAMPLE = EXAMPLES / "cluster_ps_workers.py"
ACROSS_HOSTS = EXAMPLES / "cluster_across_hosts.py"


def _run(*args, cwd, example=EXAMPLE):
    """Run the example with its temporary folders (cluster, checkpoints) in `cwd`."""
    done = subprocess.run(
        [sys.executable, str(example), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=200,
        env=dict(os.environ, TMPDIR=str(cwd)),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    # The cluster's folders go once every server is stopped.
    assert not list(Path(cwd).glob("devplace-cluster-*"))
    assert not list(Path(cwd).glob("devplace-serve-*")) and not list(Path(cwd).glob("cluster-h*"))
    return done.stdout


def test_example_survives_its_ps_crash(tmp_path):
    out = _run(cwd=tmp_path)
    assert (
        "w       VariableV2         /job:ps/task:0/device:CPU:0      /job:ps/replica:0/task:0"
        in out
    )
    assert (
        "b       VariableV2         /job:ps/task:1/device:CPU:0      /job:ps/replica:0/task:1"
        in out
    )
    assert "error: task /job:ps/task:1 at 127.0.0.1:" in out
    assert "restored the checkpoint of step 3" in out
    for line in ("step 4: loss = 0.63948", "step 5: loss = 0.45576"):
        assert out.count(line) >= 2  # the same values before the crash and after the restore
    assert "step 8: loss" in out


def test_example_uses_a_running_cluster(tmp_path):
    with LocalCluster(ps=2, workers=2, start_timeout=120) as cluster:
        spec = cluster.spec
        out = _run("--spec", str(cluster.spec_file), cwd=tmp_path)
    assert f"cluster spec: {spec}" in out
    assert "step 5: loss = 0.45576" in out
    assert "killing" not in out


ACROSS_HOSTS_LINES = [
    "total = [[12.0, 21.0], [26.0, 47.0]]",
    "left ran on /job:worker/replica:0/task:0/device:CPU:0",
    "right ran on /job:worker/replica:0/task:1/device:CPU:0",
    "total ran on /job:worker/replica:0/task:0/device:CPU:0",
]


def test_across_hosts_example_serves_two_tasks_and_stops_them(tmp_path):
    out = _run(cwd=tmp_path, example=ACROSS_HOSTS)
    for line in ACROSS_HOSTS_LINES:
        assert line in out
    assert "/job:worker/task:1 at 127.0.0.1:" in out and "from TF_CONFIG" in out
    assert "from spec file " in out
    assert "devplace: /job:worker/task:0 stopped" in out
    assert "devplace: /job:worker/task:1 stopped" in out


def test_across_hosts_example_uses_a_serving_cluster(tmp_path):
    with LocalCluster(ps=0, workers=2, start_timeout=120) as cluster:
        spec = cluster.spec
        out = _run("--spec", str(cluster.spec_file), cwd=tmp_path, example=ACROSS_HOSTS)
    assert f"cluster spec: {spec}" in out
    for line in ACROSS_HOSTS_LINES:
        assert line in out
    assert "serving" not in out  # it started nothing itself
