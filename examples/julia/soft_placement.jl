# Seed: an int32 variable pinned to /gpu:0 fails without soft placement, runs with it.
using DevPlace

@pywith tf.device("/gpu:0") begin
    global i = Variable(Int32(3))
end

try
    Session().run(i.initializer)
catch err
    err isa PyError || rethrow()
    println("without soft placement: ", err.type, ": ", err.message)
end

sess = Session(soft=true)
sess.run(i.initializer)  # the placer runs and falls back to /cpu:0
println("with soft placement: i = ", run(sess, i))
report = placement(sess, i)
println(i.op.name, ": requested ", report[i.op.name].requested, ", ran on ", report.actual(i.op.name))
