"""TensorFlow, imported once and switched to TF1 graph mode for the whole process.

TF1 behaviour is what the seeds assume: `Variable` builds `VariableV2` ops (not resource
handles), top-level ops go into the default graph, sessions and collections work, and device
functions are accepted by `tf.device`. TensorFlow's execution mode is process-wide, so this is a
visible switch, not a private one. It happens when devplace first needs TensorFlow (the first
`dp.<name>` that uses it; `import devplace` alone loads nothing): from then on
`tf.executing_eagerly()` is False and eager-only calls fail with `EagerExecutionError` saying
why (docs/design.md, "TF2 code").

This is the one devplace module that imports TensorFlow (the internals other modules need are
imported here too). TF's C++ log is kept off the console: `TF_CPP_MIN_LOG_LEVEL` defaults to 2
before TF loads (TF reads it only then), and what TF writes while loading, before absl's log is
initialised and whatever that level says, is captured and sorted. `DEVPLACE_TF_LOG=1` shows
TensorFlow's log as it comes instead.
"""

from __future__ import annotations

import os
import re
import sys
import warnings

from devplace._fdcapture import capture_fds
from devplace.errors import Error, user_stacklevel
from devplace.tf1_legacy import graft

__all__ = [
    "GPU_MESSAGES",
    "RAW_LOG",
    "EagerExecutionError",
    "TraceableStack",
    "attr_value_pb2",
    "driver_present",
    "execute",
    "gpu_lines",
    "kernels",
    "op_callbacks",
    "op_def_registry",
    "tensor_util",
    "tf_context",
    "tf_ops",
    "set_op_device",
    "tf",
    "timeline",
    "variable_scope",
]

#: True when `DEVPLACE_TF_LOG` is set (to anything but "" or "0"): TensorFlow's own C++ log is
#: then shown as TensorFlow writes it. Otherwise devplace keeps it off the console.
RAW_LOG = os.environ.get("DEVPLACE_TF_LOG", "") not in ("", "0")

if not RAW_LOG:
    # Read by TensorFlow when it loads (setting it later changes nothing): its run-time INFO and
    # WARNING lines (MLIR and oneDNN notices, five profiler lines per traced run) stay off the
    # console; errors still print. A value you set is kept.
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

# TF's log lines without absl's prefix: its pre-InitializeLog banner, a continuation line.
_UNPREFIXED = re.compile(
    r"^WARNING: All log messages before absl::InitializeLog|^To enable the following instructions"
)
# Lines TF prints while loading: notices, not problems (also when they mention a GPU).
_LOAD_NOTICES = re.compile(
    r"All log messages before absl::InitializeLog|oneDNN custom operations are on"
    r"|cpu_feature_guard|To enable the following instructions"
)
# Lines that explain why TensorFlow uses no GPU: no driver, libraries that failed to load.
_GPU_LINES = re.compile(r"cuda|cudnn|cublas|cuInit|dlopen|dynamic library|GPU", re.IGNORECASE)
#: absl's prefix after the level letter: "0000 00:00:1795424191.953030   10114 cudart_stub.cc:31] "
#: (the line starts "I0000 ..."); `_tflog` matches the same prefix in the bytes it forwards.
LOG_PREFIX_AFTER_LEVEL = r"\d{4} [\d:.]+\s+\d+ [\w./-]+:\d+\] "
_LOG_PREFIX = re.compile(r"^[IWEF]" + LOG_PREFIX_AFTER_LEVEL)


def _withheld(line: str) -> bool:
    """Whether a line TF wrote while loading stays off the console: its notices and warnings,
    and what it says about GPUs (kept in `GPU_MESSAGES`); its other errors still print."""
    return bool(
        _UNPREFIXED.match(line)
        or (_LOG_PREFIX.match(line) and (line[0] in "IW" or _GPU_LINES.search(line)))
    )


def gpu_lines(text: str) -> list[str]:
    """TensorFlow's log lines in `text` that concern GPUs, without their log prefixes, once each."""
    found: list[str] = []
    for line in text.splitlines():
        if _GPU_LINES.search(line) and not _LOAD_NOTICES.search(line):
            message = _LOG_PREFIX.sub("", line).strip()
            if message not in found:
                found.append(message)
    return found


