# Runs one of ADCME's own test files (vendored here, see README.md) with DevPlace in place of
# ADCME, the way ADCME's test/runtests.jl runs it: in Main, after its `using` lines and
# `sess = Session()`, with Julia's global random number generator seeded with SEED (below) first,
# so that its `rand`s and `sprand`s draw the same numbers on every run. Prints one line per
# top-level testset,
#   UPSTREAM <TAB> STATUS <TAB> name <TAB> passed <TAB> failed <TAB> errored <TAB> broken
# where STATUS is FAIL (a test failed or threw), EMPTY (no tests ran), BROKEN (only broken
# tests) or PASS; under a FAIL line, each failed test with its evaluated values (or the error
# it threw), and a line per error that stopped a testset before it ran (e.g. a macro that is
# not defined). Then a summary line with the count of each status.
#
#   julia --project=julia/DevPlace julia/DevPlace/test/upstream/run_upstream.jl optim.jl
#
# Files the tests write (temp.mat, ...) go to a fresh temporary folder, the working folder.

using DevPlace, Test, LinearAlgebra, SparseArrays, Random, Statistics

# `using ADCME` also binds the name ADCME, which the tests use for names ADCME does not export
# (`ADCME.backward`, `ADCME.MultivariateNormalDiag`).
const ADCME = DevPlace

# ADCME's runtests.jl also has `using PyPlot` (kit.jl draws and saves): the stand-in (standins/).
push!(LOAD_PATH, joinpath(@__DIR__, "standins"))
using PyPlot

# ADCME's runtests.jl also has `using PyCall`, which cannot be installed here: `using DevPlace`
# binds `PyCall` to DevPlace's Python error and object types under that name, so that
# `@test_throws PyCall.PyError ...` runs.

"The seed of Julia's global random number generator before each file runs."
const SEED = 20211001

"""
The top-level expressions of the file at `path`, each with the line it starts on (so errors
name the file and line).
"""
function toplevel_expressions(path)
    parsed = Base.parse_input_line(read(path, String); filename = path)
    lines = findall(a -> a isa LineNumberNode, parsed.args)
    return [(parsed.args[i+1], parsed.args[i]) for i in lines if i < length(parsed.args)]
end

"The name of a top-level `@testset \"name\" begin ... end`, or `nothing` for other code."
function testset_name(ex)
    ex isa Expr && ex.head === :macrocall && ex.args[1] === Symbol("@testset") || return nothing
    name = findfirst(a -> a isa String, ex.args)
    return name === nothing ? "(unnamed)" : ex.args[name]
end

"One row of the report: a testset's name and counts, or code that threw before it ran."
struct Row
    name::String
    counts::NTuple{4,Int}  # passed, failed, errored, broken
    failures::String       # the failed tests with their values (see describe_failures)
    stopped_by::String     # the error that kept a testset (or top-level code) from running
end

function Row(ts::Test.DefaultTestSet)
    p, f, e, b, cp, cf, ce, cb = Test.get_test_counts(ts)
    return Row(ts.description, (p + cp, f + cf, e + ce, b + cb), describe_failures(ts), "")
end

"Run `path`'s top-level expressions in Main under one parent testset: a `Row` each, in order."
function run_upstream(path)
    parent = Test.DefaultTestSet(basename(path))
    rows = Row[]
    Test.push_testset(parent)
    try
        for (ex, line) in toplevel_expressions(path)
            before = length(parent.results)
            try
                Core.eval(Main, Expr(:toplevel, line, ex))
            catch err
                name = something(testset_name(ex), string("top-level code: ", first(string(ex), 60)))
                push!(rows, Row(name, (0, 0, 1, 0), "", sprint(showerror, err)))
            end
            for ts in parent.results[before+1:end]
                ts isa Test.DefaultTestSet && push!(rows, Row(ts))
            end
        end
    finally
        Test.pop_testset()
    end
    return rows
end

"""
The row's status: FAIL (a test failed or threw), EMPTY (no tests ran), BROKEN (only broken
tests) or PASS (tests passed, none failed).
"""
function status(row::Row)
    passed, failed, errored, broken = row.counts
    failed + errored > 0 && return "FAIL"
    passed + broken == 0 && return "EMPTY"
    passed == 0 && return "BROKEN"
    return "PASS"
end

"The failed and errored tests of `ts` and of the testsets inside it, in the order they ran."
function failures(ts::Test.DefaultTestSet)
    found = Union{Test.Fail,Test.Error}[]
    for result in ts.results
        if result isa Test.DefaultTestSet
            append!(found, failures(result))
        elseif result isa Union{Test.Fail,Test.Error}
            push!(found, result)
        end
    end
    return found
end

"Each failed test as Test shows it (where, expression, evaluated values), a few lines each."
function describe_failures(ts::Test.DefaultTestSet; most = 5, lines = 12)
    found = failures(ts)
    text = String[]
    for result in found[1:min(end, most)]
        shown = split(sprint(show, result), '\n')
        append!(text, "    " .* shown[1:min(end, lines)])
        length(shown) > lines && push!(text, "    ...")
    end
    length(found) > most && push!(text, "    and $(length(found) - most) more")
    return join(text, '\n')
end

"Print the rows (see the top of this file) and a summary line."
function report(file, rows)
    statuses = status.(rows)
    for (row, verdict) in zip(rows, statuses)
        println(join(["UPSTREAM", verdict, row.name, row.counts...], '\t'))
        isempty(row.failures) || println(row.failures)
        isempty(row.stopped_by) ||
            println("  stopped by: ", first(replace(row.stopped_by, '\n' => ' '), 300))
    end
    counts = ["$(count(==(s), statuses)) $(lowercase(s))"
              for s in ("PASS", "FAIL", "EMPTY", "BROKEN")]
    println("UPSTREAM-SUMMARY\t", file, "\t", join(counts, '\t'))
end

function main(args)
    length(args) == 1 || error("usage: run_upstream.jl FILE.jl (one of ADCME's test files here)")
    path = isabspath(args[1]) ? args[1] : joinpath(@__DIR__, args[1])
    isfile(path) || error("run_upstream.jl: no such test file: ", path)
    Core.eval(Main, :(sess = Session()))
    Random.seed!(SEED)
    cd(mktempdir()) do
        report(basename(path), run_upstream(path))
    end
end

main(ARGS)
