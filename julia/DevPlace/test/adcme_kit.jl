# ADCME's views (src/adcme/kit.jl): the numbers they compute against the losses by hand, and the
# figures they leave in the host's pyplot (read back from matplotlib, saved as PNG or GIF).

using LinearAlgebra, SparseArrays

const PLT = pyimport("matplotlib.pyplot")

"The y values of the lines on the current axes of the host's pyplot."
current_lines() = [Float64.(l.get_ydata()) for l in PLT.gca().get_lines()]

"Save the current figure to `file` and check it is a PNG."
function saved_png(file)
    PLT.savefig(abspath(file))
    return read(file)[1:8] == b"\x89PNG\r\n\x1a\n"
end

"The ratios of consecutive errors of a gradient test: 10 where they fall as γ, 100 as γ²."
ratios(v) = v[1:end-1] ./ v[2:end]

@testset "lineview, meshview, pcolormeshview: the losses on a line and a plane, drawn" begin
    reset_default_graph()
    sess = Session()
    a = placeholder(rand(10))
    loss = sum((a + 1)^2)
    cd(mktempdir()) do
        # From θ1 = -1 (loss 0) to θ2 = 1: the point -1 + 2α has loss 10(2α)².
        V = lineview(sess, a, loss, -ones(10), ones(10); n = 5)
        @test V ≈ 40 .* LinRange(0, 1, 5) .^ 2
        @test current_lines() == [V] && PLT.gca().get_xlabel() == "\$\\alpha\$"
        @test saved_png("lineview.png")
        @test length(linedata(ones(3); n = 4)) == 4 && linedata(ones(3))[1] == ones(3)
        θ = -ones(10)
        pts = meshdata(θ; m = 5, n = 3, direction = zeros(10))
        @test size(pts) == (5, 3) && pts[3, 2] == θ && pts[5, 2] ≈ zeros(10)  # δ = direction - θ
        α, β, L = meshview(sess, a, loss, θ; m = 5, n = 3, a = 2.0)
        @test α[:, 1] ≈ LinRange(-2, 2, 5) && β[1, :] ≈ LinRange(-1, 1, 3)
        @test L[3, 2] == 0.0 && count(L .> 0) == 14
        @test PLT.gcf().axes[1].name == "3d" && saved_png("meshview.png")
        pcolormeshview(sess, a, loss, θ)
        @test length(PLT.gcf().axes) == 2 && saved_png("pcolormeshview.png")  # the map and its bar
    end
end

@testset "gradview, jacview, PCLview: linearization errors fall as γ² for right derivatives" begin
    reset_default_graph()
    sess = Session()
    a = placeholder(rand(10))
    loss = sum((a + 1.0)^2)
    cd(mktempdir()) do
        v1, v2 = gradview(sess, a, loss, rand(10))
        @test all(isapprox.(ratios(v1)[2:end], 10; rtol = 0.05))
        @test all(isapprox.(ratios(v2), 100; rtol = 1e-3))  # a quadratic: γ²|v|² exactly
        @test current_lines()[1:2] == [v1, v2] && !isfile("mpi_gradview.png")
        # A gradient 10% off: the linearization is only first order.
        _, v2 = gradview(sess, a, loss, rand(10), 2.2 * (a + 1.0); mpi = true)
        @test all(isapprox.(ratios(v2)[2:end], 10; rtol = 0.05)) && isfile("mpi_gradview.png")
        ε = placeholder(1.0)
        _, v2 = gradview(sess, ε, sum(exp(ε * [1.0, 2.0])), 0.01)  # curved: L'' = eᵋ + 4e²ᵋ
        @test all(isapprox.(ratios(v2)[2:end], 100; rtol = 0.1))
        u0 = rand(10)
        _, v2 = jacview(sess, (θ, u) -> (u^3 + u - u0, spdiag(3u^2 + 1.0)), missing, u0)
        @test all(isapprox.(ratios(v2)[2:end], 100; rtol = 0.1)) && saved_png("jacview.png")
        _, v2 = jacview(sess, (θ, u) -> (u^3 + u - u0, spdiag(3u^2)), missing, u0)
        @test all(isapprox.(ratios(v2)[2:end], 10; rtol = 0.1))
        # u solves u + u³ = θ (Newton-Raphson), the loss is Σu²; its gradient by the adjoint.
        f(θ, u) = (u + u^3 - θ, spdiag(1.0 + 3u^2))
        _, v2 = PCLview(sess, f, u -> sum(u^2), [1.0, 2.0], zeros(2))
        @test all(isapprox.(ratios(v2)[2:end], 100; rtol = 0.2))
    end
end

@testset "animate and saveanim: one update per frame, written as a GIF" begin
    frames_seen = Int[]
    cd(mktempdir()) do
        PLT.close("all")
        line, = PLT.plot([0.0], [0.0], "o-")
        PLT.xlim(0, 7)
        PLT.ylim(0, 7)  # each frame shows one more point (equal frames would be merged)
        anim = animate(1:6) do i
            push!(frames_seen, i)
            line.set_data([1:i;], [1:i;])
        end
        saveanim(anim, "anim.gif")
        @test read("anim.gif")[1:4] == b"GIF8"
        @test pyimport("PIL.Image").open(abspath("anim.gif")).n_frames == 6
    end
    @test unique(frames_seen) == 1:6
end
