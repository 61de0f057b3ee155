"""devplace: full control of and insight into where every TensorFlow op runs.

`import devplace as dp` gives TF1 graph mode (`dp.tf` is `tensorflow.compat.v1`; TensorFlow loads
and switches to graph mode when the first name that needs it is used), device scopes
(`dp.cpu`, `dp.gpu`, `dp.device`), device functions, colocated gradients, configurable sessions,
profiles and placement reports. See docs/design.md for the contract shared with the Julia package.
"""

import importlib

__version__ = "0.1.0"

# Every public name loads on first use, so `import devplace` and `devplace --help` stay cheap:
# TensorFlow loads (and switches to graph mode) when the first name that needs it is used.
_LAZY = {
    "tf": "devplace._tf",
    "EagerExecutionError": "devplace._tf",
    "Device": "devplace.devices",
    "DeviceSpecError": "devplace.devices",
    "canonical_device": "devplace.devices",
    "parse_device": "devplace.devices",
    "gradients": "devplace.differentiation",
    "Error": "devplace.errors",
    "GpuMemoryOptionsWarning": "devplace.gpu_memory",
    "UPDATE_OPS": "devplace.layers",
    "batch_norm": "devplace.layers",
    "bn": "devplace.layers",
    "with_updates": "devplace.layers",
    "OpStat": "devplace.profile",
    "Profile": "devplace.profile",
    "last_profile": "devplace.profile",
    "run_profile": "devplace.profile",
    "save_profile": "devplace.profile",
    "OpPlacement": "devplace.report",
    "PlacementReport": "devplace.report",
    "Transfer": "devplace.report",
    "PS_OPS": "devplace.scopes",
    "assign_to_device": "devplace.scopes",
    "by_op_type": "devplace.scopes",
    "cpu": "devplace.scopes",
    "device": "devplace.scopes",
    "gpu": "devplace.scopes",
    "greedy_by_bytes": "devplace.scopes",
    "round_robin": "devplace.scopes",
    "variables_on_cpu": "devplace.scopes",
    "DEFAULT_REMOTE_TIMEOUT": "devplace.session",
    "DevicePlacementError": "devplace.session",
    "Session": "devplace.session",
    "init": "devplace.session",
    "placement_log": "devplace.session",
    "run": "devplace.session",
    "SessionOptionError": "devplace.session_options",
    "placement": "devplace.traced",
    "plot_profile": "devplace.plot",
    "compare_profiles": "devplace.plot",
    "read_trace": "devplace.trace",
    "TraceError": "devplace.trace",
    "autoplace": "devplace.autoplacer",
    "Placement": "devplace.autoplacer",
    "profile_devices": "devplace.autoplacer",
    "DeviceProfiles": "devplace.autoplacer",
    "LocalCluster": "devplace.cluster",
    "ClusterSession": "devplace.cluster",
}

# Graph building, re-exported from tf.compat.v1 unchanged (no wrapper, no overhead).
_TF1_NAMES = frozenset(
    (
        "Variable",
        "constant",
        "placeholder",
        "get_collection",
        "control_dependencies",
        "colocate_with",
        "GraphKeys",
        "reset_default_graph",
        "get_default_graph",
        "global_variables_initializer",
        "group",
        "identity",
        "zeros",
        "ones",
        "reshape",
        "concat",
        "stack",
        "matmul",
        "add",
        "subtract",
        "multiply",
        "divide",
        "sin",
        "cos",
        "tan",
        "exp",
        "log",
        "sqrt",
        "square",
        "tanh",
        "sigmoid",
        "reduce_sum",
        "reduce_mean",
    )
)


def __getattr__(name: str) -> object:
    """Load a public name on first use (`dp.Session`, `dp.constant`, `dp.autoplace`, ...)."""
    if name in _TF1_NAMES:
        value = getattr(importlib.import_module("devplace._tf").tf, name)
    elif name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
    else:
        raise AttributeError(f"module 'devplace' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The module's names, lazily loaded ones included."""
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "DEFAULT_REMOTE_TIMEOUT",
    "ClusterSession",
    "LocalCluster",
    "Placement",
    "DeviceProfiles",
    "profile_devices",
    "TraceError",
    "autoplace",
    "compare_profiles",
    "plot_profile",
    "read_trace",
    "PS_OPS",
    "UPDATE_OPS",
    "Device",
    "DevicePlacementError",
    "DeviceSpecError",
    "EagerExecutionError",
    "Error",
    "GpuMemoryOptionsWarning",
    "SessionOptionError",
    "GraphKeys",
    "OpPlacement",
    "OpStat",
    "PlacementReport",
    "Profile",
    "Session",
    "Transfer",
    "Variable",
    "add",
    "assign_to_device",
    "batch_norm",
    "bn",
    "by_op_type",
    "canonical_device",
    "colocate_with",
    "concat",
    "constant",
    "control_dependencies",
    "cos",
    "cpu",
    "device",
    "divide",
    "exp",
    "get_collection",
    "get_default_graph",
    "global_variables_initializer",
    "gpu",
    "gradients",
    "greedy_by_bytes",
    "group",
    "identity",
    "init",
    "last_profile",
    "log",
    "matmul",
    "multiply",
    "ones",
    "parse_device",
    "placeholder",
    "placement",
    "placement_log",
    "reduce_mean",
    "reduce_sum",
    "reset_default_graph",
    "reshape",
    "round_robin",
    "run",
    "run_profile",
    "save_profile",
    "sigmoid",
    "sin",
    "sqrt",
    "square",
    "stack",
    "subtract",
    "tan",
    "tanh",
    "tf",
    "variables_on_cpu",
    "with_updates",
    "zeros",
]
