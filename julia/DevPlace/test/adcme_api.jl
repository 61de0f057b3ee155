# ADCME's core API (src/adcme/): every name of ADCME's core, variable, ops and random files is
# defined and documented, and each function gives ADCME's result, checked against plain Julia.

using LinearAlgebra, Statistics

"Rows of julia/DevPlace/ADCME_NAMES.tsv: name, ADCME file, DevPlace file."
adcme_names() = [split(l, '\t') for l in readlines(joinpath(@__DIR__, "..", "ADCME_NAMES.tsv"))[2:end]]

@testset "every name ADCME exports is defined, exported and documented" begin
    rows = adcme_names()
    @test length(rows) >= 149 && allunique(first.(rows))
    @test [n for (n, _, _) in rows if !isdefined(DevPlace, Symbol(n))] == []
    @test [n for (n, _, _) in rows if !(Base.isexported(DevPlace, Symbol(n)) ||
                                        isdefined(Base, Symbol(n)))] == []
    @test [n for (n, _, _) in rows if !documented(Symbol(n))] == []
    @test [f for (_, _, fs) in rows for f in split(fs, ", ")
           if !isfile(joinpath(@__DIR__, "..", "src", f))] == []
    # an export that Base has too would hide both: DevPlace exports Base's own, extended
    @test [n for n in names(DevPlace) if isdefined(Base, n) &&
           getfield(Base, n) !== getfield(DevPlace, n)] == []
end

"The error `f()` throws."
error_of(f) = try; f(); nothing; catch e; e; end

@testset "ADCME core: graph, control flow, gradients stopped" begin
    reset_default_graph()
    sess = Session()
    x = constant([1.0, 2.0]; name = "adcme_x")
    @test tensorname(x) == "adcme_x:0" && run(sess, tensor("adcme_x:0")) == [1.0, 2.0]
    # control_dependencies with one tensor, a vector, a tuple; bind
    v = Variable(0.0)
    w = Variable(0.0)
    local y
    control_dependencies(assign(v, 2.0)) do
        y = x .* 1.0
    end
    init(sess)
    run(sess, y)
    @test run(sess, v) == 2.0
    control_dependencies([assign(v, 3.0), assign(w, 4.0)]) do
        y = x .* 1.0
    end
    run(sess, y)
    @test run(sess, [v, w]) == [3.0, 4.0]
    z = bind(x .* 2.0, assign(w, 5.0))
    @test run(sess, z) == [2.0, 4.0] && run(sess, w) == 5.0
    # while_loop with a TensorArray, indices from 1 (ADCME's docstring example: sum 1..10)
    ta = TensorArray(10)
    ta = write(ta, 1, constant(1.0))
    i = constant(2; dtype = Int32)
    _, out = while_loop((i, ta) -> i <= 10, (i, ta) -> (i + 1, write(ta, i, read(ta, i - 1) + 1)),
                        [i, ta])
    s = stack(out)
    @test run(sess, s) == collect(1.0:10.0) && size(s) == (10,) || size(s) == (nothing,)
    @test get_dtype(s) == Float64
    n = while_loop(i -> i < 10, i -> i + 2, constant(Int32(1)))  # one loop variable: a tensor
    @test run(sess, n) === Int32(11)
    err = error_of(() -> while_loop((i, ta) -> i <= 10, (i, ta) -> (i + 1, ta), [constant(1), ta]))
    @test err isa ArgumentError && occursin("Int32", err.msg)
    # if_else: scalar condition (tf.cond) and elementwise (tf.where)
    a = constant(2.0)
    @test run(sess, if_else(a > 1.0, a * 2, a + 3.0)) == 4.0
    @test run(sess, if_else(a < 1.0, () -> a * 2, () -> a + 3.0)) == 5.0
    @test run(sess, if_else(true, constant(1.0), constant(2.0))) == 1.0
    c = [true false; false true]
    r = run(sess, if_else(c, [1 1; 1 1], [2 2; 2 2]))
    @test r == ifelse.(c, 1, 2) && eltype(r) == Int
    # independent / stop_gradient: no gradient flows back
    p = constant(rand(3))
    @test gradients(sum(independent(2p)), p) === nothing
    @test gradients(sum(stop_gradient(2p)), p) === nothing
    @test run(sess, gradients(sum(2p), p)) == fill(2.0, 3)
    # MPI and eager mode, answered as ADCME without MPI
    @test has_mpi() === false && has_mpi(false) === false
    @test_throws ErrorException get_mpi()
    @test_throws ErrorException get_mpirun()
    err = error_of(enable_eager_execution)
    @test err isa ErrorException && occursin("graph mode", err.msg)
end

@testset "reset_default_graph: a new graph, old sessions say so, nothing crashes" begin
    reset_default_graph()
    old = Session()
    a = constant(1.0)
    @test run(old, a) == 1.0
    @test reset_default_graph() === nothing
    b = constant(2.0)
    err = error_of(() -> run(old, b))
    @test err isa PyError && occursin("no longer the default graph", err.message) &&
          occursin("new Session()", err.message)
    @test run(Session(), b) == 2.0
    @test run(old, a) == 1.0  # the old session still runs its own graph
