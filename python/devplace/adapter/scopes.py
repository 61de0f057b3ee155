"""Device scopes and device functions: where new ops go while a graph is built.

`cpu`, `gpu` and `device` are context managers over TF1's `graph.device`, so TF's nesting rules
hold (the inner scope wins; a function scope is applied on top of the enclosing string scope).
They belong to the thread that opens them: the graph's device stack is made thread-local, and a
new thread starts with no scope open.
The device functions take an `Operation` or a `NodeDef` and return a device string, the
contract of `tf.compat.v1.device(fn)`.
"""

from __future__ import annotations

import contextlib
import inspect
import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from devplace.adapter._tf import tf, thread_local_scope_stacks
from devplace.adapter.devices import MAX_INDEX, DeviceSpecError, canonical_device
from devplace.core.errors import ArgumentTypeError, ArgumentValueError

__all__ = [
    "PS_OPS",
    "DeviceFunction",
    "assign_to_device",
    "by_op_type",
    "cpu",
    "device",
    "gpu",
    "greedy_by_bytes",
    "round_robin",
    "variables_on_cpu",
]

DeviceFunction = Callable[[Any], Any]

#: Variable-like ops that hold state, as `tf.compat.v1.train.replica_device_setter` lists them.
PS_OPS: tuple[str, ...] = (
    "Variable",
    "VariableV2",
    "AutoReloadVariable",
    "VarHandleOp",
    "MutableHashTable",
    "MutableHashTableV2",
    "MutableHashTableOfTensors",
    "MutableHashTableOfTensorsV2",
    "MutableDenseHashTable",
    "MutableDenseHashTableV2",
    "BoostedTreesEnsembleResourceHandleOp",
    "BoostedTreesQuantileStreamResourceHandleOp",
    "ResourceConditionalAccumulator",
    "DecisionTree",
    "TensorForestTreeResourceHandleOp",
    "TensorForestFertileStatsResourceHandleOp",
)


def _op_type(op: Any) -> str:
    """The op type of an `Operation` (`op.type`) or a `NodeDef` (`node.op`)."""
    return op.op if isinstance(op, tf.NodeDef) else op.type


def _node_def(op: Any) -> Any:
    return op if isinstance(op, tf.NodeDef) else op.node_def


