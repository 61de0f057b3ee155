# Seed: a custom device function, variables on CPU:0 and every other op on GPU:0.
# The Julia function is called by TensorFlow (in the Python host) for every new op.
using DevPlace

PS_OPS = ["Variable", "VariableV2", "AutoReloadVariable"]
function assign_to_device(device, ps_device="/device:CPU:0")
    function _assign(op)
        node_def = pybuiltin("isinstance")(op, tf.NodeDef) ? op : op.node_def
        if node_def.op in PS_OPS
            return ps_device
        else
            return device
        end
    end

    return _assign
end

@pywith tf.device(assign_to_device("/device:GPU:0")) begin
    global a = Variable(1.0)
    global b = sin(a)
end

println("a.device = ", a.device)  # /device:CPU:0
println("b.device = ", b.device)  # /device:GPU:0

# devplace ships the same function (covering every variable-like op, DevPlace.PS_OPS):
@pywith DevPlace.device(DevPlace.assign_to_device("/device:GPU:0")) begin
    global c = Variable(2.0)
    global d = cos(c)
end
println("c.device = ", c.device, "  d.device = ", d.device)

sess = Session(soft=true)
init(sess)
println("sin(1) + cos(2) = ", run(sess, b + d))
