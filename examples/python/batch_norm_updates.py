"""Seed: batch normalisation on several devices, its parameter updates on the CPU.

The variables (and so the moving-average updates, which TF keeps with their variables) live on
the CPU; the update ops are collected from UPDATE_OPS under a CPU scope and bound to the
training op, so running the training step also updates the moving averages.
"""

import numpy as np

import devplace as dp

tf = dp.tf
x = dp.placeholder(tf.float32, [None, 4], name="x")

with dp.device(dp.assign_to_device("/device:CPU:1")):
    y = dp.bn(x, training=True)
    loss = dp.reduce_sum(dp.square(y))

with dp.cpu(0):
    update_ops = dp.get_collection(tf.GraphKeys.UPDATE_OPS)
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    train_with_updates = dp.with_updates(train, update_ops)

sess = dp.Session(cpus=2)
dp.init(sess)
batch = np.random.default_rng(0).normal(3.0, 2.0, size=(64, 4)).astype(np.float32)
for _ in range(20):
    dp.run(sess, train_with_updates, {x: batch})

moving_mean = [v for v in tf.global_variables() if "moving_mean" in v.name][0]
print("update ops:", [op.name for op in update_ops])
print("moving mean after 20 steps:", dp.run(sess, moving_mean))
report = dp.placement(sess, train_with_updates, {x: batch})
for op in update_ops:
    print(f"{op.name} ran on {report.actual(op.name)}")
