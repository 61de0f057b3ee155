"""Seeds: multi-GPU training code, run on one GPU split into four logical GPUs.

Variables pinned round-robin across /gpu:0 to /gpu:3, one tower per GPU computing its slice of
the batch with gradients colocated with the tower's ops, batch-norm moving averages kept (and
updated) on the CPU, the towers' gradients averaged on the CPU. `virtual_gpus=4` makes the four
GPUs out of one; where TensorFlow sees no GPU the same graph runs with soft placement, every op
on the CPU, and the script says so. Which device ran each op comes from the run's metadata.
"""

from collections import Counter

import numpy as np

import devplace as dp

tf = dp.tf
TOWERS = 4
rng = np.random.default_rng(0)

x = dp.placeholder(tf.float32, [None, 8], name="x")
y = dp.placeholder(tf.float32, [None, 1], name="y")
with dp.device(dp.round_robin([f"/gpu:{i}" for i in range(TOWERS)])):
    weights = [
        dp.Variable(rng.normal(0.0, 0.3, size=(8, 16)).astype(np.float32), name="w1"),
        dp.Variable(np.zeros(16, np.float32), name="b1"),
        dp.Variable(rng.normal(0.0, 0.3, size=(16, 1)).astype(np.float32), name="w2"),
        dp.Variable(np.zeros(1, np.float32), name="b2"),
    ]
w1, b1, w2, b2 = weights
with dp.cpu(0):
    x_parts, y_parts = tf.split(x, TOWERS), tf.split(y, TOWERS)

tower_grads, losses = [], []
for i in range(TOWERS):
    # Variables (the batch-norm statistics) on CPU:0, every other op on this tower's GPU.
    with dp.device(dp.assign_to_device(f"/gpu:{i}")), tf.name_scope(f"tower{i}"):
        hidden = tf.nn.relu(dp.bn(tf.matmul(x_parts[i], w1) + b1, name=f"bn{i}"))
        loss = tf.reduce_mean(tf.square(tf.matmul(hidden, w2) + b2 - y_parts[i]))
        tower_grads.append(dp.gradients(loss, weights, colocate=True))
        losses.append(loss)

with dp.cpu(0):
    mean_grads = [tf.add_n(list(grads)) / TOWERS for grads in zip(*tower_grads, strict=True)]
    train = tf.train.GradientDescentOptimizer(0.1).apply_gradients(
        zip(mean_grads, weights, strict=True)
    )
    step = dp.with_updates(train, dp.get_collection(tf.GraphKeys.UPDATE_OPS))
    mean_loss = tf.add_n(losses) / TOWERS

if dp.tf.config.list_physical_devices("GPU"):
    sess = dp.Session(virtual_gpus=TOWERS, optimize=False)
else:
    print("no GPU here: soft placement runs every /gpu:i op on the CPU")
    sess = dp.Session(soft=True, optimize=False)
print("devices:", ", ".join(sess.devices()))
dp.init(sess)

batch_x = rng.normal(size=(64, 8)).astype(np.float32)
batch_y = np.sin(batch_x.sum(axis=1, keepdims=True)).astype(np.float32)
feed = {x: batch_x, y: batch_y}
first = dp.run(sess, mean_loss, feed)
for _ in range(30):
    dp.run(sess, step, feed)
print(f"loss {first:.4f} before, {dp.run(sess, mean_loss, feed):.4f} after 30 steps")

report = dp.placement(sess, step, feed)
for w in weights:
    print(f"{w.op.name}: requested {w.device}, ran on {report.actual(w.op.name)}")
for i in range(TOWERS):
    ran = Counter(op.actual for op in report.ops if op.name.startswith(f"tower{i}/"))
    print(f"tower {i} ran on", ", ".join(f"{d} ({n} ops)" for d, n in sorted(ran.items())))
for op in dp.get_collection(tf.GraphKeys.UPDATE_OPS):
    print(f"{op.name} ran on {report.actual(op.name)}")
