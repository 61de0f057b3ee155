# Seed: colocate gradient ops with their forward ops, and save both profiles.
#
# Writes true.json (colocate=true) and false.json (colocate=false), Chrome traces you can open
# in chrome://tracing. The sessions use soft placement (no GPU here); the seed wrote Session().
# `assign_to_device` is devplace's (the seed's own is in device_function.jl).
using DevPlace
using DevPlace: assign_to_device

@pywith tf.device(assign_to_device("/device:GPU:0")) begin
    global a = Variable(1.0)
    global b = sin(a)
end

@pywith tf.device("/CPU:0") begin
    global c = cos(b)
end

g = gradients(c, a, colocate=true)
sess = Session(soft=true); init(sess)
run_profile(sess, g+c)
save_profile("true.json")
println("colocate=true: dc/da + c = ", run(sess, g + c))
println(placement(sess, g + c))

g = gradients(c, a, colocate=false)
sess = Session(soft=true); init(sess)
run_profile(sess, g+c)
save_profile("false.json")
println("colocate=false: dc/da + c = ", run(sess, g + c))
println(placement(sess, g + c))
