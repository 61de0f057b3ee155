# Deferred release of Python handles. Finalizers cannot do IO on Julia 1.5 ("task switch not
# allowed from inside gc finalizer"), so a finalizer only records the handle id; the next
# request sends the recorded ids in a RELEASE frame.
#
# Finalizers run at allocation points of ordinary code, so recording must not allocate and
# draining must tolerate finalizers running inside it: a ring buffer written only at `TAIL` by
# finalizers and read only up to a snapshot of `TAIL` by the drain (an overflow vector, swapped
# out whole, takes bursts larger than the ring).

const RING = zeros(UInt64, 1 << 18)
const HEAD = Ref(0)  # entries before HEAD (counting from 0) were drained
const TAIL = Ref(0)  # entries before TAIL were recorded
const OVERFLOW = Ref(UInt64[])
const RING_GENERATION = Ref(0)
const NO_RELEASES = UInt64[]  # what `take_releases` returns for none: most requests (no allocation)

"""
    queue_release(gen, id)

Remember that handle `id` of host generation `gen` is no longer used (called by finalizers).
"""
function queue_release(gen::Int, id::UInt64)
    gen == RING_GENERATION[] || return nothing  # that host is gone, and its table with it
    t = TAIL[]
    if t - HEAD[] < length(RING)
        @inbounds RING[mod(t, length(RING)) + 1] = id
        TAIL[] = t + 1
    else
        push!(OVERFLOW[], id)
    end
    return nothing
end

"""
    take_releases(gen) -> Vector{UInt64}

The ids queued for host generation `gen` since the last call (not to be changed: none is one
shared empty vector); older generations' ids are dropped, and later ones are queued for `gen`
from now on.
"""
function take_releases(gen::Int)
    if RING_GENERATION[] != gen
        RING_GENERATION[] = gen
        HEAD[] = TAIL[]
        OVERFLOW[] = UInt64[]
        return NO_RELEASES
    end
    t = TAIL[]
    h = HEAD[]
    t == h && isempty(OVERFLOW[]) && return NO_RELEASES
    ids = Vector{UInt64}(undef, t - h)  # may run finalizers: they append after `t`
    for (k, i) in enumerate(h:t-1)
        @inbounds ids[k] = RING[mod(i, length(RING)) + 1]
    end
    HEAD[] = t
    if !isempty(OVERFLOW[])
        fresh = UInt64[]
        burst = OVERFLOW[]
        OVERFLOW[] = fresh
        append!(ids, burst)
    end
    return ids
end

"""
    pending_releases() -> Int

How many released handles wait for the next request.
"""
pending_releases() = TAIL[] - HEAD[] + length(OVERFLOW[])
