"""Seed: evaluate x and y only after a and b, with control dependencies."""

import devplace as dp

a = dp.constant(1.0)
b = a + 2.0

with dp.control_dependencies([a, b]):
    x = dp.constant(3.0)
    y = dp.constant(4.0)

z = x + y

print("x waits for:", [op.name for op in x.op.control_inputs])
sess = dp.Session(optimize=False)
print("z =", dp.run(sess, z))
