# DevPlace's files are layers (docs/layout.md): each uses only the files included before it.
# Read mechanically from the source: every file's top-level definitions, then, per file, the
# calls (and macro calls, and uses of constants) of names defined only in files included later.

module Layering

"The files DevPlace.jl includes from `src`, in order, as paths relative to it."
function included_files(src)
    files = String[]
    for ex in parsed(joinpath(src, "DevPlace.jl")), e in walk(ex)
        e isa Expr && e.head === :call && e.args[1] === :include && e.args[2] isa String &&
            push!(files, e.args[2])
    end
    return files
end

"The top-level expressions of a file."
function parsed(path)
    text = read(path, String)
    exprs, pos = Any[], 1
    while true
        ex, pos = Meta.parse(text, pos)
        ex === nothing && break
        push!(exprs, ex)
    end
    return exprs
end

"Every expression inside `ex`, itself included."
function walk(ex, out = Any[])
    push!(out, ex)
    ex isa Expr && foreach(a -> walk(a, out), ex.args)
    return out
end

unwrap(ex) = ex isa Expr && ex.head in (:where, :(::)) ? unwrap(ex.args[1]) : ex

"The names a top-level expression defines in DevPlace (not methods of other modules' names)."
function defined_names(ex)
    ex isa Expr || return Symbol[]
    ex.head in (:block, :toplevel) && return reduce(vcat, defined_names.(ex.args); init = Symbol[])
    ex.head === :macrocall && return reduce(vcat, defined_names.(ex.args[3:end]); init = Symbol[])
    ex.head === :const && return defined_names(ex.args[1])
    ex.head === :function && ex.args[1] isa Symbol && return [ex.args[1]]  # `function f end`
    if ex.head in (:function, :(=)) && ex.args[1] isa Expr
        sig = unwrap(ex.args[1])
        sig isa Expr && sig.head === :call && sig.args[1] isa Symbol && return [sig.args[1]]
        return ex.head === :(=) && sig isa Symbol ? [sig] : Symbol[]
    end
    ex.head === :(=) && ex.args[1] isa Symbol && return [ex.args[1]]
    ex.head === :macro && return [Symbol("@", unwrap(ex.args[1]).args[1])]
    ex.head === :struct && return [unwrap(unwrap(ex.args[2]) isa Expr ?
                                          unwrap(ex.args[2]).args[1] : ex.args[2])]
    ex.head === :abstract && return [unwrap(ex.args[1])]
    return Symbol[]
end

"The names a file calls (`f(...)`, `f.(...)`, `@m`) or uses as constants."
function used_names(exprs, constants)
    used = Set{Symbol}()
    for ex in exprs, e in walk(ex)
        if e isa Expr && e.head === :call && e.args[1] isa Symbol
            push!(used, e.args[1])
        elseif e isa Expr && e.head === :. && e.args[1] isa Symbol && length(e.args) == 2 &&
               e.args[2] isa Expr && e.args[2].head === :tuple
            push!(used, e.args[1])
        elseif e isa Expr && e.head === :macrocall && e.args[1] isa Symbol
            push!(used, e.args[1])
        elseif e isa Symbol && e in constants
            push!(used, e)
        end
    end
    return used
end

"Each use (as `used_names` finds them) of a name defined only in files included later."
function upward_uses(src)
    files = included_files(src)
    exprs = Dict(f => parsed(joinpath(src, f)) for f in files)
    defs = Dict(f => Set(reduce(vcat, defined_names.(exprs[f]); init = Symbol[])) for f in files)
    constants = Set{Symbol}()
    for f in files, ex in exprs[f], e in walk(ex)
        e isa Expr && e.head === :const && union!(constants, defined_names(e))
    end
    upward = String[]
    for (i, f) in enumerate(files)
        before = reduce(union, (defs[g] for g in files[1:i]); init = Set{Symbol}())
        for name in sort!(collect(used_names(exprs[f], constants)))
            name in before && continue
            later = [g for g in files[i+1:end] if name in defs[g]]
            isempty(later) || push!(upward, string(f, " uses `", name, "` from ", join(later, ", ")))
        end
    end
    return files, upward
end

end # module

@testset "each source file uses only the files included before it" begin
    files, upward = Layering.upward_uses(joinpath(REPO, "julia", "DevPlace", "src"))
    @test files[1:5] == ["protocol.jl", "frames.jl", "transports/shm.jl", "wire.jl", "requests.jl"]
    @test any(startswith("adcme/"), files)  # the ADCME files are checked too
    @test isempty(upward) || (foreach(println, upward); false)
end

@testset "one protocol table: Julia's constants are protocol.tsv's" begin
    rows = [split(line, '\t') for line in eachline(D.PROTOCOL_FILE)
            if !isempty(line) && !startswith(line, '#')]
    value(group, name) = only(r[3] for r in rows if r[1] == group && r[2] == name)
    for r in rows
        r[1] == "tag" && @test getfield(D, Symbol("TAG_", r[2])) === UInt8(parse(Int, r[3]))
        r[1] == "frame" && r[2] in (
            "REQUEST", "REPLY", "ERROR", "CALLBACK", "RELEASE", "HELLO", "ABANDON") &&
            @test getfield(D, Symbol(r[2])) === UInt8(parse(Int, r[3]))
    end
    @test D.PROTOCOL_VERSION == parse(Int, value("frame", "PROTOCOL_VERSION"))
    @test (D.BY_HANDLE, D.IN_PLACE) === (0x80, 0x40)
    @test (D.MAX_DEPTH, D.MAX_DIMS) == (200, 64)
    @test (D.STAMP_BYTES, D.HEAD_BYTES, D.ARRAY_ALIGN) == (8, 16, 64)
    # segment names: made and read the same way on both sides
    @test D.segment_name(4242, 7) == value("shm", "EXAMPLE") == "devplace-4242-7"
    @test D.segment_owner(value("shm", "EXAMPLE")) == (4242, 7)
    @test D.segment_owner("devplace-12-x") === nothing && D.segment_owner("other-1-2") === nothing
    # every elementwise function of the table is a method for tensors
    unary = [Symbol(r[2]) for r in rows if r[1] == "unary"]
    @test collect(first.(D.UNARY)) == unary
    @test all(f -> hasmethod(getfield(Base, f), Tuple{D.PyObject}), unary)
end
