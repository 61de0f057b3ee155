"""
A stand-in for PyPlot.jl (which cannot be installed here) for ADCME's tutorial code: the
matplotlib functions the tutorials call, forwarded through DevPlace to matplotlib's pyplot in
the host (Agg backend: files, no windows). Push this folder's parent onto `LOAD_PATH` to use it.
"""
module PyPlot

using DevPlace

export figure, subplot, plot, scatter, legend, xlabel, ylabel, title, xlim, ylim, savefig

const PYPLOT = Ref{Union{PyObject,Nothing}}(nothing)

function pyplot()
    if PYPLOT[] === nothing
        pyimport("matplotlib").use("Agg")
        PYPLOT[] = pyimport("matplotlib.pyplot")
    end
    return PYPLOT[]
end

plain(x::AbstractRange) = collect(x)
plain(x) = x

for name in (:figure, :subplot, :plot, :scatter, :legend, :xlabel, :ylabel, :title, :xlim, :ylim)
    @eval $name(args...; kwargs...) = getproperty(pyplot(), $(QuoteNode(name)))(plain.(args)...; kwargs...)
end

"`savefig(file)`, the file named relative to Julia's working folder (the host's may differ)."
savefig(file::AbstractString, args...; kwargs...) = pyplot().savefig(abspath(file), args...; kwargs...)

"`close(\"all\")` (or a figure's label): PyPlot's method of `close` for names of figures."
Base.close(name::AbstractString) = pyplot().close(name)

end # module
