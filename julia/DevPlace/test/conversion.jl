# Values through the running host and back: by value, column-major arrays, numpy scalars.

@testset "round trips through the host" begin
    for x in (nothing, true, 42, -1.5, "héllo", (1, "x"), ["a", "b"], Dict("k" => 1.0),
              Float32(2), Int32(-3), UInt8(7), ComplexF64(1, 2), Float16(0.5),
              [1.0, 2.0], [1 2 3; 4 5 6], rand(Float32, 2, 3, 4), [true, false],
              zeros(0, 3), Int8[], Float64, Int32)
        @test same(echo(x), x)
    end
    @test echo(Any[1, "a"]) == Any[1, "a"]
    @test echo(:sym) == "sym"
    @test echo('c') == "c"
    @test echo(π) === Float64(π)
    @test echo(1:3) == [1, 2, 3]
    @test echo(BitArray([true, false])) == [true, false]
    @test echo((a = 1, b = "x")) == Dict("a" => 1, "b" => "x")
    big_array = rand(1000, 1000)
    @test echo(big_array) == big_array
end

@testset "arrays keep Julia's indices in numpy" begin
    np = pyimport("numpy")
    A = [1 2 3; 4 5 6]
    x = pycall(np.asarray, PyObject, A)
    @test x.shape == (2, 3)
    @test x.__getitem__((1, 0)) == A[2, 1]
    @test x.__getitem__((0, 2)) == A[1, 3]
    @test np.ascontiguousarray(x) == A
    @test np.float32(2) === 2.0f0
    @test np.int32(3) === Int32(3)
    @test np.array(2.5) === 2.5
end

@testset "objects stay in Python" begin
    obj = pybuiltin("object")()
    @test obj isa PyObject
    @test startswith(sprint(show, obj), "<object object at")
    lst = pycall(pybuiltin("list"), PyObject, [1, 2])
    lst.append(3)
    @test length(lst) == 3
    @test collect(lst) == [1, 2, 3]
    @test :append in propertynames(lst)
    @test D.pyisinstance(lst, pybuiltin("list"))
    @test D.pyhasattr(lst, "append") && !D.pyhasattr(lst, "nope")
    d = pycall(pybuiltin("dict"), PyObject)
    d["a"] = 1
    @test d["a"] == 1
    @test isequal(lst, lst) && lst == lst && hash(lst) == hash(lst)
    @test_throws ArgumentError echo(Some(1))
    @test echo(1) == 1  # a failed encoding leaves the connection in sync
end

@testset "tuples, dicts and nesting by value, both ways" begin
    nested = (1, (2.5, "x"), Dict("k" => (true, nothing)), [Dict("a" => [1, 2])])
    @test echo(nested) == nested
    @test echo(nested) isa Tuple
    @test echo(Dict(1 => "one", "two" => 2.0)) == Dict(1 => "one", "two" => 2.0)
    py = pybuiltin("eval")("({'a': (1, 2.0), 'b': [None, True]}, (), [], {})")
    @test py isa Tuple && length(py) == 4
    @test py[1] == Dict("a" => (1, 2.0), "b" => [nothing, true])
    @test py[2] === () && isempty(py[3]) && py[4] isa Dict && isempty(py[4])
end

@testset "numpy arrays of any memory order arrive with numpy's indices" begin
    np = pyimport("numpy")
    c = pycall(np.arange, PyObject, 24).reshape(2, 3, 4)  # C order in Python
    @test size(c) == (2, 3, 4) && eltype(c) == Int64
    @test all(c[i, j, k] == (i - 1) * 12 + (j - 1) * 4 + (k - 1) for i in 1:2, j in 1:3, k in 1:4)
    @test pycall(np.arange, PyObject, 6).reshape(2, 3) == [0 1 2; 3 4 5]
    strided = pybuiltin("eval")("__import__('numpy').arange(12.0).reshape(3, 4)[::2, 1::2]")
    @test strided == [1.0 3.0; 9.0 11.0]
    @test np.asfortranarray(np.ones((2, 2), np.float32)) == ones(Float32, 2, 2)
    A = reshape(collect(Int32, 1:24), 2, 3, 4)
    @test np.sum(A; axis = 2) == dropdims(sum(A; dims = 3); dims = 3)  # axes match dims - 1
    @test pycall(np.asarray, PyObject, A).strides == (4, 8, 24)  # column-major in Python too
end

@testset "numpy scalars become Julia numbers of the same type" begin
    np = pyimport("numpy")
    for (name, T) in (("float16", Float16), ("float32", Float32), ("float64", Float64),
                      ("int8", Int8), ("int16", Int16), ("int32", Int32), ("int64", Int64),
                      ("uint8", UInt8), ("uint16", UInt16), ("uint32", UInt32),
                      ("uint64", UInt64), ("complex64", ComplexF32), ("complex128", ComplexF64))
        x = getproperty(np, Symbol(name))(3)
        @test x isa T && x == 3
    end
    @test np.bool_(true) === true
    @test np.float32(1.5) + 1 === 2.5f0
    @test np.zeros((), np.int16) === Int16(0)  # a 0-d array is its element
    @test np.float32 === Float32 && np.dtype("int8").type === Int8  # numeric types by value
end
