"""TensorFlow, imported once and switched to TF1 graph mode for the whole process.

TF1 behaviour is what the seeds assume: `Variable` builds `VariableV2` ops (not resource
handles), top-level ops go into the default graph, sessions and collections work, and device
functions are accepted by `tf.device`. TensorFlow's execution mode is process-wide, so this is a
visible switch, not a private one. It happens when devplace first needs TensorFlow (the first
`dp.<name>` that uses it; `import devplace` alone loads nothing): from then on
`tf.executing_eagerly()` is False and eager-only calls fail with `EagerExecutionError` saying
why (docs/design.md, "TF2 code").

TensorFlow loads without the Keras it would load at once (0.6 s here): `tf.keras` loads it on
first use. This is the one devplace module that imports TensorFlow, and the one door to TensorFlow's
private parts: other modules reach them through the named functions at its end, and
`INTERNALS` lists every private name those use. TF's C++ log is kept off the console:
`TF_CPP_MIN_LOG_LEVEL` defaults to 2 before TF loads (TF reads it only then), and what TF writes
while loading, before absl's log is initialised and whatever that level says, is captured and
sorted. `DEVPLACE_TF_LOG=1` shows TensorFlow's log as it comes instead.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import re
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from devplace.adapter._fdcapture import capture_fds
from devplace.adapter.tf1_legacy import graft
from devplace.core.errors import Error, user_stacklevel

__all__ = [
    "GPU_MESSAGES",
    "INTERNALS",
    "RAW_LOG",
    "SymbolicTensor",
    "EagerExecutionError",
    "add_control_input",
    "chrome_trace",
    "control_flow_context",
    "create_op",
    "default_graph_stack",
    "default_session_stack",
    "device_scope_sites",
    "driver_present",
    "graph_context_switches",
    "graph_scope_stacks",
    "gpu_lines",
    "hessian_vector_product",
    "in_control_flow",
    "jacobian",
    "kernel_device_types",
    "mark_device_scope",
    "op_def",
    "plain_graph_mode",
    "session_config",
    "set_control_inputs",
    "set_graph_scope_stacks",
    "set_op_device",
    "tf",
    "thread_local_scope_stacks",
    "variable_scope_store",
    "wrapped_module",
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


#: What TensorFlow's import loads of Keras at once (`TF_USE_LEGACY_KERAS` picks the second):
#: Keras' optimizers, so that they register for SavedModel loading, and with them all of Keras
#: and matplotlib's pyplot (0.6 s of TensorFlow's 2.4 s here).
_KERAS_EAGER_LOADS = frozenset({"keras.src.optimizers", "tf_keras.src.optimizers"})


@contextlib.contextmanager
def _keras_on_first_use() -> Iterator[None]:
    """TensorFlow's import without its eager load of Keras: devplace's graphs do not use it, and
    `tf.keras` (TensorFlow's lazy loader) loads all of Keras, optimizers included, on first
    use. TensorFlow imports them with `importlib.import_module` and goes on where that raises
    `ImportError`."""
    import_module = importlib.import_module

    def deferring_keras(name: str, package: str | None = None) -> Any:
        if name in _KERAS_EAGER_LOADS:
            raise ImportError(f"{name}: loaded on first use of tf.keras (devplace)")
        return import_module(name, package)

    importlib.import_module = deferring_keras
    try:
        yield
    finally:
        importlib.import_module = import_module


_loading = None
try:
    # Listing the GPUs here runs cuInit inside the capture (its error on driverless machines
    # would otherwise land on stderr at the first Session) and only enumerates: memory options
    # set later still act. The TF internals devplace uses are imported here too, so that no
    # devplace module loads TensorFlow outside this capture.
    with capture_fds((2,)) as _loading, _keras_on_first_use():
        import tensorflow as _tensorflow
        from tensorflow.python.client import timeline as _timeline
        from tensorflow.python.eager import context as _context
        from tensorflow.python.eager import execute as _execute
        from tensorflow.python.framework import kernels as _kernels
        from tensorflow.python.framework import op_callbacks as _op_callbacks
        from tensorflow.python.framework import op_def_registry as _op_def_registry
        from tensorflow.python.framework import ops as _ops
        from tensorflow.python.framework import stack as _stack
        from tensorflow.python.framework.traceable_stack import TraceableStack as _TraceableStack
        from tensorflow.python.ops import gradients_impl as _gradients_impl
        from tensorflow.python.ops import variable_scope as _variable_scope
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
# A property that raises AttributeError keeps `hasattr(t, "numpy")` False (how libraries tell
# graph tensors from eager ones) while a direct call gets the reason instead of a bare
# "'SymbolicTensor' object has no attribute 'numpy'".
_ops.SymbolicTensor.numpy = property(_no_numpy)

# TensorFlow's private parts: everything below reaches past TensorFlow's public API (private
# attributes, modules under `tensorflow.python`). No other devplace module does
# (tests/test_tf_adapter.py scans for it), so a TensorFlow upgrade is this module's work.

#: Every name from TensorFlow's internals that this module uses, by the module or class that
#: holds it (a class's instance attributes included). tests/test_tf_adapter.py checks that each
#: still resolves on the installed TensorFlow, so an upgrade names at once what it broke.
INTERNALS: dict[str, tuple[str, ...]] = {
    "tensorflow.python.client.session.BaseSession": ("_config", "_call_tf_sessionrun"),
    "tensorflow.python.client.timeline": ("Timeline",),
    "tensorflow.python.eager.context": ("context", "context_safe"),
    "tensorflow.python.eager.context.Context": ("_context_handle", "context_switches"),
    "tensorflow.python.eager.execute": ("must_record_gradient",),
    "tensorflow.python.framework.kernels": ("get_registered_kernels_for_op",),
    "tensorflow.python.framework.op_callbacks": ("should_invoke_op_callbacks",),
    "tensorflow.python.framework.op_def_registry": ("get",),
    "tensorflow.python.framework.ops": (
        "SymbolicTensor",
        "_default_graph_stack",
        "get_default_graph",
        "is_auto_dtype_conversion_enabled",
    ),
    "tensorflow.python.framework.ops.Graph": (
        "_colocation_stack",
        "_control_dependencies_stack",
        "_create_op_internal",
        "_device_function_stack",
        "_get_control_flow_context",
        "_name_stack",
        "_stack_state_is_thread_local",
    ),
    "tensorflow.python.framework.ops.Operation": (
        "_add_control_input",
        "_add_control_inputs",
        "_control_flow_context",
        "_device_assignments",
        "_remove_all_control_inputs",
        "_set_device",
    ),
    "tensorflow.python.framework.stack": ("_default_session_stack",),
    "tensorflow.python.framework.traceable_stack": ("TraceableStack",),
    "tensorflow.python.ops.gradients_impl": ("_hessian_vector_product",),
    "tensorflow.python.ops.parallel_for.gradients": ("jacobian",),
    "tensorflow.python.ops.variable_scope": ("_VARSCOPESTORE_KEY",),
    "tensorflow.python.util.deprecation": ("silence",),
    "tensorflow.python.util.module_wrapper.TFModuleWrapper": ("_tfmw_wrapped_module",),
}

#: The class of graph-mode tensors (`tf.Tensor` in a graph).
SymbolicTensor = _ops.SymbolicTensor

#: A graph's scope stacks (attribute, and how to make it empty): device functions, colocation
#: and control dependencies, which a TF1 graph shares between threads until
#: `thread_local_scope_stacks`, then the name scope, always per thread.
_GRAPH_SCOPE_STACKS: tuple[tuple[str, Callable[[], Any]], ...] = (
    ("_device_function_stack", _TraceableStack),
    ("_colocation_stack", _TraceableStack),
    ("_control_dependencies_stack", list),
    ("_name_stack", str),
)
_SHARED_STACKS = 3


def set_op_device(op: Any, device: str) -> None:
    """Move an op that is already built to `device` (TensorFlow has no public way to)."""
    op._set_device(device)


def add_control_input(op: Any, before: Any) -> None:
    """Make `op` run after the op `before` (a control edge), in a graph already built."""
    op._add_control_input(before)


def set_control_inputs(op: Any, inputs: Sequence[Any]) -> None:
    """Make `inputs` exactly the ops `op` runs after (its control edges)."""
    op._remove_all_control_inputs()
    op._add_control_inputs(inputs)


def in_control_flow(op: Any) -> bool:
    """Whether `op` is inside a TF1 `while_loop` or `cond` body."""
    return op._control_flow_context is not None


def control_flow_context(graph: Any) -> Any:
    """The `while_loop`/`cond` body the graph is building now (None outside any)."""
    return graph._get_control_flow_context()


def plain_graph_mode() -> bool:
    """Whether ops are made now without TensorFlow's eager, op-callback, gradient-tape and
    dtype-promotion layers acting (what `create_op` skips)."""
    return not (
        _context.executing_eagerly()
        or _op_callbacks.should_invoke_op_callbacks()
        or _execute.must_record_gradient()
        or _ops.is_auto_dtype_conversion_enabled()
    )


def create_op(
    graph: Any,
    op_type: str,
    inputs: list[Any],
    dtypes: Any = None,
    *,
    name: str,
    attrs: dict[str, Any],
    input_types: list[Any] | None = None,
    op_def: Any = None,
) -> Any:
    """An op made by `graph`'s own op maker (what TF's public functions end in): device scopes
    and functions, name scopes, control dependencies and colocation apply."""
    return graph._create_op_internal(
        op_type, inputs, dtypes, input_types=input_types, name=name, attrs=attrs, op_def=op_def
    )


def op_def(op_type: str) -> Any:
    """The registered `OpDef` of an op type."""
    return _op_def_registry.get(op_type)


def kernel_device_types(op_type: str) -> frozenset[str]:
    """The device types (`"CPU"`, `"GPU"`, ...) with a kernel registered for `op_type`."""
    return frozenset(k.device_type for k in _kernels.get_registered_kernels_for_op(op_type).kernel)


def chrome_trace(step_stats: Any, graph: Any) -> str:
    """TensorFlow's timeline of a traced run (`RunMetadata.step_stats`) as Chrome-trace JSON,
    with data-flow arrows."""
    timeline = _timeline.Timeline(step_stats, graph=graph)
    return timeline.generate_chrome_trace_format(show_dataflow=True)


def session_config(sess: Any) -> Any:
    """The `ConfigProto` a TF session was made with (None when it was given none)."""
    return getattr(sess, "_config", None)


def hessian_vector_product(ys: Any, xs: list[Any], vs: list[Any], **kwargs: Any) -> list[Any]:
    """The Hessian of `ys` with respect to `xs` times `vs`, without forming the Hessian."""
    return _gradients_impl._hessian_vector_product(ys, xs, vs, **kwargs)


def jacobian(y: Any, x: Any) -> Any:
    """TensorFlow's parallel-for Jacobian of `y` with respect to `x` (loaded on first use)."""
    from tensorflow.python.ops.parallel_for import gradients

    return gradients.jacobian(y, x)


