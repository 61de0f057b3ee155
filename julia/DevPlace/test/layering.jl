# DevPlace's floors (docs/layout.md): each a module in its folder, reaching only the floors below
# it by the `using ..Lower: names` and `import ..Lower: f` at its top. Read from the source (the
# headers), and from the loaded code (the global each function names, as Julia resolved it).

module Layering

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

"The files `exprs` include, as written."
included(exprs) = [e.args[2] for ex in exprs for e in walk(ex) if e isa Expr &&
                   e.head === :call && e.args[1] === :include && e.args[2] isa String]

"""
DevPlace.jl's floors, lowest first, in the order it includes them: (name, files), the files
relative to `src`, the floor's module file first.
"""
function floors(src)
    out = Tuple{Symbol,Vector{String}}[]
    for file in included(parsed(joinpath(src, "DevPlace.jl")))
        dirname(file) == "" && continue  # DevPlace's own (precompile.jl), not a floor
        mod = only(e for ex in parsed(joinpath(src, file)) for e in walk(ex)
                   if e isa Expr && e.head === :module)
        files = [joinpath(dirname(file), f) for f in included(mod.args[3].args)]
        push!(out, (mod.args[2], [file; files]))
    end
    return out
end

"""
Each `using`/`import` in a floor's files of a module beyond the floor (`..X`) that is not a lower
floor: a higher one, the floor itself, or DevPlace.
"""
function upward_imports(src)
    fl = floors(src)
    names = first.(fl)
    wrong = String[]
    for (i, (floor, files)) in enumerate(fl), file in files, ex in parsed(joinpath(src, file)),
        e in walk(ex)
        e isa Expr && e.head in (:using, :import) || continue
        for path in (a.head === :(:) ? a.args[1] : a for a in e.args)
            dots = findfirst(!=(:.), path.args)
            (dots === nothing ? length(path.args) : dots - 1) >= 2 || continue  # `..`: DevPlace's
            target = dots === nothing ? :DevPlace : path.args[dots]
            j = findfirst(==(target), names)
            j !== nothing && j < i && continue
            push!(wrong, string(floor, " (", file, ") reaches ", target, ": ",
                                j === nothing ? "not a floor" : "not below it"))
        end
    end
    return wrong
end

"Every method defined in one of `floors`, whatever function it is of (Base's `show` too)."
function floor_methods(floors)
    seen, found = Set{Module}(), Set{Method}()
    function visit(mod::Module)
        mod in seen && return
        push!(seen, mod)
        for name in names(mod; all = true, imported = true)
            isdefined(mod, name) || continue
            x = getfield(mod, name)
            x isa Module && (visit(x); continue)
            x isa Function || x isa Type || continue
            T = Base.unwrap_unionall(x isa Function ? typeof(x) : x)  # closures are parametric
            tables = Any[x isa Function ? methods(x) : []]
            T isa DataType && T <: Function && isdefined(T.name, :mt) &&
                push!(tables, Base.MethodList(T.name.mt))
            x isa Type && x !== Vararg && push!(tables, methods(x))
            for table in tables, m in table
                m.module in floors && push!(found, m)
            end
        end
    end
    foreach(visit, Base.loaded_modules_array())
    return found
end

"The globals (`GlobalRef`s) of lowered code `ex`."
function globalrefs(ex, out = GlobalRef[])
    ex isa GlobalRef && push!(out, ex)
    ex isa Expr && foreach(a -> globalrefs(a, out), ex.args)
    return out
end

"""
Each global that a method of a floor names and that is not defined (a call would throw
`UndefVarError`), or is a higher floor's or DevPlace's own (above every floor).
"""
function unresolved_globals(floors)
    wrong = Set{String}()
    top = parentmodule(first(floors))
    for m in floor_methods(floors), r in globalrefs.(Base.uncompressed_ast(m).code), ref in r
        where = string(m.module, ": ", ref.name, " in ", m.file, ":", m.line)
        if !isdefined(ref.mod, ref.name)
            ref.mod in floors && push!(wrong, string(where, " is not defined"))
            continue
        end
        owner = Base.binding_module(ref.mod, ref.name)  # `DevPlace.x` is a GlobalRef to DevPlace
        (ref.mod === top || owner === top) && push!(wrong, string(where, " is DevPlace's"))
        owner in floors && findfirst(==(owner), floors) > findfirst(==(m.module), floors) &&
            push!(wrong, string(where, " is ", owner, "'s, a higher floor"))
    end
    return sort!(collect(wrong))
end

end # module

@testset "each floor reaches only the floors below it, by the using and import at its top" begin
    src = joinpath(REPO, "julia", "DevPlace", "src")
    fl = Layering.floors(src)
    @test first.(fl) == collect(nameof.(D.FLOORS)) ==
          [:Codec, :Transports, :Objects, :API, :ADCMEAPI]
    # every source file is in one floor, but DevPlace.jl and precompile.jl
    sources = [relpath(joinpath(d, f), src) for (d, _, fs) in walkdir(src) for f in fs
               if endswith(f, ".jl")]
    @test sort!(sources) == sort!([reduce(vcat, last.(fl)); "DevPlace.jl"; "precompile.jl"])
    upward = Layering.upward_imports(src)
    @test isempty(upward) || (foreach(println, upward); false)
end

@testset "every global a floor's code names is defined, and not a higher floor's or DevPlace's" begin
    wrong = Layering.unresolved_globals(collect(D.FLOORS))
    @test isempty(wrong) || (foreach(println, wrong); false)
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
