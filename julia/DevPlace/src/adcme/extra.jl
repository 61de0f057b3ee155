# ADCME's src/extra.jl, the parts that need no compiled operator: Xavier initial weights,
# functions with gradients of your own (`register`; the host's side is
# python/devplace/bridge/adcme/extra.py), the devices TensorFlow sees, and ops for timing
# (`timestamp`, `sleep_for`). ADCME's custom-operator tooling (`load_op`, `compile`, ...) is not
# part of DevPlace.

"""
    xavier_init(size, dtype=Float64) -> Array

Random initial weights of `size` (e.g. `[100, 10]`): normal, with standard deviation
`1 / sqrt(size[1] / 2)` (Xavier's initialization for `size[1]` inputs).
"""
xavier_init(size, dtype::Type{<:AbstractFloat} = Float64) =
    randn(dtype, size...) * dtype(1 / sqrt(size[1] / 2))

"""
    register(forward, backward; multiple=false) -> PyObject

A function of tensors that computes `forward(x...)` and whose gradients are those `backward`
gives: `backward(dy, y, x...)` returns one gradient per input (a tensor, or `nothing` for an
input that takes none), `dy` the gradient of the output `y`. With `multiple=true`, `forward`
gives several outputs, and `backward(dy..., y..., x...)` takes the gradients of its float
outputs, then the outputs, then the inputs. Both functions build graph ops from tensors.

```julia
f = register(x -> log(1 + exp(x)), (dy, y, x) -> dy * (1 - 1 / (1 + y)))
```
"""
register(forward::Function, backward::Function; multiple::Bool = false) =
    bridge_rule("adcme.extra", "register", forward, backward, multiple)

"""
    list_physical_devices(cpu_or_gpu="all") -> Vector{String}

The host's devices that TensorFlow sees (`"/device:CPU:0"`, `"/device:GPU:0"`, ...): all of
them, or only `"CPU"` or `"GPU"` ones.
"""
function list_physical_devices(cpu_or_gpu::String = "all")
    cpu_or_gpu in ("all", "CPU", "GPU") || wrong_argument("list_physical_devices", "cpu_or_gpu",
        cpu_or_gpu, "\"all\", \"CPU\" or \"GPU\"", "list_physical_devices(\"GPU\")")
    kinds = cpu_or_gpu == "all" ? ("CPU", "GPU") : (cpu_or_gpu,)
    return [replace(d.name, "/physical_device:" => "/device:")
            for kind in kinds for d in tfcall("config.list_physical_devices", kind)]
end

"""
    timestamp(deps=missing) -> PyObject

A float64 op giving the time (seconds since the epoch) when it runs, after `deps` (a tensor or
op); with `bind` and `sleep_for`, for timing parts of a graph:

```julia
a = constant(0.1)
t0 = timestamp(a); t1 = timestamp(sleep_for(a))
run(Session(), t1 - t0)   # about 0.1
```
"""
timestamp(deps::Union{PyObject,Real,Missing} = missing) =
    control_dependencies(() -> tfcall("timestamp"), convert_to_tensor(coalesce(deps, 0.0); dtype = Float64))

"""
    sleep_for(t) -> PyObject

An op that sleeps `t` seconds (a number or scalar tensor) when it runs and gives `t` back.
"""
sleep_for(t::Union{PyObject,Real}) =
    bridge_rule("adcme.extra", "sleep_for", convert_to_tensor(t; dtype = Float64))
