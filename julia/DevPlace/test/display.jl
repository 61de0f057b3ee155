# Rich display from Julia (IJulia, Pluto): `show` with MIME"text/html" and MIME"image/png".

"Width and height of a PNG, from its IHDR chunk."
png_size(bytes) = (ntoh(reinterpret(UInt32, bytes[17:20])[1]),
                   ntoh(reinterpret(UInt32, bytes[21:24])[1]))

@testset "rich display: text/html and image/png" begin
    tf.reset_default_graph()
    a = @cpu 1 sin(constant(1.0; name = "x"))  # a name other than its type
    y = @cpu 0 cos(a)
    sess = Session(cpus = 2, optimize = false)
    report = placement(sess, y)
    @test showable(MIME("text/html"), report)
    @test !showable(MIME("image/png"), report)
    html = sprint(show, MIME("text/html"), report)
    @test occursin("<b>Placement</b>", html)
    # Each op's own row, every cell: op, type, requested, actual, transfers out (Sin's one
    # output crosses to Cos on CPU:0; nothing else leaves its device).
    rows = Dict("x" => ["x", "Const", "/device:CPU:1", "/device:CPU:1", ""],
                "Sin" => ["Sin", "Sin", "/device:CPU:1", "/device:CPU:1", "1"],
                "Cos" => ["Cos", "Cos", "/device:CPU:0", "/device:CPU:0", ""])
    @test sort([op.name for op in report.ops]) == sort(collect(keys(rows)))
    for (name, want) in rows
        starts = findfirst("<tr><td>$(name)</td>", html)
        @test starts !== nothing
        row = html[first(starts):first(findnext("</tr>", html, last(starts)))]
        @test [m.captures[1] for m in eachmatch(r"<td[^>]*>(.*?)</td>", row)] == want
    end
    @test report.actual("Sin") == "/device:CPU:1" && report.actual("Cos") == "/device:CPU:0"

    run_profile(sess, y)
    profile = last_profile()
    @test showable(MIME("image/png"), profile) && showable(MIME("image/svg+xml"), profile)
    @test !showable(MIME("text/html"), profile)
    png = Vector{UInt8}(sprint(show, MIME("image/png"), profile))
    @test png[1:8] == UInt8[0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]
    width, height = png_size(png)
    @test width > 500 && height > 100
    @test occursin("<svg", sprint(show, MIME("image/svg+xml"), profile))

    @test !showable(MIME("text/html"), y)  # a tensor has no rich display, only its text
    @test_throws PyError sprint(show, MIME("image/png"), report)
    @test showable(MIME("text/html"), sess)
    @test occursin("/device:CPU:1", sprint(show, MIME("text/html"), sess))
    sess.close()
end
