"""The root of devplace's own errors.

Every error devplace raises itself derives from `devplace.Error`, so `except dp.Error` catches
them all. Each also keeps the built-in or TensorFlow type callers already catch
(`DeviceSpecError` is a `ValueError`, `DevicePlacementError` a `tf.errors.InvalidArgumentError`).
"""

__all__ = ["Error"]


class Error(Exception):
    """Base class of every error devplace raises; the message names the input and a next step."""
