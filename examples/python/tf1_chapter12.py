"""TF1 code as it is: servers, a ClusterSpec, replica_device_setter and a shared queue.

Written the way chapter 12 of Géron's "Hands-On Machine Learning" (1st edition) writes
distributed TensorFlow, with one change: `import devplace as dp; tf = dp.tf` instead of
`import tensorflow as tf`. Everything else is plain TF1. devplace then adds what ran where
(`dp.placement`), a profile (`dp.run_profile`, `dp.save_profile`) and its picture.

    python examples/python/tf1_chapter12.py [OUT]  # writes OUT/queue.json and OUT/queue.png

OUT defaults to `out/tf1_chapter12` under the current folder (git ignores `out/`).

The servers run in this process, as in the book; like every TF server they listen on all
interfaces without authentication, for as long as the script runs (`devplace.cluster.
LocalCluster` runs them in a loopback-only namespace instead).
"""

import socket
import sys
from pathlib import Path

import numpy as np

import devplace as dp  # was: import tensorflow as tf

tf = dp.tf
out = Path(sys.argv[1] if len(sys.argv) > 1 else "out/tf1_chapter12")
out.mkdir(parents=True, exist_ok=True)


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


cluster_spec = tf.train.ClusterSpec(
    {
        "ps": [f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"],
        "worker": [f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"],
    }
)
task_ps0 = tf.train.Server(cluster_spec, job_name="ps", task_index=0)
task_ps1 = tf.train.Server(cluster_spec, job_name="ps", task_index=1)
task_worker0 = tf.train.Server(cluster_spec, job_name="worker", task_index=0)
task_worker1 = tf.train.Server(cluster_spec, job_name="worker", task_index=1)

# Variables on the ps tasks in turn, everything else on the workers.
with tf.device(
    tf.train.replica_device_setter(ps_tasks=2, ps_device="/job:ps", worker_device="/job:worker")
):
    w = tf.Variable([[1.0], [2.0]], name="w")  # /job:ps/task:0
    b = tf.Variable(0.5, name="b")  # /job:ps/task:1

# A queue on ps 0, shared by name: worker 0 fills it, worker 1 reads it.
with tf.device("/job:ps/task:0"):
    q = tf.FIFOQueue(
        capacity=10, dtypes=[tf.float32], shapes=[[2]], name="q", shared_name="shared_q"
    )
    training_instance = tf.placeholder(tf.float32, shape=[2])
    enqueue = q.enqueue([training_instance])
with tf.device("/job:worker/task:1/cpu:0"):
    batch = q.dequeue_many(2, name="batch")
    y = tf.add(tf.matmul(batch, w), b, name="y")

init = tf.global_variables_initializer()
# a bound on every wait: a dequeue on an empty queue fails after 60 s instead of hanging
config = tf.ConfigProto(operation_timeout_in_ms=60_000)

with tf.Session(task_worker0.target, config=config) as sess:
    sess.run(init)
    for row in np.arange(12, dtype=np.float32).reshape(6, 2):
        sess.run(enqueue, feed_dict={training_instance: row})
    print("queued:", sess.run(q.size()))

with tf.Session(task_worker1.target, config=config) as sess:
    print("y =", sess.run(y).ravel().tolist())  # rows [0, 1], [2, 3]
    # what devplace adds, each a run of its own (each dequeues the next two rows):
    report = dp.placement(sess, y)  # requested and actual device per op, transfers
    print(report)
    profile = dp.run_profile(sess, y)
    print("y =", np.ravel(profile.values).tolist())  # rows [8, 9], [10, 11]
    dp.save_profile(out / "queue.json")  # chrome://tracing, Perfetto, `devplace profile show`
    trace = dp.plot_profile(out / "queue.json", out / "queue.png")
    print(f"profile: {len(trace.ops)} ops on {len(trace.devices)} devices, picture {out}/queue.png")
