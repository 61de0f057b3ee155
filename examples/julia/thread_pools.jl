# Seed (Parallel Execution): inter-op and intra-op thread pools, per-session pools.
using DevPlace

m = tf.random.normal([300, 300], seed=1)
outputs = [m * m for _ in 1:4]  # four independent matrix products: inter-op parallelism
total = tf.add_n([sum(o) for o in outputs])

sess = Session(inter=2, intra=1, per_session_threads=true)
options = sess.config
println("inter_op_parallelism_threads = ", options.inter_op_parallelism_threads,
        "  intra_op_parallelism_threads = ", options.intra_op_parallelism_threads,
        "  use_per_session_threads = ", options.use_per_session_threads)
println("sum = ", run(sess, total))
