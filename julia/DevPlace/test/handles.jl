# Handles released through the finalizer queue: 100,000 temporary Python objects created and
# dropped from Julia leave the host's handle table at its baseline. Objects are made inside
# functions so that no stack slot of the test itself keeps one alive.

function make_temporaries(n)
    object = pybuiltin("object")
    for i in 1:n
        object()
    end
    return nothing
end

function echo_tuple(n)
    many = D.request(D.OP_ECHO, (ntuple(_ -> pybuiltin("object")(), n),))
    return length(many)
end

const PY_GC_COLLECT = D.lazy_pyobject(() -> D.pygetattr(pyimport("gc"), "collect", PyObject))

# Each round: Python collects its cycles (tracebacks holding Julia functions) and releases the
# functions, Julia collects what those functions held and releases it. Chains (a Julia closure
# held by Python, holding Python objects) take a round per link: repeat until nothing changes.
function settled_handles()
    last = -1
    for _ in 1:5
        PY_GC_COLLECT()
        D.host_stats()  # carries Python's releases of Julia functions: Julia drops them
        GC.gc()
        GC.gc()
        D.host_stats()  # carries the queued releases
        n = D.host_stats()["handles"]
        n == last && return n
        last = n
    end
    return last
end

@testset "100,000 temporary objects leave the handle table at its baseline" begin
    pybuiltin("object")  # a builtin is kept once per host: its one handle is in the baseline
    baseline = settled_handles()
    make_temporaries(100_000)
    @test settled_handles() == baseline
    @test D.pending_releases() == 0
    @test echo_tuple(10) == 10
    @test settled_handles() == baseline
end

@testset "bursts larger than the release ring" begin
    gen = D.host().gen
    n = length(D.RING) + 10
    for i in 1:n
        D.queue_release(gen, UInt64(10^12 + i))  # ids the host does not know: ignored there
    end
    @test D.pending_releases() == n
    ids = D.take_releases(gen)
    @test length(ids) == n && ids[end] == UInt64(10^12 + n) && ids[1] == UInt64(10^12 + 1)
    @test D.pending_releases() == 0
    D.queue_release(gen - 1, UInt64(1))  # a dead host's handle is not queued
    @test D.pending_releases() == 0
end
