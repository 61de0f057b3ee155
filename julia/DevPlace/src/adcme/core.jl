# ADCME's src/core.jl: the graph (reset_default_graph, tensor, tensorname), control flow
# (control_dependencies, bind, while_loop, if_else), stopping gradients (independent,
# stop_gradient), and the MPI and eager-mode names, answered as devplace can.

"""
    reset_default_graph()

Start a new, empty default graph. Sessions made before keep the old graph: running a new tensor
in one fails with an error saying so; make a new `Session()`.
"""
function reset_default_graph()
    tfcall("reset_default_graph")
    return nothing
end

"""
    enable_eager_execution()

Not available: devplace graphs are TF1 graphs (graph mode), placed when a `Session` runs them.
Throws an error saying so.
"""
enable_eager_execution() = error(
    "enable_eager_execution: devplace graphs are graph mode (TF1): ops are built into a graph ",
    "and placed on devices when a Session runs them, so eager execution is not available. ",
    "Hint: build the graph, then `sess = Session(); run(sess, x)`.")

"""
    control_dependencies(f, op::PyObject)
    control_dependencies(f, ops::Tuple)

As `control_dependencies(f, ops)` with one op or tensor, or a tuple of them (as in ADCME).
"""
control_dependencies(f::Function, op::PyObject) = control_dependencies(f, [op])
control_dependencies(f::Function, ops::Tuple) = control_dependencies(f, collect(ops))

"""
    bind(op::PyObject, ops...) -> PyObject

`op` (as a new tensor) with `ops` as control dependencies: evaluating it runs `ops` first,
e.g. `i = bind(i, tf.print(i))`.
"""
function Base.bind(op::PyObject, ops...)
    control_dependencies(ops) do
        tfcall("identity", op)
    end
end

"""
    while_loop(condition, body, loop_vars; parallel_iterations=10, kwargs...)

`tf.while_loop`: while `condition(vars...)` is true, `vars = body(vars...)`. `loop_vars` is a
vector (the loop index first, an `Int32` tensor, as ADCME requires) or one tensor; the result is
the final values, of the same form.

```julia
ta = TensorArray(10); ta = write(ta, 1, constant(1.0))
_, out = while_loop((i, ta) -> i <= 10, (i, ta) -> (i + 1, write(ta, i, read(ta, i - 1) + 1)),
                    [constant(2; dtype=Int32), ta])
```
"""
function while_loop(condition::Union{PyObject,Function}, body::Function,
                    loop_vars::Union{PyObject,AbstractVector}; parallel_iterations::Integer = 10,
                    kwargs...)
    lv = loop_vars isa PyObject ? [loop_vars] : collect(loop_vars)
    T = get_dtype(lv[1])
    T == Int32 || throw(ArgumentError(string("while_loop: the loop index (the first of ",
        "loop_vars) must be an Int32 tensor, got ", T === nothing ? "a non-numeric one" : T,
        ". Hint: i = constant(1; dtype=Int32)")))
    res = bridge_rule("adcme.core", "while_loop", condition, body, lv;
                      parallel_iterations = Int(parallel_iterations), kwargs...)
    return loop_vars isa PyObject ? res[1] : res
end

"""
    if_else(condition, fn1, fn2; kwargs...) -> PyObject

With a scalar boolean `condition` (a tensor or a `Bool`): `fn1` if it is true, else `fn2`
(`tf.cond`; each a tensor or a function of no arguments). With a boolean array: elementwise,
`fn1` where true and `fn2` where false (`tf.where`).
"""
if_else(condition::Union{PyObject,AbstractArray,Bool}, fn1, fn2, args...; kwargs...) =
    bridge_rule("adcme.core", "if_else", condition, fn1, fn2, args...; kwargs...)

"""
    stop_gradient(o::PyObject, args...; kwargs...) -> PyObject

`o`, but gradients are not propagated through it (`tf.stop_gradient`); same as `independent`.
"""
stop_gradient(o::PyObject, args...; kwargs...) = tfcall("stop_gradient", o, args...; kwargs...)

"""
    independent(o::PyObject, args...; kwargs...) -> PyObject

`o`, but gradients are not propagated into what `o` depends on (`tf.stop_gradient`).
"""
independent(o::PyObject, args...; kwargs...) = stop_gradient(o, args...; kwargs...)

"""
    tensor(name::String) -> PyObject

The tensor of that name in the default graph, e.g. `tensor("x:0")`; see `tensorname`.
"""
tensor(name::String) = bridge_rule("adcme.core", "tensor_by_name", name)

"""
    tensorname(o::PyObject) -> String

The name of a tensor (`"x:0"`); see `tensor`.
"""
tensorname(o::PyObject) = o.name

const NO_MPI = string("MPI Library is not found: devplace has no MPI operators. ",
                      "Hint: for several processes use devplace's clusters (LocalCluster, ",
                      "ClusterSession) instead of MPI.")

"""
    has_mpi(verbose=true) -> Bool

Whether MPI operators are available: `false`, devplace has none (ADCME's answer without MPI).
"""
has_mpi(verbose::Bool = true) = false

"""
    get_mpi()

ADCME's MPI include directory and library: devplace has no MPI, so this throws an error.
"""
get_mpi() = error(NO_MPI)

"""
    get_mpirun()

ADCME's `mpirun` executable: devplace has no MPI, so this throws an error.
"""
get_mpirun() = error(NO_MPI)
