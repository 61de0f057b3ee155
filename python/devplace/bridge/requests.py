"""What Julia can ask the host to do: one function per opcode (docs/protocol.md, "Requests").

The opcodes come from `opcodes.tsv` (shared with DevPlace.jl). Each operation takes the decoded
argument tuple and returns a Python value; the host encodes it (by value where possible, else as
a handle). Opcode | 0x80 asks for the result as a handle; opcode | 0x40 lets the operation read
the request's shared arrays in place (`IN_PLACE`).
"""

from __future__ import annotations

import builtins
import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from devplace.bridge import protocol
from devplace.bridge.callbacks import JuliaError

__all__ = [
    "BY_HANDLE",
    "CODES",
    "IN_PLACE",
    "OPCODES",
    "OPERATIONS",
    "ByHandle",
    "opcode_name",
    "read_opcodes",
]

BY_HANDLE = protocol.FLAGS["BY_HANDLE"]
#: The request's shared arrays are read where Julia wrote them, not copied out: Julia keeps them
#: there until the reply. Only for requests whose operation keeps no reference to its arguments
#: (DevPlace.jl's `run`: TensorFlow reads the feeds during the run).
IN_PLACE = protocol.FLAGS["IN_PLACE"]
FLAGS = BY_HANDLE | IN_PLACE


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


def _import(name: str) -> Any:
    return importlib.import_module(name)


def _builtin(name: str) -> Any:
    try:
        return getattr(builtins, name)
    except AttributeError:
        raise NameError(f"Python has no builtin named {name!r}") from None


def _enter(manager: Any, file: str = "", line: int = 0) -> Any:
    """Enter a `with` block that Julia opened at `file:line`: a device scope it opens says it
    was opened there (placement errors name that line for the ops made in it)."""
    cls = type(manager)
    if not (hasattr(cls, "__enter__") and hasattr(cls, "__exit__")):
        shown = repr(manager)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        raise TypeError(
            f"@pywith needs a Python context manager (with __enter__ and __exit__), got "
            f'{shown} of type {cls.__name__}. Hint: e.g. tf.device("/cpu:0"), '
            "DevPlace.cpu(1), tf.control_dependencies(ops) or a LocalCluster"
        )
    if not file or "devplace.adapter._tf" not in sys.modules:  # no TensorFlow: no device scope
        return cls.__enter__(manager)
    from devplace.adapter._tf import mark_device_scope

    return mark_device_scope(lambda: cls.__enter__(manager), file, line)


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


def _switch_task(old: int, new: int) -> None:
    """Julia task `new` makes requests now, after `old`: install its TensorFlow scopes."""
    if "devplace.adapter._tf" in sys.modules:  # else no scope is open yet, and TF stays unloaded
        from devplace.bridge.tasks import switch_task

        switch_task(old, new)


#: The implementation of each request name in `opcodes.tsv`; `stats` is answered by the host.
_IMPLEMENTATIONS: dict[str, Callable[..., Any] | None] = {
    "getattr": _getattr,
    "setattr": _setattr,
    "call": _call,
    "import": _import,
    "builtin": _builtin,
    "repr": repr,
    "str": str,
    "dir": dir,
    "stats": None,
    "enter": _enter,
    "exit": _exit,
    "echo": _echo,
    "hash": _hash,
    "isequal": _is_equal,
    "len": len,
    "isinstance": isinstance,
    "hasattr": hasattr,
    "switch_task": _switch_task,
}


def read_opcodes() -> dict[int, str]:
    """The opcode table, `opcodes.tsv` next to this module: opcode -> request name."""
    text = (Path(__file__).parent / "opcodes.tsv").read_text(encoding="utf-8")
    rows = [line.split("\t") for line in text.splitlines() if line and not line.startswith("#")]
    return {int(row[0]): row[1] for row in rows}


#: Opcode -> (name, function); built from the table, which must name exactly the functions above.
OPCODES = read_opcodes()
if set(OPCODES.values()) != set(_IMPLEMENTATIONS):
    raise ImportError(
        "devplace.bridge: opcodes.tsv and requests.py disagree on "
        f"{sorted(set(OPCODES.values()) ^ set(_IMPLEMENTATIONS))}"
    )
OPERATIONS: dict[int, tuple[str, Callable[..., Any] | None]] = {
    op: (name, _IMPLEMENTATIONS[name]) for op, name in OPCODES.items()
}
CODES: dict[str, int] = {name: op for op, name in OPCODES.items()}


def opcode_name(op: int) -> str:
    """A readable name for an opcode (for error messages)."""
    entry = OPERATIONS.get(op & ~FLAGS)
    return entry[0] if entry else f"unknown opcode {op}"
