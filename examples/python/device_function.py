"""Seed: a custom device function, variables on CPU:0 and every other op on GPU:0."""

import devplace as dp

tf = dp.tf
PS_OPS = ["Variable", "VariableV2", "AutoReloadVariable"]


def assign_to_device(device, ps_device="/device:CPU:0"):
    """The seeds' device function, written out as they show it."""

    def _assign(op):
        node_def = op if isinstance(op, tf.NodeDef) else op.node_def
        if node_def.op in PS_OPS:
            return ps_device
        return device

    return _assign


with tf.device(assign_to_device("/device:GPU:0")):
    a = dp.Variable(1.0)
    b = dp.sin(a)

print("a.device =", a.device)  # /device:CPU:0
print("b.device =", b.device)  # /device:GPU:0

# devplace ships the same function (covering every variable-like op, dp.PS_OPS):
with dp.device(dp.assign_to_device("/device:GPU:0")):
    c = dp.Variable(2.0)
    d = dp.cos(c)
print("c.device =", c.device, " d.device =", d.device)

sess = dp.Session(soft=True)
dp.init(sess)
print("sin(1) + cos(2) =", dp.run(sess, b + d))
