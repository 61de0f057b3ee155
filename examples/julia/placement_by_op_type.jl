# Seed (the book's dynamic placement function): variables on /cpu:0, other ops on /gpu:0.
using DevPlace

"The book's function; in TF1 graph mode variables are 'VariableV2' ops."
function variables_on_cpu(op)
    if op.type in ("Variable", "VariableV2")
        return "/cpu:0"
    end
    return "/gpu:0"
end

@pywith tf.device(variables_on_cpu) begin
    global a = Variable(3.0)
    global b = constant(4.0)
    global c = a * b
end

println("a: ", a.device, "  b: ", b.device, "  c: ", c.device)

# The same with devplace's table of op types (here: on two logical CPU devices).
@pywith DevPlace.device(DevPlace.by_op_type(Dict("VariableV2" => "/cpu:0"), default="/cpu:1")) begin
    global d = Variable(3.0)
    global e = d * 4.0
end

sess = Session(cpus=2, soft=true)
init(sess)
println("c = ", run(sess, c), "  e = ", run(sess, e))
println(placement(sess, [c, e]))
