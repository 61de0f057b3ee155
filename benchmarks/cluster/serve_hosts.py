"""What a cluster across (emulated) hosts takes: start-up to "serving", and naming a dead host.

Two hosts (network namespaces on a private bridge, tests/emulated_hosts.py), each running
`devplace cluster serve` for its task; this process is the chief. Per round: the seconds from
starting `serve` to its "serving" line (both hosts at once, then one alone), until every task
answers (`wait_ready`), one step across both, then how long the chief's `ClusterSession`
takes to raise an error naming the task, for a killed worker (SIGKILL), a host cut off the
network (link down) and a killed master. Needs root and iproute2.

    .venv/bin/python benchmarks/cluster/serve_hosts.py [--rounds 3] [--out results.json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))

from emulated_hosts import Hosts, ip, unavailable_reason  # noqa: E402

import devplace as dp  # noqa: E402
from devplace.cluster import ClusterSession, wait_ready  # noqa: E402

TIMEOUT = 8.0
SERVING = re.compile(r"serving \(pid (?P<pid>\d+);")


def _serving(proc, out: Path) -> tuple[int, float]:
    """(server pid, seconds from now until `out` says serving)."""
    start = time.monotonic()
    while not (found := SERVING.search(out.read_text())):
        if proc.poll() is not None or time.monotonic() - start > 300:
            raise RuntimeError(f"serve did not start:\n{out.read_text()}")
        time.sleep(0.05)
    return int(found["pid"]), time.monotonic() - start


def _named_after(sess, fetch, task: str) -> float:
    start = time.monotonic()
    try:
        sess.run(fetch)
    except dp.tf.errors.OpError as err:
        took = time.monotonic() - start
        if task not in str(err):
            raise RuntimeError(f"the error does not name {task}: {err}") from err
        return took
    raise RuntimeError("the step did not fail")


def one_round(hosts: Hosts, folder: Path, port: int) -> dict[str, float]:
    spec = {"worker": [f"{hosts.ips[0]}:{port}", f"{hosts.ips[1]}:{port}"]}
    spec_file = folder / f"spec-{port}.json"
    spec_file.write_text(json.dumps(spec))
    outs = [folder / f"h{i}-{port}.out" for i in (0, 1)]
    began = time.monotonic()
    procs = [
        hosts.serve(i, ["--spec", str(spec_file), "--job", "worker", "--task", str(i)], outs[i])
        for i in (0, 1)
    ]
    (pid0, up0), (pid1, up1) = (_serving(p, o) for p, o in zip(procs, outs, strict=True))
    up1 = time.monotonic() - began  # both were started together
    ready = wait_ready(spec, 60)
    result = {"serving, two at once (s)": max(up0, up1), "then every task answers (s)": ready}

    graph = dp.tf.Graph()
    with graph.as_default():
        with dp.device("/job:worker/task:0/cpu:0"):
            a = dp.constant([[1.0, 2.0], [3.0, 4.0]])
        with dp.device("/job:worker/task:1/cpu:0"):
            b = dp.tf.matmul(a, a)
        with dp.device("/job:worker/task:0/cpu:0"):
            c = dp.tf.add(b, 1.0)
    sess = ClusterSession(spec, "worker", 0, timeout=TIMEOUT, graph=graph, optimize=False)
    start = time.monotonic()
    sess.run(c)
    result["first step across both (s)"] = time.monotonic() - start

    os.kill(pid1, signal.SIGKILL)
    procs[1].wait(30)
    result["killed worker named (s)"] = _named_after(sess, c, "/job:worker/task:1")
    sess.close()

    # host 2 again, alone; then cut off the network: its peers get no answer at all
    outs[1] = folder / f"h1-{port}-again.out"
    procs[1] = hosts.serve(1, ["--spec", str(spec_file), "--job", "worker", "--task", "1"], outs[1])
    pid1, result["serving, one alone (s)"] = _serving(procs[1], outs[1])
    wait_ready(spec, 60)
    sess = ClusterSession(spec, "worker", 0, timeout=TIMEOUT, graph=graph, optimize=False)
    sess.run(c)
    link = f"{hosts.tag}v1"
    ip("-n", hosts.names[1], "link", "set", link, "down")
    result[f"unreachable host named, timeout {TIMEOUT:g} s (s)"] = _named_after(
        sess, c, "/job:worker/task:1"
    )
    ip("-n", hosts.names[1], "link", "set", link, "up")
    sess.close()

    sess = ClusterSession(spec, "worker", 0, timeout=TIMEOUT, graph=graph, optimize=False)
    os.kill(pid0, signal.SIGKILL)
    procs[0].wait(30)
    result[f"killed master named, timeout {TIMEOUT:g} s (s)"] = _named_after(
        sess, c, "/job:worker/task:0"
    )
    for proc in procs:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, help="write the numbers here as JSON")
    args = parser.parse_args()
    if reason := unavailable_reason():
        print(f"cannot run: {reason}", file=sys.stderr)
        return 1
    hosts = Hosts(2)
    rounds = []
    try:
        hosts.create()
        with tempfile.TemporaryDirectory() as folder:
            for i in range(args.rounds):
                rounds.append(one_round(hosts, Path(folder), 2300 + i))
                print(f"round {i + 1}: {json.dumps(rounds[-1])}", flush=True)
    finally:
        hosts.remove()
    load = os.getloadavg()
    print(f"load average during the run: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"{'':48} {'median':>8} {'min':>8} {'max':>8}")
    for key in rounds[0]:
        values = [r[key] for r in rounds]
        print(f"{key:48} {statistics.median(values):8.2f} {min(values):8.2f} {max(values):8.2f}")
    if args.out:
        args.out.write_text(json.dumps({"rounds": rounds, "loadavg": load}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
