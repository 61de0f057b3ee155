"""Seed: an int32 variable pinned to /gpu:0 fails without soft placement, runs with it."""

import devplace as dp

with dp.tf.device("/gpu:0"):
    i = dp.Variable(3)

try:
    dp.Session().run(i.initializer)
except dp.DevicePlacementError as err:  # a tf.errors.InvalidArgumentError, as in the book
    print("without soft placement:", err)

sess = dp.Session(soft=True)
sess.run(i.initializer)  # the placer runs and falls back to /cpu:0
print("with soft placement: i =", dp.run(sess, i))
report = dp.placement(sess, i)
print(f"{i.op.name}: requested {report[i.op.name].requested}, ran on {report.actual(i.op.name)}")
