# Seed: `@cpu device_id expr` and `@gpu device_id expr` place every op built in `expr`.
# The device id may be any expression evaluated at run time (ADCME took literals only) and
# defaults to 0.
using DevPlace

@cpu 0 begin
    global a = Variable(1.0)
    global b = sin(a)
end
println("a.device = ", a.device, "  b.device = ", b.device)

@cpu begin
    global a = Variable(1.0)
    global b = sin(a)
end
println("a.device = ", a.device, "  b.device = ", b.device)

for i in 0:1
    @cpu i begin
        global c = cos(b) + i
    end
    println("c.device = ", c.device)
end

@gpu begin
    global d = b * 2
end
println("d.device = ", d.device)

sess = Session(cpus=2, soft=true)
init(sess)
println("c + d = ", run(sess, c + d))
