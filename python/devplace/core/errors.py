"""The root of devplace's own errors, and the errors for a bad argument to a function.

Every error devplace raises itself derives from `devplace.Error`, so `except dp.Error` catches
them all. Each also keeps the built-in or TensorFlow type callers already catch
(`DeviceSpecError` is a `ValueError`, `DevicePlacementError` a `tf.errors.InvalidArgumentError`).
"""

import os
import sys
from typing import Any

from devplace.core.formatting import article

__all__ = [
    "ArgumentTypeError",
    "ArgumentValueError",
    "DevplaceWarning",
    "Error",
    "SessionOptionError",
    "SessionOptionTypeError",
    "quoted",
    "user_stacklevel",
]


def quoted(value: Any) -> str:
    """`repr(value)`, shortened when long: a message names its input, it does not dump it."""
    text = repr(value)
    size = len(value) if isinstance(value, str) else len(text)
    return text if size <= 100 else f"{text[:60]}... ({size} characters)"


class Error(Exception):
    """Base class of every error devplace raises; the message names the input and a next step."""


class DevplaceWarning(UserWarning):
    """Base class of every warning devplace issues, so one filter can act on them all."""


class _BadArgument(Error):
    def __init__(self, function: str, argument: str, value: Any, expected: str, hint: str):
        self.argument = argument
        self.value = value
        super().__init__(
            f"{function}: {argument} must be {expected}, got {quoted(value)} "
            f"({article(type(value).__name__)}). Hint: {hint}"
        )


class ArgumentTypeError(_BadArgument, TypeError):
    """An argument of the wrong type; names the function, the argument, expected and found."""


class ArgumentValueError(_BadArgument, ValueError):
    """An argument of the right type but a wrong value; names function, argument and value."""


class SessionOptionError(ArgumentValueError):
    """A Session option with a value it cannot take; names the option, expected, found, hint."""

    def __init__(self, option: str, value: Any, expected: str, hint: str):
        self.option = option
        super().__init__("Session", option, value, expected, hint)


class SessionOptionTypeError(SessionOptionError, TypeError):
    """A Session option given a value of the wrong type (`soft='no'`, `inter=1.5`)."""


def user_stacklevel() -> int:
    """The `stacklevel` naming the caller's first frame outside devplace and the import system."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame, level = sys._getframe(1), 1
    while frame.f_back is not None:
        name = frame.f_code.co_filename
        if "importlib" in name and "_bootstrap" in name:
            frame = frame.f_back  # `warnings` skips these frames itself: not counted
            continue
        if not (name.startswith(package) or os.path.basename(os.path.dirname(name)) == "importlib"):
            break
        frame, level = frame.f_back, level + 1
    return level
