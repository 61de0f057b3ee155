"""A fetched numpy array's memory handed to Julia whole, in process: numpy forgets that it owns
the memory, and Julia's array owns it (`unsafe_wrap(...; own=true)`), freed with `free` when
Julia's collector finds the array unused, as it frees its own arrays' memory.

Only where that is right: the array is the one reference to its memory (nothing else in Python
refers to it, it is no view), numpy's default allocator (`malloc`) made that memory, its
elements are one of the wire's dtypes, and it is column-major (one dimension, or Fortran order):
Julia's array is then the same array. And only where the layout of numpy's array struct is the
one read here (`PyArrayObject_fields` in numpy's `ndarraytypes.h`), checked once against
numpy's own view of an array.
"""

from __future__ import annotations

import ctypes
import sys
from typing import Any

import numpy as np

from devplace.bridge import wire

__all__ = ["give"]

#: Byte offsets in `PyArrayObject_fields` (after `PyObject_HEAD`): the data pointer, the flags.
_DATA = 2 * ctypes.sizeof(ctypes.c_void_p)
_FLAGS = 8 * ctypes.sizeof(ctypes.c_void_p)
_OWNDATA = 0x0004  # NPY_ARRAY_OWNDATA


def _handler_name() -> Any:
    try:
        from numpy._core.multiarray import get_handler_name  # numpy 2
    except ImportError:
        try:
            from numpy.core.multiarray import get_handler_name  # numpy 1.22 and later
        except ImportError:
            return None
    return get_handler_name


def _layout_read_right() -> bool:
    """Do `_DATA` and `_FLAGS` read this numpy's arrays as numpy itself does?"""
    owner = np.zeros(4)
    view = owner[1:]
    for a in (owner, view):
        data = ctypes.c_void_p.from_address(id(a) + _DATA).value
        flags = ctypes.c_int.from_address(id(a) + _FLAGS).value
        if data != a.__array_interface__["data"][0] or flags != a.flags.num:
            return False
    return bool(owner.flags.num & _OWNDATA) and not view.flags.num & _OWNDATA


_get_handler_name = _handler_name()
_ENABLED = _get_handler_name is not None and _layout_read_right()


def give(a: np.ndarray[Any, Any]) -> tuple[int, int, tuple[int, ...]] | None:
    """`a`'s memory for Julia to own: (its dtype code, its address, its shape), numpy no longer
    owning it; or None where Julia must not own it (then nothing changed). `a` must be
    referred to by the caller's one variable and nothing else (a fetch's fresh result)."""
    code = wire.CODE_OF.get(a.dtype)  # Julia's element type
    if (
        not _ENABLED
        or code is None
        or sys.getrefcount(a) != 3  # the caller's variable, `a` and getrefcount's argument
        or a.base is not None
        or not a.size
        or not a.flags.owndata
        or not a.flags.writeable
        or not a.flags.f_contiguous
        or _get_handler_name(a) != "default_allocator"
    ):
        return None
    flags = ctypes.c_int.from_address(id(a) + _FLAGS)
    flags.value &= ~_OWNDATA
    return code, ctypes.c_void_p.from_address(id(a) + _DATA).value or 0, a.shape
