# ADCME's src/gpu.jl: what the host's TensorFlow knows about GPUs (has_gpu, gpu_info, get_gpu),
# asked each time, never assumed.

"""
    has_gpu() -> Bool

Whether the host's TensorFlow sees a GPU (`tf.config.list_physical_devices("GPU")`).
"""
has_gpu() = !isempty(bridge_rule("adcme.gpu", "gpu_facts")["gpus"])

"""
    gpu_info()

Print what the host knows about GPUs: nvcc, TensorFlow's CUDA build and versions, the GPUs it
sees, and why there are none; returns `nothing`.
"""
function gpu_info()
    f = bridge_rule("adcme.gpu", "gpu_facts")
    shown(x) = x === nothing || x == "" ? "missing" : x
    println("- NVCC: ", shown(f["nvcc"]))
    println("- TensorFlow built with CUDA: ", f["built_with_cuda"])
    println("- CUDA version (TensorFlow build): ", shown(f["cuda_version"]))
    println("- cuDNN version (TensorFlow build): ", shown(f["cudnn_version"]))
    println("- Number of GPUs: ", length(f["gpus"]))
    for g in f["gpus"]
        println("  ", g)
    end
    isempty(f["why_none"]) || println("\n", f["why_none"])
    return nothing
end

"""
    get_gpu() -> NamedTuple

The GPU compiler facts as ADCME gives them: `(NVCC, LIB, INC, TOOLKIT, CUDNN)`, each a path or
version string, or `missing` (`LIB` and `INC` from where `nvcc` is; `TOOLKIT` and `CUDNN` are
the CUDA and cuDNN versions TensorFlow was built with).
"""
function get_gpu()
    f = bridge_rule("adcme.gpu", "gpu_facts")
    known(x) = x === nothing || x == "" ? missing : string(x)
    nvcc = known(f["nvcc"])
    dir(sub) = nvcc === missing ? missing : abspath(joinpath(nvcc, "..", "..", sub))
    return (NVCC = nvcc, LIB = dir("lib64"), INC = dir("include"),
            TOOLKIT = known(f["cuda_version"]), CUDNN = known(f["cudnn_version"]))
end
