"""Seed: create a variable and compute sin(a) on GPU:0 with a device scope.

On a machine without a GPU the session uses soft placement: `op.device` keeps the request,
and the placement report shows where each op really ran.
"""

import devplace as dp

with dp.tf.device("/GPU:0"):
    a = dp.Variable(1.0)
    b = dp.sin(a)

print("a.device =", a.device)
print("b.device =", b.device)

sess = dp.Session(soft=True)
dp.init(sess)
print("sin(1) =", dp.run(sess, b))
print(dp.placement(sess, b))
