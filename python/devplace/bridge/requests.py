"""What Julia can ask the host to do: one function per opcode (docs/protocol.md, "Requests").

Each operation takes the decoded argument tuple and returns a Python value; the host encodes it
(by value where possible, else as a handle). Opcode | 0x80 asks for the result as a handle.
"""

from __future__ import annotations

import builtins
import importlib
import os
from collections.abc import Callable
from typing import Any

from devplace.bridge.callbacks import JuliaError

__all__ = ["BY_HANDLE", "OPERATIONS", "ByHandle", "opcode_name"]

BY_HANDLE = 0x80


class ByHandle:
    """A result that must travel as a handle even if it could travel by value."""

    __slots__ = ("obj",)

    def __init__(self, obj: Any) -> None:
        self.obj = obj


def _getattr(obj: Any, name: str) -> Any:
    return getattr(obj, name)


def _setattr(obj: Any, name: str, value: Any) -> None:
    setattr(obj, name, value)


def _call(fn: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None) -> Any:
    return fn(*args, **(kwargs or {}))


def _callmethod(
    obj: Any, name: str, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None
) -> Any:
    return getattr(obj, name)(*args, **(kwargs or {}))


def _getitem(obj: Any, key: Any) -> Any:
    return obj[key]


def _setitem(obj: Any, key: Any, value: Any) -> None:
    obj[key] = value


def _import(name: str) -> Any:
    return importlib.import_module(name)


def _builtin(name: str) -> Any:
    try:
        return getattr(builtins, name)
    except AttributeError:
        raise NameError(f"Python has no builtin named {name!r}") from None


def _enter(manager: Any) -> Any:
    cls = type(manager)
    if not (hasattr(cls, "__enter__") and hasattr(cls, "__exit__")):
        shown = repr(manager)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        raise TypeError(
            f"@pywith needs a Python context manager (with __enter__ and __exit__), got "
            f'{shown} of type {cls.__name__}. Hint: e.g. tf.device("/cpu:0"), '
            "DevPlace.cpu(1), tf.control_dependencies(ops) or a LocalCluster"
        )
    return cls.__enter__(manager)


def _exit(manager: Any, error: tuple[str, str, str] | None) -> bool:
    """Leave a `with` block; `error` is the Julia exception that ended it, if any."""
    exit_ = type(manager).__exit__
    if error is None:
        exit_(manager, None, None, None)
        return False
    exc = JuliaError(*error)
    return bool(exit_(manager, JuliaError, exc, None))


def _is_equal(a: Any, b: Any) -> bool:
    if a is b:
        return True
    try:
        return bool(a == b)
    except Exception:
        return False


def _hash(obj: Any) -> int:
    try:
        return hash(obj) & 0x7FFFFFFFFFFFFFFF
    except TypeError:
        return id(obj)


def _echo(value: Any) -> Any:
    return value


OPERATIONS: dict[int, tuple[str, Callable[..., Any]]] = {
    1: ("getattr", _getattr),
    2: ("setattr", _setattr),
    3: ("call", _call),
    4: ("getitem", _getitem),
    5: ("setitem", _setitem),
    6: ("import", _import),
    7: ("builtin", _builtin),
    8: ("repr", repr),
    9: ("str", str),
    10: ("callmethod", _callmethod),
    11: ("dir", dir),
    12: ("stats", None),  # answered by the host itself (it needs the table)
    13: ("enter", _enter),
    14: ("exit", _exit),
    15: ("echo", _echo),
    16: ("hash", _hash),
    17: ("isequal", _is_equal),
    18: ("len", len),
    19: ("truth", bool),
    20: ("isinstance", isinstance),
    21: ("hasattr", hasattr),
    22: ("pid", lambda: os.getpid()),
}


def opcode_name(op: int) -> str:
    """A readable name for an opcode (for error messages)."""
    entry = OPERATIONS.get(op & ~BY_HANDLE)
    return entry[0] if entry else f"unknown opcode {op}"
