"""Multiple devices across multiple machines: one `devplace cluster serve` per host, a chief.

On each host of the cluster (docs/cluster.md, "Across machines", for Slurm, ssh, containers):

    devplace cluster serve --spec cluster.json --job worker --task I    # or TF_CONFIG, or Slurm

The chief (this script) waits until every task answers, runs a graph across the hosts, shows
where each op ran, and stops. By default it starts two "hosts" itself, on loopback ports of
this machine (one task named by the spec file, one by TF_CONFIG), and stops them at the end.

    python examples/python/cluster_across_hosts.py                      # two local "hosts"
    python examples/python/cluster_across_hosts.py --spec cluster.json  # a cluster serving
"""

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import devplace as dp
from devplace import cluster as dpc

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--spec", help="the spec of a cluster whose tasks are serving")
args = parser.parse_args()


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


hosts, workdir = [], tempfile.TemporaryDirectory(prefix="cluster-hosts-")
if args.spec:
    spec = dpc.spec_dict(args.spec)
else:
    spec = {"worker": [f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"]}
    spec_file = Path(workdir.name) / "cluster.json"
    spec_file.write_text(json.dumps(spec))
    serve = [sys.executable, "-m", "devplace", "cluster", "serve"]
    tf_config = {"cluster": spec, "task": {"type": "worker", "index": 1}}
    hosts = [
        subprocess.Popen([*serve, "--spec", str(spec_file), "--job", "worker", "--task", "0"]),
        subprocess.Popen(serve, env=dict(os.environ, TF_CONFIG=json.dumps(tf_config))),
    ]
try:
    print("cluster spec:", spec)
    print(f"every task answers after {dpc.wait_ready(spec, timeout=180):.1f} s")

    # Half of the work on each host; the sum back on the first.
    with dp.device("/job:worker/task:0/cpu:0"):
        x = dp.constant([[1.0, 2.0], [3.0, 4.0]], name="x")
        left = dp.matmul(x, x, name="left")
    with dp.device("/job:worker/task:1/cpu:0"):
        right = dp.matmul(x, x, transpose_b=True, name="right")
    with dp.device("/job:worker/task:0/cpu:0"):
        total = dp.add(left, right, name="total")

    # A session on worker 0 (the master); a dead or hung host is named in its errors.
    with dpc.ClusterSession(spec, "worker", 0, timeout=30, optimize=False) as sess:
        print("total =", sess.run(total).tolist())
        report = dp.placement(sess, total)
    for name in ("left", "right", "total"):
        print(f"{name} ran on {report.actual(name)}")
finally:
    for host in hosts:  # what Ctrl-C or `kill` does on a real host: a clean stop
        host.send_signal(signal.SIGTERM)
        host.wait(30)
    workdir.cleanup()
