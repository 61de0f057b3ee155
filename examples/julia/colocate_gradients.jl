# Seed: colocate gradient ops with their forward ops, and save both profiles.
#
# Writes true.json (colocate=true) and false.json (colocate=false), Chrome traces you can open
# in chrome://tracing. `assign_to_device` is devplace's (the seed's own is in device_function.jl).
#
# The seeds pin `sin` to GPU:0. Without a GPU, soft placement would move it to CPU:0 next to
# everything else and both settings would show 0 transfers; so there, as `devplace demo` does,
# the seeds' GPU:0 is a second logical CPU device (a session with 2 CPUs) and the transfers are
# real.
using DevPlace
using DevPlace: assign_to_device

if isempty(tf.config.list_physical_devices("GPU"))
    gpu, cpus = "/device:CPU:1", 2
    println("no GPU here: the seeds' /device:GPU:0 is logical $gpu (a session with 2 CPUs)")
else
    gpu, cpus = "/device:GPU:0", nothing
end

@pywith tf.device(assign_to_device(gpu)) begin
    global a = Variable(1.0)
    global b = sin(a)
end

@pywith tf.device("/CPU:0") begin
    global c = cos(b)
end

for colocate in (true, false)
    g = gradients(c, a, colocate=colocate)
    # optimize=false: Grappler would fold and fuse ops across devices and blur the placement.
    sess = Session(cpus=cpus, soft=true, optimize=false); init(sess)
    run_profile(sess, g + c)
    save_profile("$colocate.json")
    println("colocate=$colocate: dc/da + c = ", run(sess, g + c))
    report = placement(sess, g + c)
    println("colocate=$colocate: ", report.transfer_count, " transfers")
    println(report)
end
