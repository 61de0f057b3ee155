"""Seed (the book's dynamic placement function): variables on /cpu:0, other ops on /gpu:0."""

import devplace as dp

tf = dp.tf


def variables_on_cpu(op):
    """The book's function; in TF1 graph mode variables are 'VariableV2' ops."""
    if op.type in ("Variable", "VariableV2"):
        return "/cpu:0"
    return "/gpu:0"


with tf.device(variables_on_cpu):
    a = dp.Variable(3.0)
    b = dp.constant(4.0)
    c = a * b

print("a:", a.device, " b:", b.device, " c:", c.device)

# The same with devplace's table of op types (here: on two logical CPU devices).
with dp.device(dp.by_op_type({"VariableV2": "/cpu:0"}, default="/cpu:1")):
    d = dp.Variable(3.0)
    e = d * 4.0

sess = dp.Session(cpus=2, soft=True)
dp.init(sess)
print("c =", dp.run(sess, c), " e =", dp.run(sess, e))
print(dp.placement(sess, [c, e]))
