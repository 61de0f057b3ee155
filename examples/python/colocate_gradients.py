"""Seed: colocate gradient ops with their forward ops, and save both profiles.

Writes true.json (colocate=True) and false.json (colocate=False), Chrome traces you can open
in chrome://tracing or draw with `devplace profile compare true.json false.json -o c.png`.
"""

import devplace as dp

tf = dp.tf

with dp.device(dp.assign_to_device("/device:GPU:0")):
    a = dp.Variable(1.0)
    b = dp.sin(a)

with tf.device("/CPU:0"):
    c = dp.cos(b)

for colocate in (True, False):
    g = dp.gradients(c, a, colocate=colocate)
    sess = dp.Session(soft=True)
    dp.init(sess)
    dp.run_profile(sess, g + c)
    dp.save_profile(f"{str(colocate).lower()}.json")
    print(f"colocate={colocate}: dc/da + c = {dp.run(sess, g + c):.6f}")
    print(dp.placement(sess, g + c))
