"""Multiple devices across multiple servers: parameter servers, workers, and a ps crash.

Starts a local cluster of real TF servers (2 ps tasks, 2 workers), puts the variables on the
ps tasks in turn (round robin, `replica_device_setter` semantics) and the computation on the
workers, shows where every op ran, trains with a checkpoint every 3 steps, kills a ps, starts
it again, restores, and trains on from the restored values.

    python examples/python/cluster_ps_workers.py                 # launches its own cluster
    devplace cluster up --ps 2 --workers 2 --spec-file c.json    # or, in another terminal,
    python examples/python/cluster_ps_workers.py --spec c.json   # use that one (no crash demo)
"""

import argparse
import contextlib
import tempfile

import numpy as np

import devplace as dp
from devplace import cluster as dpc

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--spec", help="a running cluster's spec JSON (from `devplace cluster up`)")
args = parser.parse_args()

with contextlib.ExitStack() as stack:
    if args.spec:
        spec, local = dpc.read_spec(args.spec).as_dict(), None
    else:
        local = stack.enter_context(dpc.LocalCluster(ps=2, workers=2))
        spec = local.spec
        print(f"started {local} in {local.start_seconds['total']:.1f} s")
    print("cluster spec:", spec)

    # Variables on the ps tasks in turn; everything else on worker 1.
    with dp.device("/job:worker/task:1/cpu:0"), dp.device(dp.round_robin(dpc.devices(spec, "ps"))):
        w = dp.Variable(np.zeros((3, 1), np.float32), name="w")
        b = dp.Variable(0.0, name="b")
        x = dp.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], name="x")
        y_true = dp.constant([[1.0], [2.0]], name="y_true")
        loss = dp.reduce_mean(dp.square(dp.matmul(x, w) + b - y_true), name="loss")
        train = dp.tf.train.GradientDescentOptimizer(0.02).minimize(loss)

    checkpoints = dpc.Checkpointer(tempfile.mkdtemp(prefix="cluster-example-"), every=3)

    def session():
        return dpc.ClusterSession(spec, "worker", 0, timeout=10)

    sess = session()
    step = checkpoints.restore_or_init(sess)
    print(dp.placement(sess, loss).table())

    def train_until(last):
        """Train to step `last`; a failing peer means: new session, restore, go on (like
        TF's MonitoredTrainingSession), for as long as `reconnect` finds the cluster."""
        global sess, step
        while step < last:
            try:
                sess.run(train)
            except (dpc.PeerUnavailableError, dpc.PeerAbortedError) as err:
                if local is None:
                    raise
                print("peer failure:", err.message.split(". Hint")[0])
                sess.close()
                sess, step = checkpoints.reconnect(session, timeout=60)
                print(f"restored the checkpoint of step {step}")
                continue
            step += 1
            checkpoints.after_step(sess, step)
            print(f"step {step}: loss = {sess.run(loss):.5f}")

    train_until(5)
    if local is not None:
        print(f"killing /job:ps/task:1 (pid {local.pid('ps', 1)})")
        local.kill("ps", 1)
        try:
            sess.run(train)
        except dpc.PeerUnavailableError as err:
            print("error:", err.message.split(". Hint")[0])
        local.restart("ps", 1)
        print("restarted /job:ps/task:1 (empty)")
        sess.close()
        sess, step = checkpoints.reconnect(session, timeout=60)
        print(f"restored the checkpoint of step {step}")
        train_until(8)
    sess.close()
