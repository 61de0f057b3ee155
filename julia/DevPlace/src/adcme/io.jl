# ADCME's src/io.jl: variables saved to and loaded from .mat files (`save`, `load`), Python
# objects pickled (`psave`, `pload`), TensorBoard summaries (`Diary`, `scalar`, `write`,
# `activate`). The host's side is python/devplace/bridge/adcme/io.py.

variable_list(::Nothing) = nothing
variable_list(v::PyObject) = [v]
variable_list(vs::AbstractArray) = collect(vs)

"""
    save(sess, file, vars=nothing, feeds...) -> Dict{String,Any}
    save(sess, vars=nothing, feeds...) -> Dict{String,Any}

The values of `vars` (a variable or several; all trainable variables if `nothing`) in `sess`,
keyed by name as ADCME keys them (`"w:0"` is `"wcolon0"`, `/` is `backslash`); with `file`, also
written to that .mat file (scipy's MATLAB format, readable by MATLAB and Julia's MAT).
"""
save(sess::PyObject, file::AbstractString, vars = nothing, feeds...) =
    bridge_rule("adcme.io", "save_variables", sess, abspath(file), variable_list(vars),
                feed_dict("save", feeds))
save(sess::PyObject, vars::Union{Nothing,PyObject,AbstractArray} = nothing, feeds...) =
    bridge_rule("adcme.io", "save_variables", sess, nothing, variable_list(vars),
                feed_dict("save", feeds))

"""
    load(sess, file, vars=nothing, feeds...)
    load(sess, d::Dict, vars=nothing, feeds...)

Assign `vars` (all trainable variables if `nothing`) in `sess` from a .mat file written by
`save` (or the Dict `save` returns). A variable not in the file is left as it is, with a
warning naming it.
"""
function load(sess::PyObject, source::Union{AbstractString,AbstractDict}, vars = nothing, feeds...)
    src = source isa AbstractString ? abspath(source) : source
    missing_names = bridge_rule("adcme.io", "load_variables", sess, src, variable_list(vars),
                                feed_dict("load", feeds))
    for name in missing_names
        @warn "$name not found in the file, skipped"
    end
    return nothing
end

"""
    matread(file) -> Dict{String,Any}

The arrays of a .mat file by name (1×1 matrices as numbers), as Julia's MAT package reads them.
"""
matread(file::AbstractString) = bridge_rule("adcme.io", "matread", abspath(file))

"""
    matwrite(file, d::Dict)

Write the arrays of `d` to the .mat file `file` (vectors as columns).
"""
matwrite(file::AbstractString, d::AbstractDict) = bridge_rule("adcme.io", "matwrite", abspath(file), d)

"""
    psave(o, file)

Pickle `o` (a Python object, or a Julia value as it travels to Python) into `file`. See
`pload`.
"""
psave(o, file::AbstractString) = bridge_rule("adcme.io", "psave", o, abspath(file))

"""
    pload(file) -> PyObject

The Python object pickled in `file` (by `psave`).
"""
pload(file::AbstractString) = bridge_rule("adcme.io", "pload", abspath(file))

"""
    Diary(suffix=nothing)

A TensorBoard diary in a new temporary folder (printed, with the `tensorboard` command that
shows it): `write(d, step, run(sess, scalar(x)))` adds summaries, `save(d, dir)` copies it to
`dir`, `load(d, dir)` continues one there.
"""
mutable struct Diary
    writer::PyObject
    tdir::String
end

function Diary(suffix::Union{AbstractString,Nothing} = nothing)
    tdir = mktempdir()
    printstyled("tensorboard --logdir=\"$(tdir)\" --port 0\n", color = :blue)
    return Diary(bridge_rule("adcme.io", "file_writer", tdir, suffix), tdir)
end

"""
    save(d::Diary, dir)

Copy the diary's folder to `dir` (replacing it).
"""
save(d::Diary, dir::AbstractString) = cp(d.tdir, dir; force = true)

"""
    load(d::Diary, dir)

Make `d` write into the diary folder `dir` from now on.
"""
function load(d::Diary, dir::AbstractString)
    d.writer = bridge_rule("adcme.io", "file_writer", abspath(dir))
    d.tdir = abspath(dir)
    return d
end

"""
    activate(d::Diary, port=0) -> Base.Process

Serve the diary with TensorBoard at http://localhost:port (0: a free port, which TensorBoard
prints) in the background, run by the host's Python; `kill(p)` stops it.
"""
function activate(d::Diary, port::Integer = 0)
    printstyled("tensorboard --logdir=\"$(d.tdir)\" --port $port\n", color = :blue)
    python = pyimport("sys").executable
    return run(`$python -m tensorboard.main --logdir=$(d.tdir) --port $port`; wait = false)
end

"""
    scalar(o::PyObject, name=tensorname(o)) -> PyObject

A scalar summary of `o` for a `Diary` (`tf.summary.scalar`); running it gives its bytes.
"""
scalar(o::PyObject, name::Union{AbstractString,Missing} = missing) =
    tfcall("summary.scalar", name === missing ? replace(tensorname(o), ':' => '_') : String(name), o)

summary_bytes(s::AbstractString) = Vector{UInt8}(codeunits(s))
summary_bytes(s::AbstractVector{UInt8}) = s

"""
    write(d::Diary, step, summaries)

Add a run summary (`run(sess, scalar(x))`: bytes or a string) or a vector of them to the diary
at `step`.
"""
Base.write(d::Diary, step::Integer, s::Union{AbstractString,AbstractVector{UInt8}}) =
    bridge_rule("adcme.io", "diary_write", d.writer, Int(step), [summary_bytes(s)])
Base.write(d::Diary, step::Integer, ss::AbstractVector{<:Union{AbstractString,AbstractVector{UInt8}}}) =
    bridge_rule("adcme.io", "diary_write", d.writer, Int(step), summary_bytes.(ss))
