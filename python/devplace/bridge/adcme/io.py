"""ADCME's files (src/io.jl) for DevPlace.jl: variables in .mat files, pickles, TensorBoard diaries.

A variable is stored under its name with `:` written `colon` and `/` written `backslash`, as
ADCME does (so `ae_to_code` finds a network's weights). Vectors are stored as columns and 1×1
matrices read back as numbers, as Julia's MAT package does.
"""

from __future__ import annotations

import pickle
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import scipy.io

from devplace.adapter._tf import tf
from devplace.core.atomic import replace_file
from devplace.core.errors import ArgumentValueError

__all__ = [
    "diary_write",
    "file_writer",
    "load_variables",
    "matread",
    "matwrite",
    "pload",
    "psave",
    "save_variables",
    "variable_key",
]


def variable_key(name: str) -> str:
    """ADCME's key for a variable named `name` (`"w:0"` is `"wcolon0"`)."""
    return name.replace(":", "colon").replace("/", "backslash")


def matwrite(path: str, values: dict[str, Any]) -> None:
    """Write `values` to the .mat file `path` (vectors as columns; ".mat" appended if missing,
    as scipy does), atomically."""
    target = path if path.endswith(".mat") else path + ".mat"
    with replace_file(target, "wb") as f:
        scipy.io.savemat(f, {k: np.asarray(v) for k, v in values.items()}, oned_as="column")


def matread(path: str) -> dict[str, Any]:
    """The arrays of the .mat file `path` by name (1×1 matrices as numbers)."""
    if not Path(path).is_file():
        raise ArgumentValueError(
            "matread", "file", path, "an existing .mat file", "save(sess, file)"
        )
    data = scipy.io.loadmat(path)
    return {k: v.item() if v.size == 1 else v for k, v in data.items() if not k.startswith("__")}


def save_variables(
    session: Any, path: str | None, variables: Sequence[Any] | None, feed_dict: Any = None
) -> dict[str, Any]:
    """The values of `variables` (default: the trainable ones) by ADCME key, also written to the
    .mat file `path` unless it is None."""
    variables = list(variables if variables is not None else tf.trainable_variables())
    values = session.run(variables, feed_dict=feed_dict)
    named = {variable_key(v.name): value for v, value in zip(variables, values, strict=True)}
    if path is not None:
        matwrite(path, named)
    return named


def load_variables(
    session: Any,
    source: str | dict[str, Any],
    variables: Sequence[Any] | None,
    feed_dict: Any = None,
) -> list[str]:
    """Assign `variables` (default: the trainable ones) from the .mat file or dict `source`;
    the names of those it does not have (left as they are)."""
    variables = list(variables if variables is not None else tf.trainable_variables())
    values = matread(source) if isinstance(source, str) else source
    ops, missing = [], []
    for v in variables:
        key = variable_key(v.name)
        if key not in values:
            missing.append(v.name)
            continue
        value = np.asarray(values[key], dtype=v.dtype.base_dtype.as_numpy_dtype)
        ops.append(v.assign(value.reshape(v.shape.as_list())))
    session.run(ops, feed_dict=feed_dict)
    return missing


def psave(obj: Any, path: str) -> None:
    """Pickle `obj` into `path` (atomically: a failure leaves an old file whole)."""
    with replace_file(path, "wb") as f:
        pickle.dump(obj, f)


def pload(path: str) -> Any:
    """The object pickled in `path`."""
    with open(path, "rb") as f:
        return pickle.load(f)  # noqa: S301 (ADCME's pload: the user's own file)


def file_writer(logdir: str, suffix: str | None = None) -> Any:
    """A TensorBoard summary writer into `logdir`, with the default graph."""
    return tf.summary.FileWriter(logdir, tf.get_default_graph(), filename_suffix=suffix)


def diary_write(writer: Any, step: int, summaries: Sequence[Any]) -> None:
    """Add serialized summaries (bytes, or arrays of bytes) at `step`, and flush."""
    for s in summaries:
        writer.add_summary(
            bytes(np.asarray(s, dtype=np.uint8)) if not isinstance(s, bytes) else s, step
        )
    writer.flush()