end

@testset "GPU facts come from the host" begin
    g = get_gpu()
    @test g isa NamedTuple && keys(g) == (:NVCC, :LIB, :INC, :TOOLKIT, :CUDNN)
    host_gpus = DevPlace.tf.config.list_physical_devices("GPU")
    @test has_gpu() == !isempty(host_gpus)
    text = mktemp() do path, io
        redirect_stdout(io) do
            @test gpu_info() === nothing
        end
        close(io)
        read(path, String)
    end
    @test occursin("Number of GPUs: $(length(host_gpus))", text)
    has_gpu() || @test occursin("no GPU", text)
end

@testset "ADCME variable: making tensors, types and shapes" begin
    reset_default_graph()
    sess = Session()
    @test get_dtype(constant(rand(10, 10))) == Float64
    @test get_dtype(Variable(rand(Int64, 10, 10))) == Int64
    @test get_dtype(constant(Float32[1])) == Float32 && get_dtype(constant(Int32(1))) == Int32
    @test get_dtype(constant(true)) == Bool && get_dtype(constant("s")) === nothing
    t = constant([1.0, 2.0])
    @test constant(t) === t && get_dtype(constant(t; dtype = Float32)) == Float32
    # convert_to_tensor
    @test run(sess, convert_to_tensor([1.0, 2.0])) == [1.0, 2.0]
    @test convert_to_tensor(t) === t && get_dtype(convert_to_tensor(t; dtype = Float32)) == Float32
    @test get_dtype(convert_to_tensor(5; dtype = Float64)) == Float64
    @test convert_to_tensor(missing) === missing && convert_to_tensor(nothing) === nothing
    cs = convert_to_tensor([1.0, t, [3, 4]], [Float32, Float64, Int32])
    @test get_dtype.(cs) == [Float32, Float64, Int32] && run(sess, cs[3]) == Int32[3, 4]
    # placeholders: ADCME's default shape is a scalar; a tensor gives its default value
    p = placeholder(Float64)
    @test size(p) == () && run(sess, 2p, p => 3.0) == 6.0
    q = placeholder(constant([1.0, 2.0]))
    @test size(q) == (2,) && run(sess, q) == [1.0, 2.0] && run(sess, q, q => [5.0, 6.0]) == [5.0, 6.0]
    # set_shape
    u = placeholder(Float64; shape = [nothing, 10])
    @test size(set_shape(u, 3, 10)) == (3, 10) && size(u) == (3, 10)
    @test_throws PyError run(sess, u, u => rand(5, 10))
    # get_variable and variable_scope: the same name gives the same variable
    v1 = get_variable(rand(10, 10); name = "test_get_variable")
    v2 = get_variable(rand(10, 10); name = "test_get_variable")
    @test v1 == v2 && get_dtype(v1) == Float64
    w = get_variable(Float64; shape = [10, 20])
    @test size(w) == (10, 20) && get_dtype(w) == Float64
    w2 = get_variable(Float32, (2, 3), "w2", "scope1")
    @test w2.name == "scope1/w2:0" && get_dtype(w2) == Float32
    local w3
    variable_scope("outer") do
        w3 = get_variable("w3"; shape = [2], dtype = Float64, initializer = constant_initializer(7.0))
    end
    @test w3.name == "outer/w3:0"
    init(sess)
    @test run(sess, w3) == [7.0, 7.0]
    # zeros_like, ones_like, copy, is_variable
    a = rand(4, 3)
    @test run(sess, ones_like(a)) == ones(4, 3) && run(sess, zeros_like(constant(a))) == zeros(4, 3)
    @test get_dtype(ones_like(constant(Int32[1, 2]))) == Int32
    @test run(sess, copy(v1)) == run(sess, v1)
    @test is_variable(Variable(rand(3))) === true && is_variable(constant(rand(3))) === false
    @test is_variable(Variable(1.0; trainable = false)) === false
    # sym, spd
    A = rand(4, 4)
    @test run(sess, sym(A)) ≈ (A + A') / 2 && run(sess, sym(constant(A))) ≈ (A + A') / 2
    @test run(sess, spd(constant(A))) ≈ A * A' && all(eigvals(Symmetric(run(sess, spd(A)))) .> -1e-12)
    @test_throws ArgumentError spd(rand(2, 3))
    # cell: a ragged tensor
    r = cell([[1.0], [2.0, 3.0]])
    @test run(sess, r.flat_values) == [1.0, 2.0, 3.0] && run(sess, r.row_lengths()) == [1, 2]
    @test run(sess, r[1]) == [1.0] && run(sess, r[2]) == [2.0, 3.0]
    @test get_dtype(cell([[1], [2, 3]])) == Int64
    # tensor: a tensor from Julia arrays holding tensors; gradients flow to them
    x = Variable(0.5)
    g = tensor([1; x; 0])
    G = tensor([1 x 0; x 1 0; 0 0 (1 - x) / 2])
    init(sess)
    @test size(g) == (3,) && run(sess, g) == [1.0, 0.5, 0.0] && get_dtype(G) == Float64
    @test size(G) == (3, 3) && run(sess, G) == [1 0.5 0; 0.5 1 0; 0 0 0.25]
    @test run(sess, gradients(2sum(g), x)) ≈ 2.0 && run(sess, gradients(sum(G), x)) ≈ 1.5
    @test get_dtype(tensor([1, 2]; dtype = Float32)) == Float32
    @test_throws ErrorException gradient_checkpointing()
