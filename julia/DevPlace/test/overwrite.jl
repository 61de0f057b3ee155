# DevPlace's source evaluated with `--warn-overwrite=yes`: a method defined twice (a later file's
# definition silently replacing an earlier one's) prints "Method definition ... overwritten".
# Compiled modules are off, so the source is evaluated, not read from the precompile cache.

@testset "no method of DevPlace is overwritten while it loads" begin
    project = joinpath(REPO, "julia", "DevPlace")
    cmd = `$(Base.julia_cmd()) --project=$project --compiled-modules=no --warn-overwrite=yes
           -e "using DevPlace"`
    out = Pipe()
    env = push!(copy(ENV), "DEVPLACE_PRESTART" => "0")
    p = run(pipeline(setenv(cmd, env); stdout = out, stderr = out); wait = false)
    close(out.in)
    reader = @async read(out, String)
    timedwait(() -> process_exited(p), 600.0) === :ok || kill(p)
    text = fetch(reader)
    @test success(p) || (println(text); false)
    overwritten = filter(l -> occursin(r"Method definition .* overwritten", l), split(text, '\n'))
    @test isempty(overwritten) || (foreach(println, overwritten); false)
end