def _takes_one_argument(fn: DeviceFunction) -> None:
    """Refuse a device function TensorFlow cannot call with the op alone, naming its signature."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return  # no signature to read (some builtins): a wrong one fails at the call
    try:
        signature.bind(None)
    except TypeError:
        name = getattr(fn, "__qualname__", type(fn).__name__)
        positional = [
            p
            for p in signature.parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
        ]
        takes = (
            f"takes {len(positional) or 'no'} arguments"
            if len(positional) != 1
            else "also needs keyword arguments"
        )
        raise ArgumentTypeError(
            "device",
            "spec_or_fn",
            fn,
            "a device string, a DeviceSpec, or a device function of one argument",
            f"{name}{signature} {takes}; a device function takes one argument, the op, and "
            "returns a device string (def place(op): return '/device:CPU:0')",
        ) from None


def _checked_function(fn: DeviceFunction) -> DeviceFunction:
    """Wrap a user device function so a bad return value names the op and the function."""
    _takes_one_argument(fn)
    name = getattr(fn, "__qualname__", repr(fn))

    def checked(op: Any) -> str:
        result = fn(op)
        if result is None:
            return ""
        try:
            return canonical_device(result)
        except DeviceSpecError as err:
            raise DeviceSpecError(
                result,
                f"device function {name} returned it for op {op.name!r} ({err.problem})",
            ) from None

    checked.__wrapped__ = fn  # type: ignore[attr-defined]
    return checked


@contextlib.contextmanager
def device(spec_or_fn: Any) -> Iterator[None]:
    """Place the ops built inside on a device string, `DeviceSpec`, or device function.

    Strings are checked first, so `/gpu:x` fails here (with `DeviceSpecError`) rather than at
    the first `Session.run`. `None` clears the enclosing device scope, as in TF.
    """
    if spec_or_fn is None:
        target: Any = None
    elif callable(spec_or_fn) and not hasattr(spec_or_fn, "to_string"):
        target = _checked_function(spec_or_fn)
    else:
        target = canonical_device(spec_or_fn)
    graph = tf.get_default_graph()
    thread_local_scope_stacks(graph)
    with graph.device(target):
        yield


def _index(kind: str, i: Any) -> int:
    if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
        device_string = f"dp.device({i!r})" if isinstance(i, str) and ":" in i else ""
        raise ArgumentTypeError(
            kind,
            "i",
            i,
            f"an integer index from 0 to {MAX_INDEX} ({kind}(0) is /device:{kind.upper()}:0)",
            f"{kind}({int(i) if isinstance(i, str) and i.isdigit() else 0})"
            + (f"; a device string goes to {device_string}" if device_string else ""),
        )
    if not 0 <= i <= MAX_INDEX:
        raise DeviceSpecError(
            f"/{kind}:{i}", f"{kind}(i) needs an integer index from 0 to {MAX_INDEX}"
        )
    return int(i)


def cpu(i: int = 0) -> contextlib.AbstractContextManager[None]:
    """Place the ops built inside on `/device:CPU:i`."""
    return device(f"/device:CPU:{_index('cpu', i)}")


def gpu(i: int = 0) -> contextlib.AbstractContextManager[None]:
    """Place the ops built inside on `/device:GPU:i`."""
    return device(f"/device:GPU:{_index('gpu', i)}")


def assign_to_device(
    device: str, ps_device: str = "/device:CPU:0", ps_ops: Iterable[str] = PS_OPS
) -> DeviceFunction:
    """A device function: variable-like ops (`ps_ops`) on `ps_device`, all others on `device`."""
    device, ps_device = canonical_device(device), canonical_device(ps_device)
    ps_types = frozenset(ps_ops)

    def _assign(op: Any) -> str:
        return ps_device if _op_type(op) in ps_types else device

    return _assign


def by_op_type(placements: Mapping[str, str], default: str | None = None) -> DeviceFunction:
    """A device function placing ops by type: `placements[op_type]`, else `default`.

    `default=None` leaves other ops where the enclosing scope puts them.
    """
    if not isinstance(placements, Mapping):
        raise ArgumentTypeError(
            "by_op_type",
            "placements",
            placements,
            "a dict from op type to device",
            "by_op_type({'MatMul': '/gpu:0', 'VariableV2': '/cpu:0'})",
        )
    table = {op_type: canonical_device(d) for op_type, d in placements.items()}
    fallback = None if default is None else canonical_device(default)

    def _by_type(op: Any) -> str | None:
        found = table.get(_op_type(op), fallback)
        return op.device if found is None else found

    return _by_type


def variables_on_cpu(op: Any) -> str:
    """The book's example: variables on `/cpu:0`, every other op on `/gpu:0`."""
    return "/device:CPU:0" if _op_type(op) in PS_OPS else "/device:GPU:0"


def _devices(function: str, devices: Sequence[str] | str) -> list[str]:
    if isinstance(devices, str):
        devices = [devices]
    found = [canonical_device(d) for d in devices]
    if not found:
        raise ArgumentValueError(
            function,
            "devices",
            devices,
            "at least one device",
            "give a list of devices, e.g. ['/cpu:0', '/cpu:1']",
        )
    return found


def round_robin(devices: Sequence[str], ps_ops: Iterable[str] = PS_OPS) -> DeviceFunction:
    """A device function assigning variable-like ops to `devices` in turn.

    Other ops keep the device of the enclosing scope (`replica_device_setter` semantics).
    """
    cycle = itertools.cycle(_devices("round_robin", devices))
    ps_types = frozenset(ps_ops)

    def _round_robin(op: Any) -> str:
        return next(cycle) if _op_type(op) in ps_types else op.device

    return _round_robin


def variable_bytes(op: Any) -> int:
    """Bytes held by a variable-like op, from its `shape` and `dtype` attributes (0 if unknown)."""
    attr = _node_def(op).attr
    if "shape" not in attr or "dtype" not in attr:
        return 0
    shape = tf.TensorShape(attr["shape"].shape)
    if not shape.is_fully_defined():
        return 0
    dtype = tf.as_dtype(attr["dtype"].type).base_dtype
    return int(np.prod(shape.as_list(), dtype=np.int64)) * dtype.size


def greedy_by_bytes(devices: Sequence[str], ps_ops: Iterable[str] = PS_OPS) -> DeviceFunction:
    """A device function putting each variable-like op on the device holding the fewest bytes.

    TF1 contrib's `GreedyLoadBalancingStrategy` with its byte-size load function. Other ops keep
    the enclosing scope's device. The function's `.load` maps device to bytes placed so far.
    """
    load = dict.fromkeys(_devices("greedy_by_bytes", devices), 0)
    ps_types = frozenset(ps_ops)

    def _greedy(op: Any) -> str:
        if _op_type(op) not in ps_types:
            return op.device
        target = min(load, key=load.__getitem__)
        load[target] += variable_bytes(op)
        return target

    _greedy.load = load  # type: ignore[attr-defined]
    return _greedy
