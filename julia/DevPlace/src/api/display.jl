# Rich display in notebooks (IJulia, Pluto): a devplace object (placement report, comparison,
# autoplace result, profile, traced run, cluster, session) shows as the HTML table or timeline
# picture it shows in Jupyter, rendered by the host's `devplace.views.notebook`. Other objects keep
# their text.

const NOTEBOOK = lazy_pyobject(() -> pyimport("devplace.views.notebook"))

"""
    mime_types(o::PyObject) -> Vector{String}

The rich MIME types the host shows `o` in: `"text/html"` for tables, `"image/svg+xml"` and
`"image/png"` for pictures; empty for a plain Python object.
"""
mime_types(o::PyObject) = String[String(m) for m in NOTEBOOK.mime_types(o)]

for (mime, T) in (("text/html", String), ("image/svg+xml", String), ("image/png", Vector{UInt8}))
    M = MIME{Symbol(mime)}
    @eval Base.showable(::$M, o::PyObject) = $mime in mime_types(o)
    @eval function Base.show(io::IO, ::$M, o::PyObject)
        write(io, NOTEBOOK.mime_data(o, $mime)::$T)
        return nothing
    end
end
