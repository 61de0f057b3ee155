# Values through the running host and back: by value, column-major arrays, numpy scalars.

echo(x) = D.request(D.OP_ECHO, (x,))

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