_loading = None
try:
    # Listing the GPUs here runs cuInit inside the capture (its error on driverless machines
    # would otherwise land on stderr at the first Session) and only enumerates: memory options
    # set later still act. The TF internals devplace uses are imported here too, so that no
    # devplace module loads TensorFlow outside this capture.
    with capture_fds((2,)) as _loading:
        import tensorflow as _tensorflow
        from tensorflow.core.framework import attr_value_pb2
        from tensorflow.python.client import timeline
        from tensorflow.python.eager import context as _context
        from tensorflow.python.eager import execute
        from tensorflow.python.framework import (
            kernels,
            op_callbacks,
            op_def_registry,
            tensor_util,
        )
        from tensorflow.python.framework import ops as _ops
        from tensorflow.python.framework.traceable_stack import TraceableStack
        from tensorflow.python.ops import variable_scope
        from tensorflow.python.util import deprecation as _deprecation

        _gpus = _tensorflow.config.list_physical_devices("GPU")
finally:
    if _loading is not None:
        sys.stderr.write(
            _loading.text
            if RAW_LOG
            else "".join(
                line for line in _loading.text.splitlines(keepends=True) if not _withheld(line)
            )
        )

GPU_MESSAGES = gpu_lines(_loading.text)
"""What TensorFlow said about GPUs while loading and looking for them (prefixes removed)."""


def driver_present() -> bool:
    """Whether an NVIDIA kernel driver is loaded (Linux)."""
    return os.path.exists("/proc/driver/nvidia/version")


if not _gpus and driver_present() and _tensorflow.test.is_built_with_cuda():
    # A GPU machine whose GPU TensorFlow cannot use: say so now, not at the first slow run.
    sys.stderr.write(
        "devplace: an NVIDIA driver is present but TensorFlow found no GPU"
        + "".join(f"\n  TensorFlow: {m}" for m in GPU_MESSAGES)
        + "\n  `devplace devices` shows TensorFlow's full reason.\n"
    )


class EagerExecutionError(Error, AttributeError):
    """An eager-only call (`Tensor.numpy()`) on a graph tensor: devplace runs TF in graph mode."""


def set_op_device(op: object, device: str) -> None:
    """Move an op that is already built to `device` (TensorFlow has no public way to: this is
    devplace's one use of `Operation._set_device`)."""
    op._set_device(device)  # type: ignore[attr-defined]


def _no_numpy(tensor: object) -> None:
    raise EagerExecutionError(
        f"{getattr(tensor, 'name', 'this tensor')} is a graph tensor: devplace switched "
        "TensorFlow to TF1 graph mode for this process (tf.executing_eagerly() is False), so "
        ".numpy() is not available. Evaluate it with dp.run(sess, tensor), or keep eager "
        "TensorFlow 2 code in a process that does not import devplace (docs/design.md, "
        "'TF2 code')."
    )


_eager_context = _context.context_safe()
if _eager_context is not None and _eager_context._context_handle is not None:
    warnings.warn(
        "eager TensorFlow code already ran in this process; devplace now switches "
        "TensorFlow to TF1 graph mode, so eager code from here on fails (docs/design.md, "
        "'TF2 code')",
        RuntimeWarning,
        stacklevel=user_stacklevel(),
    )

tf = _tensorflow.compat.v1
with _deprecation.silence():
    tf.disable_v2_behavior()
if not RAW_LOG:
    tf.logging.set_verbosity(tf.logging.ERROR)
# tf.layers and tf.nn.rnn_cell from tf_keras; tf.contrib and tf.estimator say what replaced them.
graft(tf)
# A property that raises AttributeError keeps `hasattr(t, "numpy")` False (how libraries tell
# graph tensors from eager ones) while a direct call gets the reason instead of a bare
# "'SymbolicTensor' object has no attribute 'numpy'".
_ops.SymbolicTensor.numpy = property(_no_numpy)

#: TensorFlow's graph and eager-context modules (devplace.bridge.graph_ops builds ops with them).
tf_ops, tf_context = _ops, _context