end

@testset "ADCME variable: derivatives" begin
    reset_default_graph()
    sess = Session()
    # hessian and hessian_vector of f(x, y) = x² + 2xy + 3y² + 4x + 5y + 6
    x = Variable(randn(Float32))
    y = Variable(randn(Float32))
    g = stack([x, y])
    f = g[1]^2 + 2 * g[1] * g[2] + 3 * g[2]^2 + 4 * g[1] + 5 * g[2] + 6
    H = Float32[2 2; 2 6]
    v = rand(Float32, 2)
    init(sess)
    h = run(sess, hessian(f, g))
    @test h ≈ H && eltype(h) == Float32 && size(h) == (2, 2)
    @test run(sess, hessian_vector(f, g, v)) ≈ H * v
    # jacobian and the gradients of a vector (ADCME's shapes)
    A = rand(20, 10)
    xs = constant(rand(10))
    ys = A * xs
    @test run(sess, jacobian(ys, xs)) ≈ A && size(jacobian(ys, xs)) == (20, 10)
    @test run(sess, gradients(ys, xs)) ≈ A
    s = constant(1.0)
    @test run(sess, gradients(stack([s, s, s]), s)) == [1.0, 1.0, 1.0]
    # gradients of each y of a vector separately
    a, b = constant(2.0), constant(3.0)
    gs = gradients([a * b, a + b], a)
    @test gs isa Vector && run(sess, gs) == [3.0, 1.0]
    # gradient_magnitude
    p, q = constant(rand(10)), constant(rand(20))
    l = sum(p) + 2sum(q)
    @test run(sess, gradient_magnitude(l, [p, q])) ≈ sqrt(10 + 4 * 20)
    @test run(sess, gradient_magnitude(l, p)) ≈ sqrt(10)
    # TensorArray reads and writes from 1, gradients through them
    ta = TensorArray(4)
    c = constant(1.0)
    ta = write(ta, 1, c)
    ta = write(ta, 2, read(ta, 1) + c)
    ta = write(ta, 3, read(ta, 2) + c)
    ta = write(ta, 4, read(ta, 2) + read(ta, 3) + c)
    @test run(sess, read(ta, 4)) == 6.0 && run(sess, gradients(read(ta, 4), c)) == 6.0
    ti = stack(write(TensorArray(1; dtype = Int32), 1, constant(Int32(3))))
    @test run(sess, ti) == Int32[3] && get_dtype(ti) == Int32
end

@testset "gradients_colocate: each gradient op on its forward op's device" begin
    reset_default_graph()
    sess = Session(cpus = 2)
    @cpu 1 begin
        global adcme_a = constant(rand(3, 3))
        global adcme_b = 2adcme_a
    end
    gc = gradients_colocate(sum(adcme_b), adcme_a)
    @test gc.device == "/device:CPU:1" && run(sess, gc) == fill(2.0, 3, 3)
    report = placement(sess, gc)
    @test report.actual(gc.op.name) == "/device:CPU:1"
    gs = gradients_colocate(sum(adcme_b), [adcme_a])
    @test gs isa Vector && length(gs) == 1
end

@testset "ADCME initializers are TF's" begin
    reset_default_graph()
    sess = Session()
    for (init_fn, check) in ((constant_initializer(3.0), x -> all(x .== 3)),
                             (random_normal_initializer(0.0, 1e-3), x -> maximum(abs, x) < 0.1),
                             (random_uniform_initializer(2.0, 3.0), x -> all(2 .<= x .< 3)),
                             (truncated_normal_initializer(0.0, 1.0), x -> maximum(abs, x) <= 2),
                             (glorot_normal_initializer(), x -> all(isfinite, x)),
                             (uniform_unit_scaling_initializer(), x -> all(isfinite, x)),
                             (variance_scaling_initializer(), x -> all(isfinite, x)))
        v = get_variable(string("init_", rand(UInt32)); shape = [50, 4], dtype = Float64,
                         initializer = init_fn)
        init(sess)
        value = run(sess, v)
        @test size(value) == (50, 4) && eltype(value) == Float64 && check(value)
    end
end

@testset "README, Coming from ADCME: the example gives what its comments say" begin
    readme = read(joinpath(@__DIR__, "..", "..", "..", "README.md"), String)
    code = match(r"```julia\n(.*?)```"s, split(readme, "## Coming from ADCME")[2]).captures[1]
    m = Module()
    Core.eval(m, :(using DevPlace))
    J, y, k, xi = include_string(m, code)
    @test J ≈ [1.0 0 2; 0 1 0] && size(J) == (2, 3)
    @test y == [11.0, 2.0, 23.0] && k === 3 && xi === 2.0
    @test Core.eval(m, :(run(sess, H))) ≈ Matrix(1.0I, 3, 3)
end
