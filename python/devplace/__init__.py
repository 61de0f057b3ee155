"""devplace: full control of and insight into where every TensorFlow op runs.

`import devplace as dp` gives TF1 graph mode (`dp.tf` is `tensorflow.compat.v1`), device scopes
(`dp.cpu`, `dp.gpu`, `dp.device`), device functions, colocated gradients, configurable sessions,
profiles and placement reports. See docs/design.md for the contract shared with the Julia package.
"""

import importlib

from devplace._tf import tf
from devplace.devices import Device, DeviceSpecError, canonical_device, parse_device
from devplace.differentiation import gradients
from devplace.errors import Error
from devplace.gpu_memory import GpuMemoryOptionsWarning
from devplace.layers import UPDATE_OPS, batch_norm, bn, with_updates
from devplace.profile import OpStat, Profile, last_profile, run_profile, save_profile
from devplace.report import OpPlacement, PlacementReport, Transfer
from devplace.scopes import (
    PS_OPS,
    assign_to_device,
    by_op_type,
    cpu,
    device,
    gpu,
    greedy_by_bytes,
    round_robin,
    variables_on_cpu,
)
from devplace.session import (
    DEFAULT_REMOTE_TIMEOUT,
    DevicePlacementError,
    Session,
    init,
    placement_log,
    run,
)
from devplace.session_options import SessionOptionError
from devplace.traced import placement

# Graph building, re-exported from tf.compat.v1 unchanged (no wrapper, no overhead).
Variable = tf.Variable
constant = tf.constant
placeholder = tf.placeholder
get_collection = tf.get_collection
control_dependencies = tf.control_dependencies
colocate_with = tf.colocate_with
GraphKeys = tf.GraphKeys
reset_default_graph = tf.reset_default_graph
get_default_graph = tf.get_default_graph
global_variables_initializer = tf.global_variables_initializer
group = tf.group
identity = tf.identity
zeros = tf.zeros
ones = tf.ones
reshape = tf.reshape
concat = tf.concat
stack = tf.stack
matmul = tf.matmul
add = tf.add
subtract = tf.subtract
multiply = tf.multiply
divide = tf.divide
sin = tf.sin
cos = tf.cos
tan = tf.tan
exp = tf.exp
log = tf.log
sqrt = tf.sqrt
square = tf.square
tanh = tf.tanh
sigmoid = tf.sigmoid
reduce_sum = tf.reduce_sum
reduce_mean = tf.reduce_mean

__version__ = "0.1.0"

# Heavier parts load on first use, so `import devplace` pays for TensorFlow only.
_LAZY = {
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


def __getattr__(name: str) -> object:
    """Load the lazily exported names (`plot_profile`, `autoplace`, `LocalCluster`, ...)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'devplace' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


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
