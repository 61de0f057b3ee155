# Seed: evaluate x and y only after a and b, with control dependencies.
using DevPlace

a = constant(1.0)
b = a + 2.0

control_dependencies([a, b]) do
    global x = constant(3.0)
    global y = constant(4.0)
end

z = x + y

println("x waits for: ", [op.name for op in x.op.control_inputs])
sess = Session(optimize=false)
println("z = ", run(sess, z))
