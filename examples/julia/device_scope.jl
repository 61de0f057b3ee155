# Seed: create a variable and compute sin(a) on GPU:0 with a device scope.
#
# On a machine without a GPU the session uses soft placement: `op.device` keeps the request,
# and the placement report shows where each op really ran.
using DevPlace

@pywith tf.device("/GPU:0") begin
    global a = Variable(1.0)
    global b = sin(a)
end

println("a.device = ", a.device)
println("b.device = ", b.device)

sess = Session(soft=true)
init(sess)
println("sin(1) = ", run(sess, b))
println(placement(sess, b))
