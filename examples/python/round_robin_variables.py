"""Pin variables across devices in a round-robin fashion (the book's suggestion).

Here over three logical CPU devices; `dp.greedy_by_bytes` balances by variable size instead.
"""

import devplace as dp

devices = ["/cpu:0", "/cpu:1", "/cpu:2"]
with dp.device(dp.round_robin(devices)):
    weights = [dp.Variable(dp.ones([10 * (i + 1), 10]), name=f"w{i}") for i in range(6)]
total = dp.tf.add_n([dp.reduce_sum(w) for w in weights])

sess = dp.Session(cpus=3)
dp.init(sess)
report = dp.placement(sess, total)
for w in weights:
    print(f"{w.op.name}: requested {w.device}, ran on {report.actual(w.op.name)}")
print("sum of all weights =", dp.run(sess, total))

greedy = dp.greedy_by_bytes(devices)
with dp.device(greedy):
    for i, rows in enumerate([1000, 10, 10, 10, 10]):
        dp.Variable(dp.zeros([rows, 10]), name=f"g{i}")
print("bytes per device after greedy placement:", greedy.load)