def default_graph_stack() -> Any:
    """This thread's stack of default graphs (`.stack`, a list, and `.get_default()`)."""
    return _ops._default_graph_stack


def default_session_stack() -> Any:
    """This thread's stack of default sessions (`.stack`, a list)."""
    return _stack._default_session_stack


def graph_context_switches() -> Any:
    """This thread's eager context switches (`.stack`, a list): entering a default graph
    pushes one."""
    return _context.context().context_switches


def graph_scope_stacks(graph: Any) -> tuple[Any, ...]:
    """The graph's scope stacks in this thread: device functions, colocation, control
    dependencies and name scope (for `set_graph_scope_stacks`)."""
    return tuple(getattr(graph, name) for name, _ in _GRAPH_SCOPE_STACKS)


def set_graph_scope_stacks(graph: Any, stacks: Sequence[Any] | None) -> None:
    """Install `stacks` (from `graph_scope_stacks`) in the graph for this thread; None: empty
    ones, no scope open."""
    if stacks is None:
        stacks = [make() for _, make in _GRAPH_SCOPE_STACKS]
    for (name, _), value in zip(_GRAPH_SCOPE_STACKS, stacks, strict=True):
        setattr(graph, name, value)


def thread_local_scope_stacks(graph: Any) -> None:
    """Give each thread its own device, colocation and control-dependency stacks.

    TF1 graphs keep one stack for all threads: a scope opened in one thread would place
    another thread's ops, and leaving scopes out of order corrupts it. Thread-local stacks
    (TF2's default) make each scope belong to the thread that opened it. Every thread's stack
    starts as a copy of the shared one at the switch, so switching while plain TF scopes are
    open would hand them to every later thread for good: then the switch waits for a moment
    when none is open.
    """
    if graph._stack_state_is_thread_local:
        return
    if any(getattr(graph, name) for name, _ in _GRAPH_SCOPE_STACKS[:_SHARED_STACKS]):
        return
    graph.switch_to_thread_local()


