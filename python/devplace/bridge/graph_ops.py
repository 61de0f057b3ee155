"""Elementwise ops and scalar constants for DevPlace.jl, built straight into the graph.

TensorFlow's public functions (`tf.sin`, `x * y`, `tf.convert_to_tensor(0.5, dtype)`) reach
`Graph._create_op_internal` through layers that matter only for eager execution, tapes,
dispatch to extension types, op callbacks and dtype promotion: about 80 µs of Python per op
here, against ~45 µs for the graph's own work. Julia's operators come through this module
instead: where none of those layers would act (graph mode, plain tensors of the default graph,
no control-flow context, no op callback or tape, an allowed dtype) it makes the same op with the
same name, attributes and inputs through the graph's own method, so device scopes and functions,
name scopes, control dependencies and colocation apply as they always do; anywhere else it calls
the public function, which then says what is wrong in TensorFlow's own words.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from devplace.adapter._tf import (
    SymbolicTensor,
    control_flow_context,
    create_op,
    op_def,
    plain_graph_mode,
    tf,
)
from devplace.bridge import protocol

__all__ = ["UNARY", "binary", "constant", "unary"]

_COMPLEX = frozenset({tf.complex64, tf.complex128})
_INTEGERS = frozenset(
    {tf.int8, tf.int16, tf.int32, tf.int64, tf.uint8, tf.uint16, tf.uint32, tf.uint64}
)

#: Julia's elementwise functions (protocol.tsv's `unary` rows): the public TF function, the op
#: it makes, and dtypes for which the public function makes something else (complex `abs` and
#: `sign`, integer `round`).
_UNARY_OPS: dict[str, tuple[str, frozenset[Any]]] = {
    name: (op, {"complex": _COMPLEX, "integer": _INTEGERS}.get(other, frozenset()))
    for name, (op, other) in protocol.UNARY.items()
}

#: Python's tensor operators: the op each makes, the name it gives it, and dtypes for which it
#: makes something else (`/` casts integers first).
_BINARY_OPS: dict[str, tuple[str, str, frozenset[Any]]] = {
    "+": ("AddV2", "add", frozenset()),
    "-": ("Sub", "sub", frozenset()),
    "*": ("Mul", "mul", frozenset()),
    "/": ("RealDiv", "truediv", _INTEGERS),
}


def _allowed(op_type: str) -> frozenset[Any]:
    """The dtypes op `op_type`'s type attribute `T` accepts."""
    attr = next(a for a in op_def(op_type).attr if a.name == "T")
    return frozenset(tf.as_dtype(t) for t in attr.allowed_values.list.type)


_TYPE_ATTRS: dict[Any, Any] = {}


def _type_attr(dtype: Any) -> Any:
    attr = _TYPE_ATTRS.get(dtype)
    if attr is None:
        attr = _TYPE_ATTRS[dtype] = tf.AttrValue(type=dtype.as_datatype_enum)
    return attr


def _graph_for(*tensors: Any) -> Any:
    """The default graph, when ops on `tensors` can be made there directly; else None."""
    if not plain_graph_mode():
        return None
    g = tf.get_default_graph()
    if control_flow_context(g) is not None:  # while_loop/cond bodies add ops of their own
        return None
    for t in tensors:
        if type(t) is not SymbolicTensor or t.graph is not g:
            return None
    return g


def _make(g: Any, op_type: str, name: str, inputs: list[Any], dtype: Any) -> Any:
    """What `_apply_op_helper` does for an op with inputs of one type `T`: the op named as
    `name_scope(name)` names it, made by the graph (devices, scopes, dependencies apply)."""
    op = create_op(
        g,
        op_type,
        inputs,
        name=g.unique_name(name) + "/",
        input_types=[dtype] * len(inputs),
        attrs={"T": _type_attr(dtype)},
        op_def=op_def(op_type),
    )
    return op.outputs[0]


def unary(name: str) -> Callable[..., Any]:
    """Julia's `name(x)` for a tensor: `tf.<name>(x)`, made directly where it can be."""
    public = getattr(tf, name)
    op_type, excluded = _UNARY_OPS[name]
    allowed = _allowed(op_type) - excluded

    def elementwise(x: Any, **kwargs: Any) -> Any:
        g = None if kwargs else _graph_for(x)
        if g is None or x.dtype not in allowed:
            return public(x, **kwargs)
        return _make(g, op_type, op_type, [x], x.dtype)

    elementwise.__name__ = elementwise.__qualname__ = name
    elementwise.__doc__ = f"`tf.{name}(x)` as DevPlace.jl builds it (same op, same name)."
    return elementwise


#: `UNARY[name]`: Julia's `sin`, `exp`, ... for tensors.
UNARY: dict[str, Callable[..., Any]] = {name: unary(name) for name in _UNARY_OPS}


def _binary(symbol: str, python_operator: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    op_type, name, excluded = _BINARY_OPS[symbol]
    allowed = _allowed(op_type) - excluded

    def elementwise(a: Any, b: Any) -> Any:
        g = _graph_for(a, b)
        if g is None or a.dtype != b.dtype or a.dtype not in allowed:
            return python_operator(a, b)
        return _make(g, op_type, name, [a, b], a.dtype)

    elementwise.__name__ = elementwise.__qualname__ = name
    elementwise.__doc__ = f"`a {symbol} b` of two tensors as DevPlace.jl builds it."
    return elementwise


def binary(symbol: str, python_operator: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """`python_operator` (`operator.add`, ...) for Julia's `symbol`, made directly where it can
    be; `python_operator` itself for symbols without a direct op."""
    return _binary(symbol, python_operator) if symbol in _BINARY_OPS else python_operator


_CONSTANTS: dict[tuple[Any, type, str], tuple[Any, ...]] = {}
_MAX_CONSTANTS = 4096


def constant(value: Any, dtype: Any) -> Any:
    """`tf.convert_to_tensor(value, dtype=dtype)` of a Python number: a `Const` op named
    "Const", its TensorProto made once per value and dtype."""
    g = _graph_for()
    if g is None or type(value) not in (bool, int, float, complex):
        return tf.convert_to_tensor(value, dtype=dtype)
    key = (dtype, type(value), repr(value))  # repr: -0.0 and 0.0, nan
    attrs = _CONSTANTS.get(key)
    if attrs is None:
        proto = tf.make_tensor_proto(value, dtype=dtype, allow_broadcast=True)
        if len(_CONSTANTS) >= _MAX_CONSTANTS:
            _CONSTANTS.clear()
        attrs = _CONSTANTS[key] = (
            tf.AttrValue(tensor=proto),
            tf.AttrValue(type=proto.dtype),
        )
    tensor_attr, dtype_attr = attrs
    op = create_op(
        g,
        "Const",
        [],
        [dtype_attr.type],
        attrs={"value": tensor_attr, "dtype": dtype_attr},
        name="Const",
    )
    return op.outputs[0]
