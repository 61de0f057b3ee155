"""Seed (Parallel Execution): inter-op and intra-op thread pools, per-session pools."""

import devplace as dp

m = dp.tf.random.normal([300, 300], seed=1)
outputs = [dp.matmul(m, m) for _ in range(4)]  # four independent ops: inter-op parallelism
total = dp.tf.add_n([dp.reduce_sum(o) for o in outputs])

sess = dp.Session(inter=2, intra=1, per_session_threads=True)
options = sess.config
print(
    "inter_op_parallelism_threads =",
    options.inter_op_parallelism_threads,
    " intra_op_parallelism_threads =",
    options.intra_op_parallelism_threads,
    " use_per_session_threads =",
    options.use_per_session_threads,
)
print("sum =", dp.run(sess, total))
