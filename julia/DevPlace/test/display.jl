# Rich display from Julia (IJulia, Pluto): `show` with MIME"text/html" and MIME"image/png".

"Width and height of a PNG, from its IHDR chunk."
png_size(bytes) = (ntoh(reinterpret(UInt32, bytes[17:20])[1]),
                   ntoh(reinterpret(UInt32, bytes[21:24])[1]))

@testset "rich display: text/html and image/png" begin
    tf.reset_default_graph()
    a = @cpu 1 sin(constant(1.0))
    y = @cpu 0 cos(a)
    sess = Session(cpus = 2, optimize = false)
    report = placement(sess, y)
    @test showable(MIME("text/html"), report)
    @test !showable(MIME("image/png"), report)
    html = sprint(show, MIME("text/html"), report)
    @test occursin("<b>Placement</b>", html)
    for op in report.ops  # each op's own row: op, type, requested, actual, transfers out
        starts = findfirst("<tr><td>$(op.name)</td>", html)
        @test starts !== nothing
        row = html[first(starts):first(findnext("</tr>", html, last(starts)))]
        cells = [m.captures[1] for m in eachmatch(r"<td[^>]*>(.*?)</td>", row)]
        @test cells[[1, 3, 4]] == [op.name, op.requested, op.actual]
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
