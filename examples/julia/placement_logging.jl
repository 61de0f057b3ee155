# Seed: log every op's device with log_device_placement, and read the log back.
using DevPlace

@cpu begin
    global a = Variable(3.0, name="a")
    global b = constant(4.0, name="b")
end
c = a * b

sess = Session(log_placement=true, soft=true)
a.initializer.run(session=sess)
println("c = ", run(sess, c))
println("captured placement log:")
for line in placement_log(sess)
    println("   ", line)
end
