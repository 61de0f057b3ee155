# The shared wire-format vectors (tests/vectors/*.tsv), checked without a host.

function vector_rows(name)
    lines = readlines(joinpath(REPO, "tests", "vectors", name))
    return [split(l, '\t') for l in lines if !isempty(l) && !startswith(l, "#")]
end

@testset "wire vectors" begin
    rows = vector_rows("values.tsv")
    @test length(rows) >= 30
    for (name, hex, jl, py, checks) in rows
        expected = Core.eval(Main, Meta.parse(jl))
        bytes = hex2bytes(hex)
        checks = split(checks, ',')
        if "je" in checks
            @test bytes2hex(D.encode_value(expected)) == hex
        end
        if "jd" in checks
            got = D.decode_value(bytes)
            same(got, expected) || @info "vector $name decoded to" got expected
            @test same(got, expected)
        end
    end
    for (name, hex, kind, seq, body) in vector_rows("frames.tsv")
        bytes = hex2bytes(hex)
        k, s, b = D.read_frame(IOBuffer(bytes))
        @test (k, s, bytes2hex(b)) == (parse(UInt8, kind), parse(UInt32, seq), body)
        io = IOBuffer()
        D.write_frame(io, k, s, Any[b])
        @test bytes2hex(take!(io)) == hex
    end
end

@testset "malformed bytes are WireErrors" begin
    @test_throws D.WireError D.decode_value(UInt8[0x7f])
    @test_throws D.WireError D.decode_value(UInt8[0x03, 0x01])             # truncated int
    @test_throws D.WireError D.decode_value(hex2bytes("06ffffffff"))       # forged count
    @test_throws D.WireError D.decode_value(hex2bytes("0a63"))             # unknown dtype
    @test_throws D.WireError D.decode_value(UInt8[0x00, 0x00])             # bytes left over
    forged = vcat(hex2bytes("0b0c01"), reinterpret(UInt8, [UInt64(1) << 40]))
    @test_throws D.WireError D.decode_value(forged)                        # array beyond frame
    huge = vcat(hex2bytes("0b0c01"), reinterpret(UInt8, [UInt64(1) << 63]))
    @test_throws D.WireError D.decode_value(huge)                          # size ≥ 2^63
    huge_shared = vcat(hex2bytes("0f0c01"), reinterpret(UInt8, [typemax(UInt64)]))
    @test_throws D.WireError D.decode_value(huge_shared)
    deep = vcat(repeat(hex2bytes("0601000000"), D.MAX_DEPTH + 5), UInt8[0])
    @test_throws D.WireError D.decode_value(deep)
    @test_throws D.WireError D.read_frame(IOBuffer(UInt8[3, 0, 0, 0, 1, 1, 1]))
end

@testset "a frame length above the limit is refused at once, not waited for" begin
    r, w = D.os_pipe()
    ccall(:write, Cssize_t, (Cint, Ptr{UInt8}, Csize_t), w, fill(0xff, 4), 4)  # 4 GiB claimed
    pipes = D.FramePipes(r, w)  # the pipe stays open: nothing follows, nothing ends it
    pipes.deadline = time() + 20
    err = try D.read_frame(pipes) catch e e end
    close(pipes)
    @test err isa D.WireError && occursin("above the limit of $(D.MAX_FRAME) bytes", err.msg)
    @test D.MAX_FRAME == 2^31
end

@testset "unsupported Julia values are named, with a hint" begin
    err = try
        D.encode_value(Some(1))
    catch e
        e
    end
    @test err isa ArgumentError
    @test occursin("Some{Int64}", err.msg) && occursin("Hint", err.msg)
    @test_throws ArgumentError D.encode_value(big(2)^70)
    @test_throws ArgumentError D.encode_value(Any[1 2; 3 4])
end

@testset "a direct vector of fetches has the element type decoding gives it" begin
    # in process `plain_vector` finds the element type from the Python types present, by table
    # (PLAIN_VECTORS); decoding a message gets it from `narrow`: the two must agree for every
    # set of types, whatever their order
    samples = (nothing, 2.5, 3, true)
    for mask in 1:(1 << length(samples)) - 1
        values = Any[x for (k, x) in enumerate(samples) if mask & (1 << (k - 1)) != 0]
        for v in (values, reverse(values))
            @test eltype(D.Transports.PLAIN_VECTORS[mask + 1]) == eltype(D.Codec.narrow(v))
        end
    end
    @test D.Transports.PLAIN_TYPES == typeof.(samples)
end
