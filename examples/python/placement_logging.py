"""Seed: log every op's device with log_device_placement, and read the log back."""

import devplace as dp

with dp.cpu():
    a = dp.Variable(3.0, name="a")
    b = dp.constant(4.0, name="b")
c = a * b

sess = dp.Session(log_placement=True, soft=True)
a.initializer.run(session=sess)
print("c =", dp.run(sess, c))
print("captured placement log:")
for line in dp.placement_log(sess):
    print("  ", line)
