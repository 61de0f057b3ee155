"""Seed: colocate gradient ops with their forward ops, and save both profiles.

Writes true.json (colocate=True) and false.json (colocate=False), Chrome traces you can open
in chrome://tracing or draw with `devplace profile compare true.json false.json -o c.png`.

The seeds pin `sin` to GPU:0. Without a GPU, soft placement would move it to CPU:0 next to
everything else and both settings would show 0 transfers; so there, as `devplace demo` does,
the seeds' GPU:0 is a second logical CPU device and the transfers are real.
"""

import devplace as dp

tf = dp.tf

if tf.config.list_physical_devices("GPU"):
    gpu, cpus = "/device:GPU:0", None
else:
    gpu, cpus = "/device:CPU:1", 2
    print(f"no GPU here: the seeds' /device:GPU:0 is logical {gpu} (a session with 2 CPUs)")

with dp.device(dp.assign_to_device(gpu)):
    a = dp.Variable(1.0)
    b = dp.sin(a)

with tf.device("/CPU:0"):
    c = dp.cos(b)

for colocate in (True, False):
    g = dp.gradients(c, a, colocate=colocate)
    # optimize=False: Grappler would fold and fuse ops across devices and blur the placement.
    sess = dp.Session(cpus=cpus, soft=True, optimize=False)
    dp.init(sess)
    dp.run_profile(sess, g + c)
    dp.save_profile(f"{str(colocate).lower()}.json")
    print(f"colocate={colocate}: dc/da + c = {dp.run(sess, g + c):.6f}")
    print(dp.placement(sess, g + c))
