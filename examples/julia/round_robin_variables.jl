# Pin variables across devices in a round-robin fashion (the book's suggestion).
#
# Here over three logical CPU devices; `DevPlace.greedy_by_bytes` balances by variable size.
using DevPlace

devices = ["/cpu:0", "/cpu:1", "/cpu:2"]
@pywith DevPlace.device(DevPlace.round_robin(devices)) begin
    global weights = [Variable(tf.ones([10 * i, 10]), name="w$(i - 1)") for i in 1:6]
end
total = tf.add_n([sum(w) for w in weights])

sess = Session(cpus=3)
init(sess)
report = placement(sess, total)
for w in weights
    println(w.op.name, ": requested ", w.device, ", ran on ", report.actual(w.op.name))
end
println("sum of all weights = ", run(sess, total))

greedy = DevPlace.greedy_by_bytes(devices)
@pywith DevPlace.device(greedy) begin
    for (i, rows) in enumerate([1000, 10, 10, 10, 10])
        Variable(tf.zeros([rows, 10]), name="g$(i - 1)")
    end
end
println("bytes per device after greedy placement: ", greedy.load)