def mark_device_scope(enter: Callable[[], Any], file: str, line: int) -> Any:
    """`enter()` (a context manager's `__enter__`); a device scope it opens in the default graph
    is recorded as opened at `file:line` (where ops made in it say they were made) instead of
    the Python frame that opened it (a bridge's, for a scope entered from Julia)."""
    graph = _ops.get_default_graph()
    before = next(graph._device_function_stack.peek_traceable_objs(), None)
    value = enter()
    if _ops.get_default_graph() is graph:
        opened = next(graph._device_function_stack.peek_traceable_objs(), None)
        if opened is not None and opened is not before:
            opened.filename, opened.lineno = file, line
    return value


def device_scope_sites(op: Any) -> list[tuple[str, int]]:
    """Where the device scopes open when `op` was made were opened (file, line), innermost
    first."""
    return [(site.filename, site.lineno) for site in op._device_assignments]


def variable_scope_store(graph: Any) -> Any:
    """The graph's variable scope store (`.current_scope`), if it has one yet (TF makes it on
    first use); else None."""
    stores = graph.get_collection(_variable_scope._VARSCOPESTORE_KEY)
    return stores[0] if stores else None


def wrap_session_runs(wrap: Callable[[Callable[..., Any]], Callable[..., Any]]) -> None:
    """Route every TF1 session run of this process (`Session.run`, callables) through
    `wrap(plain)`, which gets TensorFlow's own call (`BaseSession._call_tf_sessionrun`, with the
    session and its arguments) and returns the one to use instead."""
    from tensorflow.python.client import session

    session.BaseSession._call_tf_sessionrun = wrap(session.BaseSession._call_tf_sessionrun)


def wrapped_module(module: Any) -> Any:
    """The module a TensorFlow module wrapper (what `tf.compat.v1` is) stands for; `module`
    itself when it is not a wrapper."""
    return getattr(module, "_tfmw_wrapped_module", module)


# tf.layers and tf.nn.rnn_cell from tf_keras; tf.contrib and tf.estimator say what replaced them.
graft(tf, wrapped_module(tf))
